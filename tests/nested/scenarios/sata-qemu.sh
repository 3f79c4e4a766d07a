# The oracle for sata: the same disks under QEMU -enable-kvm -M q35 (ICH9
# AHCI, ide-hd) in the same L1, the same generic kernel (the scenario's
# parts are sata.sh's, in the same folder: on the host, in L1 and in L2)
GROUP=devices # tests/sh/nested_devices.sh
. "${sdir:-/nested/scenarios}/sata.sh"
VMM=qemu COMPARE=sata
