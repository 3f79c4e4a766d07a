# issue 12 hunt: 6 vCPUs, 3 cores x 2 threads (topo-1s3c2t triple-faulted at power-off), under vmlet
SHAPE=1,3,2 MEM=256Mi TIMEBOX=120
