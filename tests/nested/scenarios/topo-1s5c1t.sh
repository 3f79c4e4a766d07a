# Five cores in one socket.
SHAPE=1,5,1 MEM=256Mi
