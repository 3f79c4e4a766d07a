# 2 sockets x 3 cores, AMD: APIC IDs 0-2 and 4-6.
SHAPE=2,3,1 MEM=256Mi
