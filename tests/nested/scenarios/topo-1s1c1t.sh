# One vCPU: the smallest shape (no MADT sibling at all).
SHAPE=1,1,1 MEM=256Mi
