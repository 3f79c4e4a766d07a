// SPDX-License-Identifier: MIT
/* q35: what OVMF's PlatformPei reads and writes on the MCH and the ICH9
 * LPC bridge (IDs through both config mechanisms and the second ECAM
 * window, PMBASE / ACPI_CNTL / PCIEXBAR / RCBA written and read back,
 * read-only bits), and the ACPI PM timer: its 3.579545 MHz count, 24-bit
 * wrap, and the port. */
#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/dev/q35.h"
#include "vmm/snapshot/snap_buf.h"

static uint32_t q35_ecam_rd(int slot, uint32_t off, uint32_t len)
{
	return mmio_rd(ARCH_Q35_ECAM_GPA + ((uint64_t)slot << 15) + off, len);
}

static void q35_ecam_wr(int slot, uint32_t off, uint32_t v, uint32_t len)
{
	mmio_wr(ARCH_Q35_ECAM_GPA + ((uint64_t)slot << 15) + off, v, len);
}

static void test_chipset(void)
{
	struct pci_host h;
	struct q35 *q;

	tbus_n = 0;
	CHECK(thost_init(&h, NULL) == 0);
	CHECK(q35_create(&q, &h, &tbus_pio) == 0);
	/* MCH and LPC through vmlet's ECAM and the one OVMF programs */
	CHECK_EQ_U64(ecam_rd(0, 0, 4), 0x29c08086);
	CHECK_EQ_U64(q35_ecam_rd(0, 0, 4), 0x29c08086);
	CHECK_EQ_U64(q35_ecam_rd(Q35_LPC_SLOT, 0, 4), 0x29188086);
	CHECK_EQ_U64(q35_ecam_rd(Q35_LPC_SLOT, 0x08, 4) >> 8, 0x060100);      /* ISA bridge */
	CHECK_EQ_U64(q35_ecam_rd(1, 0, 4), 0xffffffff);			      /* empty slot */
	CHECK_EQ_U64(mmio_rd(ARCH_Q35_ECAM_GPA + (1u << 20), 4), 0xffffffff); /* bus 1 */
	/* PlatformMiscInitialization: ACPI_EN clear -> PMBASE, IOSE, ACPI_EN */
	CHECK_EQ_U64(q35_ecam_rd(Q35_LPC_SLOT, Q35_ACPI_CNTL, 1) & 0x80, 0);
	CHECK_EQ_U64(q35_ecam_rd(Q35_LPC_SLOT, Q35_PMBASE, 4), 1);
	q35_ecam_wr(Q35_LPC_SLOT, Q35_PMBASE, 0x601, 4);
	q35_ecam_wr(Q35_LPC_SLOT, PCI_COMMAND, 1, 1);
	q35_ecam_wr(Q35_LPC_SLOT, Q35_ACPI_CNTL, 0x80, 1);
	CHECK_EQ_U64(ecam_rd(Q35_LPC_SLOT, Q35_PMBASE, 4), 0x601);
	CHECK_EQ_U64(ecam_rd(Q35_LPC_SLOT, Q35_ACPI_CNTL, 1), 0x80);
	q35_ecam_wr(Q35_LPC_SLOT, Q35_PMBASE, 0xffffffff, 4); /* bits 6:1 and 31:16 fixed */
	CHECK_EQ_U64(ecam_rd(Q35_LPC_SLOT, Q35_PMBASE, 4), 0xff81);
	q35_ecam_wr(Q35_LPC_SLOT, Q35_RCBA, 0xfed1c001, 4);
	CHECK_EQ_U64(ecam_rd(Q35_LPC_SLOT, Q35_RCBA, 4), 0xfed1c001);
	q35_ecam_wr(Q35_LPC_SLOT, 0x60, 0x0b0a0b0a, 4); /* PIRQ routing */
	CHECK_EQ_U64(ecam_rd(Q35_LPC_SLOT, 0x60, 4), 0x0b0a0b0a);
	/* PciExBarInitialization: low 0, high, low | size | enable */
	q35_ecam_wr(0, Q35_PCIEXBAR, 0, 4);
	q35_ecam_wr(0, Q35_PCIEXBAR + 4, 0, 4);
	q35_ecam_wr(0, Q35_PCIEXBAR, (uint32_t)ARCH_Q35_ECAM_GPA | 1, 4);
	CHECK_EQ_U64(ecam_rd(0, Q35_PCIEXBAR, 4), ARCH_Q35_ECAM_GPA | 1);
	q35_ecam_wr(0, 0x00, 0x12345678, 4); /* IDs are read-only */
	CHECK_EQ_U64(ecam_rd(0, 0, 4), 0x29c08086);
	q35_destroy(q);
	CHECK_EQ_U64(ecam_rd(Q35_LPC_SLOT, 0, 4), 0xffffffff);
	pci_host_release(&h);
	CHECK_EQ_U64(tbus_n, 0);
}

static void test_pm_timer(void)
{
	struct pci_host h;
	struct q35 *q;
	uint32_t a = 0, b = 0;

	CHECK_EQ_U64(q35_pm_timer(0, 0), 0);
	CHECK_EQ_U64(q35_pm_timer(5, 1000000005ull), 3579545);
	CHECK_EQ_U64(q35_pm_timer(0, 1000), 3); /* 3.58 ticks per us */
	CHECK_EQ_U64(q35_pm_timer(0, 4000000000ull), (3579545ull * 4) & 0xffffff); /* wraps */
	CHECK(q35_pm_timer(0, 1ull << 62) <= 0xffffff);
	tbus_n = 0;
	CHECK(thost_init(&h, NULL) == 0);
	CHECK(q35_create(&q, &h, &tbus_pio) == 0);
	tbus_access(&tbus_pio, ARCH_PM_TMR_PORT, &a, 4, 0);
	for (int i = 0; i < 1000000 && b == a; i++)
		tbus_access(&tbus_pio, ARCH_PM_TMR_PORT, &b, 4, 0);
	CHECK(b != a && a <= 0xffffff && b <= 0xffffff); /* it counts */
	q35_destroy(q);
	pci_host_release(&h);
}

/* Snapshot: the MCH's and LPC's registers (the PCI functions' config
 * space) and the PM timer's count come back in a new chipset; a count
 * the timer cannot hold and a read-only byte changed are refused. */
static void test_snapshot(void)
{
	static const uint32_t cnt[] = {0, 1, 3579545, 0xfffffe, 0xffffff};
	static const uint64_t now[] = {0, 999, 1000000000ull, 1ull << 40, ~0ull};
	struct snap_buf b = {0};
	struct snap_cur c;
	struct pci_host h;
	struct q35 *q;
	uint32_t bad = 0x1000000;

	for (unsigned int i = 0; i < 5; i++)
		for (unsigned int j = 0; j < 5; j++)
			CHECK_EQ_U64(q35_pm_timer(q35_pm_timer_start(cnt[i], now[j]), now[j]),
				     cnt[i]);
	tbus_n = 0;
	CHECK(thost_init(&h, NULL) == 0);
	CHECK(q35_create(&q, &h, &tbus_pio) == 0);
	q35_ecam_wr(0, Q35_PCIEXBAR, (uint32_t)ARCH_Q35_ECAM_GPA | 1, 4);
	q35_ecam_wr(0, 0x90, 0x33333330, 4); /* PAM0-3 */
	q35_ecam_wr(0, 0x9d, 0x0a, 1);	     /* SMRAM */
	q35_ecam_wr(Q35_LPC_SLOT, Q35_PMBASE, 0x601, 4);
	pci_dev_save(&h.bridge, &b);
	pci_dev_save(q35_lpc_dev(q), &b);
	q35_save(q, &b);
	CHECK(b.err == 0);
	q35_destroy(q);
	pci_host_release(&h);
	tbus_n = 0;
	CHECK(thost_init(&h, NULL) == 0);
	CHECK(q35_create(&q, &h, &tbus_pio) == 0);
	CHECK_EQ_U64(ecam_rd(0, 0x90, 4), 0);
	c = snap_cur_make(b.p, b.len);
	CHECK(pci_dev_load(&h, &h.bridge, &c) == 0);
	CHECK(pci_dev_load(&h, q35_lpc_dev(q), &c) == 0);
	CHECK(q35_load(q, &c) == 0);
	CHECK_EQ_U64(ecam_rd(0, Q35_PCIEXBAR, 4), ARCH_Q35_ECAM_GPA | 1);
	CHECK_EQ_U64(ecam_rd(0, 0x90, 4), 0x33333330);
	CHECK_EQ_U64(ecam_rd(0, 0x9d, 1), 0x0a);
	CHECK_EQ_U64(ecam_rd(Q35_LPC_SLOT, Q35_PMBASE, 4), 0x601);
	/* planted: a count past 24 bits; the LPC's device ID changed */
	memcpy(b.p + b.len - 4, &bad, 4);
	c = snap_cur_make(b.p + b.len - 12, 12);
	CHECK_EQ_U64(q35_load(q, &c), -EBADMSG);
	c = snap_cur_make(b.p, b.len);
	CHECK(pci_dev_load(&h, &h.bridge, &c) == 0);
	b.p[(size_t)(c.p - b.p) + 8 + PCI_DEVICE_ID] ^= 1;
	CHECK(pci_dev_load(&h, q35_lpc_dev(q), &c) < 0);
	CHECK_EQ_U64(ecam_rd(Q35_LPC_SLOT, 0, 4), 0x29188086);
	snap_buf_release(&b);
	q35_destroy(q);
	pci_host_release(&h);
}

int main(void)
{
	TEST_RUN(test_chipset);
	TEST_RUN(test_pm_timer);
	TEST_RUN(test_snapshot);
	return test_summary();
}
