// SPDX-License-Identifier: MIT
/*
 * nic_e1000e_tx_test.c - the 82574L's transmit path without KVM
 * (nic_e1000e_env.h): legacy and extended TX with checksum insertion,
 * clear-on-read counters, TSO (segments, headers, checksums), a reset
 * while a TSO packet is cut; and the guest's attacks: a tail outside the
 * ring, rings and buffers outside RAM, TSO contexts whose header length,
 * MSS or offsets do not fit the packet.
 */
#include "tests/unit/nic_e1000e_env.h"

static void test_tx_csum(void)
{
	struct env v;
	struct e1000e_txctx c = {.tucss = 34, .tucso = 40, .ipcss = 14, .ipcso = 24, .ipcse = 33};
	uint8_t f[256], got[256];
	size_t len = udp4_frame(f, 100), n;
	uint8_t *ram;

	env_init(&v);
	env_rings(&v, true);
	ram = v.d.ram;
	memcpy(ram + TXBUF, f, len);
	/* the driver's pseudo-header seed in the UDP checksum field */
	pkt_put16(ram + TXBUF + 40,
		  (uint16_t)~pkt_csum_fold(pkt_csum_add(PKT_IPPROTO_UDP + 108, f + 26, 8)));
	tx_ctx(&v, &c);
	tx_data(&v, TXBUF, 30, 0, TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	tx_data(&v, TXBUF + 30, (uint32_t)len - 30, TXD_CMD_EOP | TXD_CMD_RS,
		TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	tx_go(&v);
	n = peer_recv(&v, got, sizeof(got));
	CHECK_EQ_U64(n, len);
	CHECK(ip4_csum_ok(got));
	CHECK(l4_csum_ok(got, n));
	CHECK(!memcmp(got + 42, f + 42, 100));
	CHECK(ram[TXR + 16 * 2 + 12] & TXD_STAT_DD);
	CHECK_EQ_U64(rd(&v, E_TDH), 3);
	CHECK(rd(&v, E_ICR) & ICR_TXDW);
	/* the statistics clear on read */
	CHECK_EQ_U64(rd(&v, E_GPTC), 1);
	CHECK_EQ_U64(rd(&v, E_GPTC), 0);
	/* a legacy descriptor with the legacy checksum (css/cso) */
	memcpy(ram + TXBUF, f, len);
	{
		uint8_t d[16] = {0};
		uint64_t a = TXBUF;

		memcpy(d, &a, 8);
		d[8] = (uint8_t)len;
		d[10] = 40;
		d[11] = TXD_CMD_EOP | TXD_CMD_IC | TXD_CMD_RS;
		d[13] = 34;
		pkt_put16(ram + TXBUF + 40,
			  (uint16_t)~pkt_csum_fold(pkt_csum_add(PKT_IPPROTO_UDP + 108, f + 26, 8)));
		tx_desc(&v, d);
	}
	tx_go(&v);
	n = peer_recv(&v, got, sizeof(got));
	CHECK_EQ_U64(n, len);
	CHECK(l4_csum_ok(got, n));
	env_fini(&v);
}

static struct e1000e_txctx tso_ctx(void)
{
	return (struct e1000e_txctx){.ipcss = 14,
				     .ipcso = 24,
				     .ipcse = 33,
				     .tucss = 34,
				     .tucso = 50,
				     .hdr_len = 54,
				     .mss = 1000,
				     .paylen = 2500,
				     .tucmd = TXD_TUCMD_TCP | TXD_TUCMD_IP | TXD_TUCMD_TSE};
}

static void test_tso(void)
{
	struct env v;
	struct e1000e_txctx c = tso_ctx();
	static uint8_t f[4096], got[2048];
	size_t len = tcp4_packet(f, 2500), n;
	unsigned int i;

	env_init(&v);
	env_rings(&v, true);
	memcpy(v.d.ram + TXBUF, f, len);
	tx_ctx(&v, &c);
	tx_data(&v, TXBUF, 54, TXD_CMD_TSE, TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	tx_data(&v, TXBUF + 54, 2500, TXD_CMD_TSE | TXD_CMD_EOP | TXD_CMD_RS,
		TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	tx_go(&v);
	for (i = 0; (n = peer_recv(&v, got, sizeof(got))); i++) {
		size_t pay = i < 2 ? 1000 : 500;

		CHECK_EQ_U64(n, 54 + pay);
		CHECK_EQ_U64(pkt_be16(got + 16), 40 + pay);   /* IPv4 total length */
		CHECK_EQ_U64(pkt_be16(got + 18), 0x1000 + i); /* IP ID */
		CHECK_EQ_U64(pkt_be32(got + 38), 1000 + 1000 * i);
		CHECK_EQ_U64(got[47] & 0x09, i == 2 ? 0x09 : 0); /* FIN, PSH last only */
		CHECK(ip4_csum_ok(got));
		CHECK(l4_csum_ok(got, n));
		CHECK(!memcmp(got + 54, f + 54 + 1000 * i, pay));
	}
	CHECK_EQ_U64(i, 3);
	env_fini(&v);
}

static struct env *reset_env;

static void reset_now(void)
{
	send_hook = NULL;
	wr(reset_env, E_CTRL, CTRL_RST);
}

/* A reset (CTRL.RST clears the offload context) while a TSO packet is
 * being cut: the packet goes out as its context said, whole. */
static void test_tso_reset_midway(void)
{
	struct env v;
	struct e1000e_txctx c = tso_ctx();
	static uint8_t f[4096], got[2048];
	size_t len = tcp4_packet(f, 2500), n;
	unsigned int i;

	env_init(&v);
	env_rings(&v, true);
	memcpy(v.d.ram + TXBUF, f, len);
	tx_ctx(&v, &c);
	tx_data(&v, TXBUF, (uint32_t)len, TXD_CMD_TSE | TXD_CMD_EOP | TXD_CMD_RS,
		TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	reset_env = &v;
	send_hook = reset_now;
	tx_go(&v);
	for (i = 0; (n = peer_recv(&v, got, sizeof(got))); i++)
		CHECK(l4_csum_ok(got, n));
	CHECK_EQ_U64(i, 3);
	CHECK_EQ_U64(rd(&v, E_TCTL), 0); /* the reset happened */
	env_fini(&v);
}

/* TSO contexts that lie about the packet: each is dropped, none sent. */
static void test_tso_bad_context(void)
{
	struct env v;
	static uint8_t f[512], got[2048];
	size_t len = tcp4_packet(f, 100);
	struct e1000e_txctx bad[6];
	struct e1000e_stats st;

	for (unsigned int i = 0; i < 6; i++)
		bad[i] = tso_ctx();
	bad[0].hdr_len = 200; /* headers longer than the packet */
	bad[1].mss = 0;
	bad[2].tucss = 140; /* TCP header past the headers */
	bad[2].hdr_len = 150;
	bad[3].tucso = 254; /* checksum field past the headers */
	bad[4].ipcss = 40;  /* IPv4 header overlapping TCP's */
	bad[5].mss = 8;	    /* 8-byte segments: an amplifier */
	env_init(&v);
	env_rings(&v, true);
	memcpy(v.d.ram + TXBUF, f, len);
	for (unsigned int i = 0; i < 6; i++) {
		tx_ctx(&v, &bad[i]);
		tx_data(&v, TXBUF, (uint32_t)len, TXD_CMD_TSE | TXD_CMD_EOP | TXD_CMD_RS,
			TXD_POPTS_TXSM | TXD_POPTS_IXSM);
	}
	tx_go(&v);
	CHECK_EQ_U64(peer_recv(&v, got, sizeof(got)), 0);
	e1000e_get_stats(v.e, &st);
	CHECK_EQ_U64(st.tx_dropped, 6);
	CHECK_EQ_U64(st.tx_packets, 0);
	CHECK_EQ_U64(rd(&v, E_TDH), 12); /* the ring went on */
	env_fini(&v);
}

/* Rings and buffers the guest points anywhere. */
static void test_tx_untrusted_ring(void)
{
	struct env v;
	uint8_t f[128], got[2048];
	size_t len = udp4_frame(f, 20);
	struct e1000e_stats st;

	env_init(&v);
	env_rings(&v, true);
	memcpy(v.d.ram + TXBUF, f, len);
	/* a tail outside the ring: nothing runs */
	wr(&v, E_TDT, 100);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(rd(&v, E_TDH), 0);
	/* a buffer outside RAM, then one crossing its end, then a packet
	 * longer than the device takes: dropped, the ring goes on */
	wr(&v, E_TDT, 0);
	tx_data(&v, 0xfff00000ull, 64, TXD_CMD_EOP, 0);
	tx_data(&v, RAM - 32, 64, TXD_CMD_EOP, 0);
	for (unsigned int i = 0; i < 3; i++) /* 3 x 30000 bytes */
		tx_data(&v, TXBUF, 30000, i == 2 ? TXD_CMD_EOP : 0, 0);
	tx_data(&v, TXBUF, (uint32_t)len, TXD_CMD_EOP, 0); /* a good one */
	tx_go(&v);
	CHECK_EQ_U64(peer_recv(&v, got, sizeof(got)), len);
	CHECK_EQ_U64(peer_recv(&v, got, sizeof(got)), 0);
	e1000e_get_stats(v.e, &st);
	CHECK_EQ_U64(st.tx_dropped, 3);
	/* the ring itself outside RAM */
	wr(&v, E_TDBAL, 0xfffff000u);
	wr(&v, E_TDBAH, 0xffffffffu);
	wr(&v, E_TDT, 5);
	e1000e_io_turn(v.e, 0);
	CHECK_EQ_U64(peer_recv(&v, got, sizeof(got)), 0);
	env_fini(&v);
}
int main(void)
{
	TEST_RUN(test_tx_csum);
	TEST_RUN(test_tso);
	TEST_RUN(test_tso_bad_context);
	TEST_RUN(test_tso_reset_midway);
	TEST_RUN(test_tx_untrusted_ring);
	return test_summary();
}
