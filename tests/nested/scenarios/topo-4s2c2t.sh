# 16 vCPUs: 4 sockets x 2 cores x 2 threads.
SHAPE=4,2,2 MEM=384Mi
