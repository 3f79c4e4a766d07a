# issue 12 hunt: 4 vCPUs, 2 sockets x 2 cores, under vmlet
SHAPE=2,2,1 MEM=256Mi TIMEBOX=120
