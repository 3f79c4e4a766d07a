# The oracle for e1000e: QEMU -enable-kvm -M q35 with -device e1000e on its
# user network in the same L1, the same generic kernel and driver (the
# scenario's parts are e1000e.sh's: on the host, in L1 and in L2)
GROUP=devices # tests/sh/nested_devices.sh
. "${sdir:-/nested/scenarios}/e1000e.sh"
VMM=qemu COMPARE=e1000e
