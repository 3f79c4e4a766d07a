# The oracle for topo-2s3c1t: QEMU -enable-kvm in the same L1.
SHAPE=2,3,1 MEM=256Mi VMM=qemu COMPARE=topo-2s3c1t
