// SPDX-License-Identifier: MIT
/*
 * nic_e1000e_rx_test.c - the 82574L's receive path without KVM
 * (nic_e1000e_env.h): legacy and extended RX with the checksum status and
 * the MAC filter, packet split (jumbo frames); and the guest's attacks: a
 * tail outside the ring, buffers outside RAM or in SMRAM.
 */
#include "tests/unit/nic_e1000e_env.h"

static void test_rx(void)
{
	struct env v;
	uint8_t f[256], *ram;
	size_t len = udp4_frame(f, 100);
	uint8_t bcast[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t other[60] = {0x02, 0x99};
	uint32_t se;

	/* the frame is for the NIC */
	memcpy(f, MAC, 6);
	pkt_put16(f + 14 + 10, 0);
	pkt_put16(f + 14 + 10, pkt_csum_fold(pkt_csum_add(0, f + 14, 20)));
	{
		uint32_t ps = pkt_csum_add(0, f + 26, 8) + PKT_IPPROTO_UDP + 108;

		pkt_put16(f + 40, pkt_csum_fold(pkt_csum_add(ps, f + 34, 108)));
	}
	for (int ext = 0; ext < 2; ext++) {
		env_init(&v);
		env_rings(&v, ext);
		ram = v.d.ram;
		peer_send(&v, other, sizeof(other), 0); /* not ours: filtered */
		peer_send(&v, f, len, 0);
		f[60] ^= 1; /* a bad UDP checksum */
		peer_send(&v, f, len, 0);
		f[60] ^= 1;
		peer_send(&v, bcast, sizeof(bcast), 0);
		e1000e_io_turn(v.e, 0);
		CHECK_EQ_U64(rd(&v, E_RDH), 3);
		CHECK(!memcmp(ram + RXBUF, f, len));
		CHECK(!memcmp(ram + RXBUF + 4096, bcast, 6));
		if (ext) {
			memcpy(&se, ram + RXR + 8, 4);
			CHECK_EQ_U64(se & 0xff,
				     RXD_STAT_DD | RXD_STAT_EOP | RXD_STAT_IPCS | RXD_STAT_UDPCS);
			CHECK_EQ_U64(ram[RXR + 12] | ram[RXR + 13] << 8, len);
			memcpy(&se, ram + RXR + 16 + 8, 4);
			CHECK(se & 0x20000000u); /* TCPE */
		} else {
			CHECK_EQ_U64(ram[RXR + 12],
				     RXD_STAT_DD | RXD_STAT_EOP | RXD_STAT_IPCS | RXD_STAT_UDPCS);
			CHECK_EQ_U64(ram[RXR + 8] | ram[RXR + 9] << 8, len);
			CHECK(ram[RXR + 16 + 13] & RXD_ERR_TCPE);
		}
		CHECK(rd(&v, E_ICR) & ICR_RXT0);
		CHECK_EQ_U64(rd(&v, E_GPRC), 3);
		CHECK_EQ_U64(rd(&v, E_ROC), 0); /* the filtered frame is no error */
		env_fini(&v);
	}
}

/* Packet split (Linux's e1000e with a jumbo MTU): 32-byte descriptors
 * of four buffers, the frame in buffer 0 (128 bytes) then the pages; a
 * frame the four cannot hold is dropped. */
static void test_rx_packet_split(void)
{
	struct env v;
	static uint8_t f[14000];
	uint8_t *ram, *d;
	uint32_t se;
	size_t len = 3000;

	env_init(&v);
	env_rings(&v, true);
	ram = v.d.ram;
	wr(&v, E_RCTL, 0);
	for (unsigned int i = 0; i < 32; i++) /* 32 descriptors of 4 buffers */
		for (unsigned int b = 0; b < 4; b++) {
			uint64_t a = RXBUF + 0x10000ull * i + 0x1000ull * b;

			memcpy(ram + RXR + 32 * i + 8 * b, &a, 8);
		}
	wr(&v, E_RDLEN, 32 * 32);
	wr(&v, E_RDH, 0);
	wr(&v, E_RDT, 31 << 1); /* in 16-byte units, as Linux writes it */
	wr(&v, E_PSRCTL, 1 | 4u << 8 | 4u << 16 | 4u << 24); /* 128 B, 3 x 4 KiB */
	wr(&v, E_RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC | RCTL_LPE | RCTL_DTYP_PS);
	memcpy(f, MAC, 6);
	memcpy(f + 6, "\x02\xaa\xbb\xcc\xdd\xee\x88\xb5", 8);
	for (size_t i = 14; i < sizeof(f); i++)
		f[i] = (uint8_t)(i * 7);
	peer_send(&v, f, len, 0);
	peer_send(&v, f, 13000, 0); /* more than 128 + 3 x 4096 */
	peer_send(&v, f, 9000, 0);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(rd(&v, E_RDH), 2 << 1);
	d = ram + RXR;
	memcpy(&se, d + 8, 4);
	CHECK_EQ_U64(se & 0xff, RXD_STAT_DD | RXD_STAT_EOP);
	CHECK_EQ_U64(d[12] | d[13] << 8, 128);	     /* length0 */
	CHECK_EQ_U64(d[18] | d[19] << 8, len - 128); /* length[0] */
	CHECK_EQ_U64(d[20] | d[21] << 8, 0);
	CHECK(!memcmp(ram + RXBUF, f, 128));
	CHECK(!memcmp(ram + RXBUF + 0x1000, f + 128, len - 128));
	d = ram + RXR + 32; /* the 9000-byte one: 128 + 4096 + 4096 + 680 */
	CHECK_EQ_U64(d[18] | d[19] << 8, 4096);
	CHECK_EQ_U64(d[22] | d[23] << 8, 9000 - 128 - 8192);
	CHECK(!memcmp(ram + RXBUF + 0x10000 + 0x3000, f + 128 + 8192, 9000 - 128 - 8192));
	CHECK_EQ_U64(rd(&v, E_ROC), 1);
	env_fini(&v);
}

/* A ring the guest set up wrong takes nothing; a buffer outside RAM gets
 * nothing written and says RXE. */
static void test_rx_untrusted(void)
{
	struct env v;
	uint8_t f[128];
	size_t len = udp4_frame(f, 20);
	uint64_t far = 0xfff00000ull;
	uint32_t se;

	memcpy(f, MAC, 6);
	env_init(&v);
	env_rings(&v, true);
	wr(&v, E_RDT, 200); /* outside the ring */
	peer_send(&v, f, len, 0);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(rd(&v, E_RDH), 0);
	memcpy(v.d.ram + RXR, &far, 8);
	wr(&v, E_RDT, 63);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(rd(&v, E_RDH), 1);
	memcpy(&se, v.d.ram + RXR + 8, 4);
	CHECK(se & 0x80000000u); /* RXE */
	env_fini(&v);
}

/* A guest kernel points receive buffers into SMRAM (q35's TSEG, hidden
 * outside SMM): the frame must not land there (it would rewrite SMM's
 * code); the descriptor says RXE instead. */
static void test_rx_into_smram(void)
{
	const uint64_t tseg = RAM - (1u << 20);
	struct env v;
	uint8_t f[128];
	size_t len = udp4_frame(f, 20);
	uint32_t se;

	memcpy(f, MAC, 6);
	env_init(&v);
	env_rings(&v, true);
	memset(v.d.ram + tseg, 0xcc, 4096);
	memcpy(v.d.ram + RXR, &tseg, 8);
	guest_mem_set_smram(&v.d.mem, tseg, RAM, true);
	peer_send(&v, f, len, 0);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(rd(&v, E_RDH), 1);
	CHECK(v.d.ram[tseg] == 0xcc && v.d.ram[tseg + 2047] == 0xcc);
	memcpy(&se, v.d.ram + RXR + 8, 4);
	CHECK(se & 0x80000000u); /* RXE */
	env_fini(&v);
}
int main(void)
{
	TEST_RUN(test_rx);
	TEST_RUN(test_rx_packet_split);
	TEST_RUN(test_rx_untrusted);
	TEST_RUN(test_rx_into_smram);
	return test_summary();
}
