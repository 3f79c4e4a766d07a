# The oracle for topo-2s3c2t-intel: QEMU -enable-kvm in the same L1, vendor GenuineIntel.
SHAPE=2,3,2 MEM=512Mi VENDOR=intel VMM=qemu COMPARE=topo-2s3c2t-intel
