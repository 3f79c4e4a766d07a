# issue 12 hunt: v4 under QEMU -enable-kvm -M q35 in the same L1
SHAPE=2,2,1 MEM=256Mi TIMEBOX=120 VMM=qemu COMPARE=v4
