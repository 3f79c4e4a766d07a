# `reboot -f` in the guest: vmlet exits 3 (rebooted) under runStrategy Once.
# Shape: 3 sockets of one core, Intel CPUID.
SHAPE=3,1,1 MEM=256Mi VENDOR=intel L2_END=reboot EXPECT_EXIT=3
