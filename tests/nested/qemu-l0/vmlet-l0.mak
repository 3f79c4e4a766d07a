# The devices of tests/nested's L0 (scripts/build-qemu-l0: --without-default-devices
# --with-devices-x86_64=vmlet-l0): L1 is a q35 with a virtio-blk disk, virtio-9p
# shares (tests/nested/run-tests) and the serial console (q35 selects it), so
# the build leaves out every other card, about a third of QEMU's objects.
CONFIG_Q35=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_BLK=y
CONFIG_VIRTIO_9P=y
# (q35's ACPI builder links the CXL host code, which only CXL builds: without
# it the link fails, cxl_fmws_get_all_sorted undefined, in 10.2.2; CXL needs PXB,
# its mailbox code the type 3 device, its root port (cxl-rp) PCIE_PORT)
CONFIG_PXB=y
CONFIG_CXL=y
CONFIG_CXL_MEM_DEVICE=y
CONFIG_PCIE_PORT=y
