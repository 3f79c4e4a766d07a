# 3 cores x 2 threads, AMD: six vCPUs. (QEMU -cpu host is no oracle for AMD threads
# here: the emulated EPYC of L1 has no TOPOEXT, so its L2 sees no SMT siblings.)
SHAPE=1,3,2 MEM=256Mi
