// SPDX-License-Identifier: MIT
/* PCI configuration mechanism #1 (ports 0xcf8/0xcfc) through the port bus,
 * cross-checked against ECAM: the same registers, sub-dword data ports,
 * writes seen through the other path, the address latch, and what a
 * disabled or out-of-range address reads (all ones, writes dropped), and
 * the extended space no function has. */
#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/virtio/virtio_rng.h"

#define CF8 0xcf8

static uint32_t cf8_addr(int bus, int slot, int fn, uint32_t reg)
{
	return 0x80000000u | (uint32_t)bus << 16 | (uint32_t)slot << 11 | (uint32_t)fn << 8 |
	       (reg & 0xfc);
}

static uint32_t pio_rd(uint16_t port, uint32_t len)
{
	uint32_t v = 0;

	tbus_access(&tbus_pio, port, &v, len, 0);
	return v;
}

static void pio_wr(uint16_t port, uint32_t v, uint32_t len)
{
	tbus_access(&tbus_pio, port, &v, len, 1);
}

static uint32_t cf8_rd(int bus, int slot, int fn, uint32_t reg, uint32_t len)
{
	pio_wr(CF8, cf8_addr(bus, slot, fn, reg), 4);
	return pio_rd((uint16_t)(0xcfc + (reg & 3)), len);
}

static void cf8_wr(int slot, uint32_t reg, uint32_t v, uint32_t len)
{
	pio_wr(CF8, cf8_addr(0, slot, 0, reg), 4);
	pio_wr((uint16_t)(0xcfc + (reg & 3)), v, len);
}

static void test_cf8_matches_ecam(void)
{
	struct pci_host h;
	struct tdrv d;
	struct virtio_rng *rng;

	tbus_n = 0;
	tdrv_init(&d, 1 << 20, 16);
	CHECK(thost_init(&h, &d.mem) == 0);
	CHECK(virtio_rng_create(&rng, &h, 0, 0) == 0);

	/* every dword of the first 256 bytes of both functions and of an
	 * empty slot reads the same through both mechanisms */
	for (int slot = 0; slot < 3; slot++)
		for (uint32_t reg = 0; reg < 256; reg += 4)
			CHECK_EQ_U64(cf8_rd(0, slot, 0, reg, 4), ecam_rd(slot, reg, 4));
	CHECK_EQ_U64(cf8_rd(0, 0, 0, 0, 4), 0x00081b36); /* host bridge */
	CHECK_EQ_U64(cf8_rd(0, 1, 0, 0, 4), 0x10441af4); /* virtio-rng */
	CHECK_EQ_U64(cf8_rd(0, 2, 0, 0, 4), 0xffffffff); /* nothing there */
	/* byte and word reads through 0xcfd..0xcff */
	CHECK_EQ_U64(cf8_rd(0, 1, 0, 2, 2), 0x1044);
	CHECK_EQ_U64(cf8_rd(0, 1, 0, 0x0b, 1), ecam_rd(1, 0x0b, 1)); /* class */
	CHECK_EQ_U64(cf8_rd(0, 1, 0, 0x09, 1), ecam_rd(1, 0x09, 1));
	/* the address latch reads back as written */
	pio_wr(CF8, cf8_addr(0, 1, 0, 0x10), 4);
	CHECK_EQ_U64(pio_rd(CF8, 4), cf8_addr(0, 1, 0, 0x10));

	/* a write through 0xcfc is what ECAM then reads, and back */
	CHECK_EQ_U64(ecam_rd(1, PCI_COMMAND, 2) & PCI_COMMAND_MEMORY, 0);
	cf8_wr(1, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
	CHECK_EQ_U64(ecam_rd(1, PCI_COMMAND, 2) & 7, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	ecam_wr(1, 0x3c, 0x5a, 1); /* interrupt line: a plain r/w byte */
	CHECK_EQ_U64(cf8_rd(0, 1, 0, 0x3c, 1), 0x5a);
	cf8_wr(1, 0x3c, 0xa5, 1);
	CHECK_EQ_U64(ecam_rd(1, 0x3c, 1), 0xa5);
	/* BAR sizing through the ports agrees with the ECAM view */
	uint32_t bar = ecam_rd(1, PCI_BASE_ADDRESS_0, 4);
	cf8_wr(1, PCI_BASE_ADDRESS_0, 0xffffffff, 4);
	CHECK_EQ_U64(ecam_rd(1, PCI_BASE_ADDRESS_0, 4) & ~0xfu, ~(VIRTIO_PCI_BAR_SIZE - 1));
	cf8_wr(1, PCI_BASE_ADDRESS_0, bar, 4);
	CHECK_EQ_U64(cf8_rd(0, 1, 0, PCI_BASE_ADDRESS_0, 4), bar);

	/* enable bit clear, another bus, another function: all ones, and
	 * writes there change nothing */
	pio_wr(CF8, cf8_addr(0, 1, 0, 0) & 0x7fffffff, 4);
	CHECK_EQ_U64(pio_rd(0xcfc, 4), 0xffffffff);
	pio_wr(CF8, cf8_addr(0, 1, 0, 0x3c) & 0x7fffffff, 4);
	pio_wr(0xcfc, 0x11, 1);
	CHECK_EQ_U64(ecam_rd(1, 0x3c, 1), 0xa5);
	CHECK_EQ_U64(cf8_rd(1, 1, 0, 0, 4), 0xffffffff);
	CHECK_EQ_U64(cf8_rd(0, 1, 3, 0, 4), 0xffffffff);
	pio_wr(CF8, cf8_addr(0, 1, 3, 0x3c), 4);
	pio_wr(0xcfc, 0x22, 1);
	CHECK_EQ_U64(ecam_rd(1, 0x3c, 1), 0xa5);
	/* a misaligned data access (word at 0xcfd) is refused */
	pio_wr(CF8, cf8_addr(0, 1, 0, 0), 4);
	CHECK_EQ_U64(pio_rd(0xcfd, 2), 0xffff);
	/* a byte write to the latch port does not change the latch */
	pio_wr(CF8, cf8_addr(0, 1, 0, 0x10), 4);
	pio_wr(CF8, 0, 1);
	CHECK_EQ_U64(pio_rd(CF8, 4), cf8_addr(0, 1, 0, 0x10));

	virtio_rng_destroy(rng);
	pci_host_release(&h);
	tdrv_release(&d);
}

/* Every function is a conventional one: no extended config space. ECAM
 * reads of 0x100..0xfff are all ones (as QEMU's), so that Linux sizes the
 * host bridge's space as 256 bytes (pci_cfg_space_size_ext() takes a 0 at
 * 0x100 for an extended space, and then probes it for extended
 * capabilities, one guest exit each); writes there change nothing. */
static void test_no_extended_space(void)
{
	struct pci_host h;
	struct tdrv d;
	struct virtio_rng *rng;

	tbus_n = 0;
	tdrv_init(&d, 1 << 20, 16);
	CHECK(thost_init(&h, &d.mem) == 0);
	CHECK(virtio_rng_create(&rng, &h, 0, 0) == 0);

	for (int slot = 0; slot < 3; slot++) {
		CHECK_EQ_U64(ecam_rd(slot, 0x100, 4), 0xffffffff);
		CHECK_EQ_U64(ecam_rd(slot, 0x100, 2), 0xffff);
		CHECK_EQ_U64(ecam_rd(slot, 0x101, 1), 0xff);
		CHECK_EQ_U64(ecam_rd(slot, 0xffc, 4), 0xffffffff);
	}
	ecam_wr(1, 0x100, 0, 4);
	CHECK_EQ_U64(ecam_rd(1, 0x100, 4), 0xffffffff);
	/* the conventional space is unchanged: the last dword still reads */
	CHECK_EQ_U64(ecam_rd(0, 0xfc, 4), cf8_rd(0, 0, 0, 0xfc, 4));
	CHECK_EQ_U64(ecam_rd(1, 0, 4), 0x10441af4);

	virtio_rng_destroy(rng);
	pci_host_release(&h);
	tdrv_release(&d);
}

int main(void)
{
	TEST_RUN(test_cf8_matches_ecam);
	TEST_RUN(test_no_extended_space);
	return test_summary();
}
