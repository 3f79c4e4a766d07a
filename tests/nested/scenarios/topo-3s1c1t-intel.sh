# Three sockets of one core, Intel CPUID.
SHAPE=3,1,1 MEM=256Mi VENDOR=intel
