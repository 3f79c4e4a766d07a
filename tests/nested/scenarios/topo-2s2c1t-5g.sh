# Over 4 GiB: RAM above the PCI hole (e820 and MemTotal), 2 sockets x 2 cores.
SHAPE=2,2,1 MEM=5Gi
