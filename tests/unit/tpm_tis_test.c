// SPDX-License-Identifier: MIT
/* tpm_tis: the FIFO (TIS) register model as Linux's tpm_tis driver drives
 * it with a fake backend (locality, commandReady, the command byte by byte
 * and 4 bytes at a time, Expect until the header's size is in, tpmGo,
 * dataAvail until the last response byte), its identity registers, and
 * its refusals: a header size below 10 or past 4096 answered here without
 * the backend, bytes past the command or the buffer dropped, tpmGo before
 * the command is whole ignored, reads past the response 0xff,
 * commandReady aborting a command in flight (its late answer dropped, the
 * next command unharmed), a broken response refused, localities 1-4 absent,
 * every register but ACCESS deaf without the locality. */
#include <errno.h>
#include <string.h>

#include "tests/lib/test.h"
#include "vmm/dev/tpm/tpm_tis.h"

static unsigned int submits;

static void on_submit(void *opaque)
{
	(void)opaque;
	submits++;
}

static uint32_t rd32(struct tpm_tis *t, uint64_t off)
{
	uint32_t v;

	tpm_tis_ops.read(t, off, &v, 4);
	return v;
}

static uint8_t rd8(struct tpm_tis *t, uint64_t off)
{
	uint8_t v;

	tpm_tis_ops.read(t, off, &v, 1);
	return v;
}

static void wr8(struct tpm_tis *t, uint64_t off, uint8_t v)
{
	tpm_tis_ops.write(t, off, &v, 1);
}

static uint32_t sts(struct tpm_tis *t)
{
	return rd32(t, TPM_TIS_STS);
}

/* TPM2_Startup(SU_CLEAR) and TPM2_GetRandom(8) */
static const uint8_t startup[] = {0x80, 0x01, 0, 0, 0, 12, 0, 0, 0x01, 0x44, 0, 0};
static const uint8_t getrandom[] = {0x80, 0x01, 0, 0, 0, 12, 0, 0, 0x01, 0x7b, 0, 8};

static void locality(struct tpm_tis *t)
{
	CHECK_EQ_U64(rd8(t, TPM_TIS_ACCESS) & (TPM_TIS_ACCESS_VALID | TPM_TIS_ACCESS_ACTIVE),
		     TPM_TIS_ACCESS_VALID);
	wr8(t, TPM_TIS_ACCESS, TPM_TIS_ACCESS_REQUEST_USE);
	CHECK_EQ_U64(rd8(t, TPM_TIS_ACCESS) & (TPM_TIS_ACCESS_VALID | TPM_TIS_ACCESS_ACTIVE |
					       TPM_TIS_ACCESS_REQUEST_USE),
		     TPM_TIS_ACCESS_VALID | TPM_TIS_ACCESS_ACTIVE);
}

/* The driver's send: commandReady, the bytes, each burst followed by
 * Expect, the last one clearing it, tpmGo. */
static void send_cmd(struct tpm_tis *t, const uint8_t *cmd, size_t len, bool wide)
{
	wr8(t, TPM_TIS_STS, TPM_TIS_STS_READY);
	CHECK(sts(t) & TPM_TIS_STS_READY);
	CHECK_EQ_U64((sts(t) >> 8) & 0xffff, TPM_TIS_BURST);
	for (size_t i = 0; i < len;) {
		size_t n = wide && len - i >= 4 ? 4 : 1;

		CHECK(sts(t) & TPM_TIS_STS_EXPECT);
		tpm_tis_ops.write(t, wide ? TPM_TIS_XDATA_FIFO : TPM_TIS_DATA_FIFO, cmd + i,
				  (uint32_t)n);
		i += n;
	}
	CHECK_EQ_U64(sts(t) & (TPM_TIS_STS_VALID | TPM_TIS_STS_EXPECT | TPM_TIS_STS_READY),
		     TPM_TIS_STS_VALID);
	wr8(t, TPM_TIS_STS, TPM_TIS_STS_GO);
}

/* The fake backend: take the command, answer with rc and extra bytes. */
static void backend(struct tpm_tis *t, const uint8_t *want, size_t want_len, uint32_t rc,
		    size_t extra)
{
	uint8_t cmd[TPM_TIS_BUF_SIZE], rsp[64] = {0x80, 0x01};
	size_t n = tpm_tis_take(t, cmd, sizeof(cmd)), len = TPM_HEADER_SIZE + extra;

	CHECK_EQ_U64(n, want_len);
	CHECK(n == want_len && !memcmp(cmd, want, n));
	rsp[5] = (uint8_t)len;
	rsp[6] = (uint8_t)(rc >> 24), rsp[9] = (uint8_t)rc;
	for (size_t i = 0; i < extra; i++)
		rsp[TPM_HEADER_SIZE + i] = (uint8_t)(0xa0 + i);
	CHECK_EQ_U64((int64_t)tpm_tis_complete(t, rsp, len), (int64_t)0);
}

/* The driver's receive: the response out of the FIFO; its length. */
static size_t recv_rsp(struct tpm_tis *t, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while ((sts(t) & TPM_TIS_STS_DATA_AVAIL) && n < cap)
		out[n++] = rd8(t, TPM_TIS_DATA_FIFO);
	return n;
}

static void test_startup_getrandom(void)
{
	struct tpm_tis t;
	uint8_t rsp[64];

	submits = 0;
	tpm_tis_init(&t, on_submit, NULL);
	CHECK_EQ_U64(rd32(&t, TPM_TIS_DID_VID), 0x00011014);
	CHECK_EQ_U64(rd8(&t, TPM_TIS_RID), 1);
	CHECK_EQ_U64(rd32(&t, TPM_TIS_INTERFACE_ID) & 0xff, 0);	 /* FIFO, version FIFO */
	CHECK(rd32(&t, TPM_TIS_INTERFACE_ID) & (1u << 13));	 /* CapFIFO */
	CHECK_EQ_U64(rd32(&t, TPM_TIS_INTF_CAP) & 0xff, 0);	 /* no interrupt offered */
	CHECK_EQ_U64((rd32(&t, TPM_TIS_INTF_CAP) >> 28) & 7, 3); /* 1.3 for TPM 2.0 */
	CHECK_EQ_U64(rd8(&t, TPM_TIS_ACCESS) & TPM_TIS_ACCESS_ESTABLISHMENT, 1);
	tpm_tis_set_established(&t, true);
	CHECK_EQ_U64(rd8(&t, TPM_TIS_ACCESS) & TPM_TIS_ACCESS_ESTABLISHMENT, 0);
	locality(&t);
	CHECK_EQ_U64(sts(&t) & (3u << 26), TPM_TIS_STS_FAMILY_2_0);

	send_cmd(&t, startup, sizeof(startup), false);
	CHECK_EQ_U64(submits, 1);
	CHECK_EQ_U64(sts(&t) & (TPM_TIS_STS_DATA_AVAIL | TPM_TIS_STS_READY), 0);
	backend(&t, startup, sizeof(startup), 0, 0);
	CHECK_EQ_U64(sts(&t) & (TPM_TIS_STS_VALID | TPM_TIS_STS_DATA_AVAIL),
		     TPM_TIS_STS_VALID | TPM_TIS_STS_DATA_AVAIL);
	CHECK_EQ_U64(recv_rsp(&t, rsp, sizeof(rsp)), TPM_HEADER_SIZE);
	CHECK_EQ_U64(rsp[5], TPM_HEADER_SIZE);
	CHECK_EQ_U64(rd8(&t, TPM_TIS_DATA_FIFO), 0xff); /* past the response */
	/* responseRetry: the response again */
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_RETRY);
	CHECK_EQ_U64(recv_rsp(&t, rsp, sizeof(rsp)), TPM_HEADER_SIZE);

	send_cmd(&t, getrandom, sizeof(getrandom), true); /* XDATA, 4 at a time */
	backend(&t, getrandom, sizeof(getrandom), 0, 10);
	CHECK_EQ_U64(recv_rsp(&t, rsp, sizeof(rsp)), 20);
	CHECK_EQ_U64(rsp[10], 0xa0);
	CHECK_EQ_U64(rsp[19], 0xa9);
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_READY);
	CHECK_EQ_U64(sts(&t) & TPM_TIS_STS_DATA_AVAIL, 0);
	/* relinquish: STS and the FIFO go deaf */
	wr8(&t, TPM_TIS_ACCESS, TPM_TIS_ACCESS_ACTIVE);
	CHECK_EQ_U64(rd8(&t, TPM_TIS_ACCESS) & TPM_TIS_ACCESS_ACTIVE, 0);
	CHECK_EQ_U64(sts(&t) & TPM_TIS_STS_VALID, 0);
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_READY);
	wr8(&t, TPM_TIS_DATA_FIFO, 0x80);
	CHECK_EQ_U64(t.in, 0);
	CHECK_EQ_U64(t.commands, 2);
	tpm_tis_release(&t);
}

/* Sizes the guest writes in the header: refused here, never sent. */
static void test_hostile_sizes(void)
{
	static const uint32_t sizes[] = {0, 9, 4097, 0xffffffffu};
	struct tpm_tis t;
	uint8_t cmd[16] = {0x80, 0x01}, rsp[16];

	tpm_tis_init(&t, on_submit, NULL);
	locality(&t);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		submits = 0;
		wr8(&t, TPM_TIS_STS, TPM_TIS_STS_READY);
		cmd[2] = (uint8_t)(sizes[k] >> 24), cmd[3] = (uint8_t)(sizes[k] >> 16);
		cmd[4] = (uint8_t)(sizes[k] >> 8), cmd[5] = (uint8_t)sizes[k];
		for (size_t i = 0; i < 6; i++)
			wr8(&t, TPM_TIS_DATA_FIFO, cmd[i]);
		CHECK_EQ_U64(sts(&t) & TPM_TIS_STS_EXPECT, 0); /* takes no more */
		wr8(&t, TPM_TIS_DATA_FIFO, 0x55);
		CHECK_EQ_U64(t.in, 6);
		wr8(&t, TPM_TIS_STS, TPM_TIS_STS_GO);
		CHECK_EQ_U64(submits, 0);
		CHECK_EQ_U64(recv_rsp(&t, rsp, sizeof(rsp)), TPM_HEADER_SIZE);
		CHECK_EQ_U64((uint32_t)rsp[8] << 8 | rsp[9], TPM_RC_COMMAND_SIZE);
	}
	/* 4096 bytes exactly is a command; bytes past it are dropped */
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_READY);
	cmd[2] = 0, cmd[3] = 0, cmd[4] = 0x10, cmd[5] = 0;
	for (size_t i = 0; i < TPM_TIS_BUF_SIZE + 100; i++)
		wr8(&t, TPM_TIS_DATA_FIFO, i < 6 ? cmd[i] : 0x11);
	CHECK_EQ_U64(t.in, TPM_TIS_BUF_SIZE);
	CHECK_EQ_U64(sts(&t) & TPM_TIS_STS_EXPECT, 0);
	submits = 0;
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_GO);
	CHECK_EQ_U64(submits, 1);
	CHECK_EQ_U64(t.cmd_len, TPM_TIS_BUF_SIZE);
	tpm_tis_release(&t);
}

/* tpmGo before the command is whole, commandReady aborts, a broken answer,
 * localities 1-4, the backend gone. */
static void test_aborts(void)
{
	struct tpm_tis t;
	uint8_t rsp[32], bad[TPM_HEADER_SIZE] = {0x80, 0x01, 0, 0, 0, 40};
	uint32_t v = 0;

	submits = 0;
	tpm_tis_init(&t, on_submit, NULL);
	/* no locality: the FIFO takes nothing */
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_READY);
	CHECK_EQ_U64(t.state, TPM_TIS_IDLE);
	locality(&t);
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_READY);
	tpm_tis_ops.write(&t, TPM_TIS_DATA_FIFO, startup, 4);
	CHECK(sts(&t) & TPM_TIS_STS_EXPECT);
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_GO); /* only 4 bytes: ignored */
	tpm_tis_ops.write(&t, TPM_TIS_DATA_FIFO, startup + 4, 4);
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_GO); /* 8 of 12: ignored */
	CHECK_EQ_U64(submits, 0);
	CHECK_EQ_U64(t.state, TPM_TIS_RECEPTION);
	/* commandReady in reception: back to an empty FIFO */
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_READY);
	CHECK_EQ_U64(t.in, 0);
	/* abort before the worker took it: never sent */
	send_cmd(&t, startup, sizeof(startup), false);
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_READY);
	CHECK_EQ_U64(tpm_tis_take(&t, rsp, sizeof(rsp)), 0);
	/* abort after it was taken: the late answer is dropped, and the next
	 * command gets its own */
	send_cmd(&t, startup, sizeof(startup), false);
	CHECK_EQ_U64(tpm_tis_take(&t, rsp, sizeof(rsp)), sizeof(startup));
	wr8(&t, TPM_TIS_STS, TPM_TIS_STS_READY);
	send_cmd(&t, getrandom, sizeof(getrandom), false);
	bad[5] = TPM_HEADER_SIZE, bad[9] = 0x77;
	CHECK_EQ_U64((int64_t)tpm_tis_complete(&t, bad, TPM_HEADER_SIZE),
		     (int64_t)0); /* the aborted one's */
	CHECK_EQ_U64(sts(&t) & TPM_TIS_STS_DATA_AVAIL, 0);
	backend(&t, getrandom, sizeof(getrandom), 0, 10);
	CHECK_EQ_U64(recv_rsp(&t, rsp, sizeof(rsp)), 20);
	CHECK_EQ_U64(rsp[9], 0);
	/* a broken response (size says 40, 10 given) is refused */
	send_cmd(&t, startup, sizeof(startup), false);
	CHECK_EQ_U64(tpm_tis_take(&t, rsp, sizeof(rsp)), sizeof(startup));
	bad[5] = 40;
	CHECK_EQ_U64((int64_t)tpm_tis_complete(&t, bad, TPM_HEADER_SIZE), (int64_t)-EPROTO);
	tpm_tis_fail(&t);
	CHECK_EQ_U64(recv_rsp(&t, rsp, sizeof(rsp)), TPM_HEADER_SIZE);
	CHECK_EQ_U64((uint32_t)rsp[8] << 8 | rsp[9], 0x101);
	submits = 0;
	send_cmd(&t, startup, sizeof(startup), false);
	CHECK_EQ_U64(submits, 0); /* the backend is gone: answered here */
	CHECK_EQ_U64(recv_rsp(&t, rsp, sizeof(rsp)), TPM_HEADER_SIZE);
	/* an answer nobody asked for */
	CHECK_EQ_U64((int64_t)tpm_tis_complete(&t, bad, TPM_HEADER_SIZE), (int64_t)-EPROTO);
	/* localities 1-4: all ones, writes ignored; past the window too */
	CHECK_EQ_U64(rd8(&t, 0x1000 + TPM_TIS_ACCESS), 0xff);
	CHECK_EQ_U64(rd32(&t, 0x4000 + TPM_TIS_STS), 0xffffffffu);
	wr8(&t, 0x1000 + TPM_TIS_ACCESS, TPM_TIS_ACCESS_ACTIVE);
	CHECK(rd8(&t, TPM_TIS_ACCESS) & TPM_TIS_ACCESS_ACTIVE);
	tpm_tis_ops.read(&t, 0xffe, &v, 4);
	CHECK_EQ_U64(v, 0xffffffffu);
	tpm_tis_ops.write(&t, 0xffe, &v, 4);
	tpm_tis_release(&t);
}

int main(void)
{
	TEST_RUN(test_startup_getrandom);
	TEST_RUN(test_hostile_sizes);
	TEST_RUN(test_aborts);
	return test_summary();
}
