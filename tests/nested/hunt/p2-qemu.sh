# issue 12 hunt: p2 under QEMU -enable-kvm -M q35 in the same L1
SHAPE=1,2,1 MEM=512Mi TIMEBOX=120 VMM=qemu COMPARE=p2
