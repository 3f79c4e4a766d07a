# issue 12 hunt: 6 vCPUs under QEMU -enable-kvm -M q35 (2 sockets x 3 cores: TCG's EPYC has no
# TOPOEXT, so QEMU cannot show AMD threads)
SHAPE=2,3,1 MEM=256Mi TIMEBOX=120 VMM=qemu
