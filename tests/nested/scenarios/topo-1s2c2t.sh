# One socket, 2 cores x 2 threads.
SHAPE=1,2,2 MEM=256Mi
