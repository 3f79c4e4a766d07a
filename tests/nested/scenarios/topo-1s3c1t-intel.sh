# Three cores (not a power of two), Intel CPUID (leaf 0xb) on an AMD host.
SHAPE=1,3,1 MEM=256Mi VENDOR=intel
