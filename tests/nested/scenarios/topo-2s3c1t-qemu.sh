# The oracle for topo-2s3c1t: QEMU -enable-kvm -M microvm in the same L1.
SHAPE=2,3,1 MEM=256Mi VMM=qemu QEMU_MACHINE=microvm COMPARE=topo-2s3c1t
