# The oracle for tpm-tis: QEMU -enable-kvm -M q35 with -device tpm-tis on
# swtpm (-tpmdev emulator) in the same L1, the same cloud kernel and its
# tpm_tis (the scenario's parts are tpm-tis.sh's)
GROUP=devices # tests/sh/nested_devices.sh
. "${sdir:-/nested/scenarios}/tpm-tis.sh"
VMM=qemu COMPARE=tpm-tis
