# `reboot -f` in the guest: vmlet exits 3 (rebooted) under runStrategy Once.
# Shape: 3 sockets of one core, Intel CPUID; 5 GiB, so RAM above the PCI
# hole too (e820 and MemTotal).
SHAPE=3,1,1 MEM=5Gi VENDOR=intel L2_END=reboot EXPECT_EXIT=3
