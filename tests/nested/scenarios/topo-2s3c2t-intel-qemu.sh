# The oracle for topo-2s3c2t-intel: QEMU -enable-kvm -M microvm in the same L1, vendor GenuineIntel.
SHAPE=2,3,2 MEM=512Mi VENDOR=intel VMM=qemu QEMU_MACHINE=microvm COMPARE=topo-2s3c2t-intel
