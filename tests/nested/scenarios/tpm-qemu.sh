# The oracle for tpm: QEMU -enable-kvm -M q35 with -device tpm-crb on swtpm
# (-tpmdev emulator) in the same L1, the same cloud kernel and its tpm_crb
# (the scenario's parts are tpm.sh's: on the host, in L1 and in L2)
GROUP=devices # tests/sh/nested_devices.sh
. "${sdir:-/nested/scenarios}/tpm.sh"
VMM=qemu COMPARE=tpm
