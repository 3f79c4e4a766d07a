// SPDX-License-Identifier: MIT
/*
 * nic_e1000e_test.c - the 82574L's registers and interrupts without KVM
 * (nic_e1000e_env.h): PCI IDs, the EEPROM (MAC, checksum 0xBABA), the PHY
 * behind MDIC, a software reset keeping the MAC; MSI-X through IVAR with
 * auto-clear, link down, clear-on-read ICR; interrupt moderation (EITR).
 * TX is in nic_e1000e_tx_test.c, RX in nic_e1000e_rx_test.c.
 */
#include "tests/unit/nic_e1000e_env.h"

static void test_ids_eeprom_phy(void)
{
	struct env v;
	uint16_t sum = 0, w[64];
	uint32_t m;

	env_init(&v);
	CHECK_EQ_U64(ecam_rd(v.slot, 0, 4), 0x10d38086);
	CHECK_EQ_U64(ecam_rd(v.slot, PCI_SUBSYSTEM_VENDOR_ID, 4), 0x00008086);
	CHECK_EQ_U64(ecam_rd(v.slot, PCI_CLASS_REVISION, 4) >> 8, 0x020000);
	CHECK(v.msix_cap != 0);
	CHECK_EQ_U64(ecam_rd(v.slot, v.msix_cap + 2, 2) & PCI_MSIX_FLAGS_QSIZE, 4); /* 5 */
	for (unsigned int i = 0; i < 64; i++) {
		wr(&v, E_EERD, i << 2 | EERD_START);
		m = rd(&v, E_EERD);
		CHECK(m & EERD_DONE);
		w[i] = (uint16_t)(m >> 16);
		sum = (uint16_t)(sum + w[i]);
	}
	CHECK_EQ_U64(sum, 0xBABA);
	CHECK_EQ_U64(w[0], 0x1102);
	CHECK_EQ_U64(w[2], 0x5544);
	CHECK_EQ_U64(rd(&v, E_RAL0), 0x33221102);
	CHECK_EQ_U64(rd(&v, E_RAH0), 0x80005544);
	CHECK(rd(&v, E_STATUS) & STATUS_LU);
	/* PHY at address 1: the 82574's ID, link up, autoneg complete */
	wr(&v, E_MDIC, MDIC_OP_READ | 1u << 21 | 2u << 16);
	m = rd(&v, E_MDIC);
	CHECK((m & MDIC_READY) && !(m & MDIC_ERROR));
	CHECK_EQ_U64(m & 0xffff, 0x0141);
	wr(&v, E_MDIC, MDIC_OP_READ | 1u << 21 | 3u << 16);
	CHECK_EQ_U64(rd(&v, E_MDIC) & 0xffff, 0x0cb1);
	wr(&v, E_MDIC, MDIC_OP_READ | 1u << 21 | 1u << 16);
	CHECK_EQ_U64(rd(&v, E_MDIC) & 0x24, 0x24);
	wr(&v, E_MDIC, MDIC_OP_READ | 2u << 21 | 1u << 16); /* no PHY there */
	CHECK(rd(&v, E_MDIC) & MDIC_ERROR);
	/* a software reset keeps the MAC in RAR0 */
	wr(&v, E_RAL0, 0);
	wr(&v, E_CTRL, CTRL_RST);
	CHECK_EQ_U64(rd(&v, E_RAL0), 0x33221102);
	env_fini(&v);
}
static void test_msix_and_link(void)
{
	struct env v;
	struct e1000e *e;
	uint32_t m;

	env_init(&v);
	e = v.e;
	for (unsigned int i = 0; i < 5; i++) {
		mmio_wr(v.bar3 + 16 * i, 0xfee00000u, 4);
		mmio_wr(v.bar3 + 16 * i + 8, 0x40 + i, 4);
		mmio_wr(v.bar3 + 16 * i + 12, 0, 4);
	}
	ecam_wr(v.slot, v.msix_cap + 2, PCI_MSIX_FLAGS_ENABLE, 2);
	/* Linux's e1000_configure_msix: rx0 -> 0, tx0 -> 1, other -> 2 */
	wr(&v, E_IVAR, 0x8 | 0x9 << 8 | 0xa << 16 | 1u << 31);
	wr(&v, E_EIAC, ICR_RXQ0 | ICR_TXQ0);
	wr(&v, E_IAM, ~(0x1fu << 20) | ICR_OTHER);
	wr(&v, E_CTRL_EXT, rd(&v, E_CTRL_EXT) | CTRL_EXT_EIAME);
	wr(&v, E_IMS, ICR_RXQ0 | ICR_TXQ0 | ICR_OTHER | ICR_LSC | ICR_RXT0 | ICR_TXDW);
	CHECK_EQ_U64(e->msix_sent, 0);
	wr(&v, E_ICS, ICR_RXT0);
	CHECK_EQ_U64(e->msix_sent, 1);
	CHECK(!(rd(&v, E_ICS) & ICR_RXQ0)); /* auto-cleared (EIAC) */
	/* link down: LSC on the "other" vector, which then masks itself */
	e1000e_set_link(e, false);
	CHECK_EQ_U64(e->msix_sent, 2);
	CHECK(!(rd(&v, E_IMS) & ICR_OTHER));
	CHECK(!(rd(&v, E_STATUS) & STATUS_LU));
	wr(&v, E_MDIC, MDIC_OP_READ | 1u << 21 | 1u << 16);
	m = rd(&v, E_MDIC);
	CHECK(!(m & 0x4));
	CHECK(rd(&v, E_ICR) & ICR_LSC);
	CHECK_EQ_U64(rd(&v, E_ICR), 0); /* clear on read */
	e1000e_set_link(e, true);
	CHECK(rd(&v, E_STATUS) & STATUS_LU);
	env_fini(&v);
}

static uint64_t fake_ns = 1000000000;

static uint64_t fake_clock(void)
{
	return fake_ns;
}

/* EITR holds the RX vector's next interrupt back until its interval ends;
 * the thread sends it then. EITR 0: no moderation. (The device's clock is
 * the test's.) */
static void test_moderation(void)
{
	struct env v;
	uint8_t f[128];
	size_t len = udp4_frame(f, 20);
	struct e1000e *e;

	memcpy(f, MAC, 6);
	env_init(&v);
	e = v.e;
	e->clock_ns = fake_clock;
	env_rings(&v, true);
	mmio_wr(v.bar3, 0xfee00000u, 4);
	mmio_wr(v.bar3 + 8, 0x40, 4);
	mmio_wr(v.bar3 + 12, 0, 4);
	ecam_wr(v.slot, v.msix_cap + 2, PCI_MSIX_FLAGS_ENABLE, 2);
	wr(&v, E_IVAR, 0x8 | 0x9 << 8 | 0xa << 16);
	wr(&v, E_EIAC, ICR_RXQ0 | ICR_TXQ0);
	wr(&v, E_EITR0, 0xffff); /* 16.8 ms */
	wr(&v, E_IMS, ICR_RXQ0);
	peer_send(&v, f, len, 0);
	e1000e_io_turn(e, 0);
	CHECK_EQ_U64(e->msix_sent, 1);
	peer_send(&v, f, len, 0);
	e1000e_io_turn(e, 0);
	CHECK_EQ_U64(rd(&v, E_RDH), 2);
	CHECK_EQ_U64(e->msix_sent, 1); /* held back */
	fake_ns += 0xffff * 256 - 1000;
	e1000e_io_turn(e, 0);
	CHECK_EQ_U64(e->msix_sent, 1); /* not yet */
	fake_ns += 1000;
	e1000e_io_turn(e, 0);
	CHECK_EQ_U64(e->msix_sent, 2); /* the interval ended: sent */
	wr(&v, E_EITR0, 0);
	peer_send(&v, f, len, 0);
	e1000e_io_turn(e, 0);
	CHECK_EQ_U64(e->msix_sent, 3); /* no moderation */
	env_fini(&v);
}
int main(void)
{
	TEST_RUN(test_ids_eeprom_phy);
	TEST_RUN(test_msix_and_link);
	TEST_RUN(test_moderation);
	return test_summary();
}
