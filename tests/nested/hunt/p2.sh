# issue 12 hunt: the plain 2-vCPU guest of the original exit 4 (no devices), under vmlet
SHAPE=1,2,1 MEM=512Mi TIMEBOX=120
