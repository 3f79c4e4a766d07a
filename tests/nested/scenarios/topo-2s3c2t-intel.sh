# 2 sockets x 3 cores x 2 threads: 12 vCPUs, APIC IDs with holes (0-5, 8-13), Intel CPUID.
SHAPE=2,3,2 MEM=512Mi VENDOR=intel
