/* SPDX-License-Identifier: MIT */
/*
 * tpm_tis.c - the TIS/FIFO register model (tpm_tis.h).
 */
#include <errno.h>
#include <string.h>

#include "vmm/dev/tpm/tpm_tis.h"

/* INTF_CAPABILITY: no interrupt offered, burst count static, 64-byte
 * transfers (3 << 9), interface version 1.3 for TPM 2.0 (3 << 28). */
#define TIS_INTF_CAP_VALUE (1u << 8 | 3u << 9 | 3u << 28)
/* INTERFACE_ID: type FIFO (0), version FIFO (0), CapFIFO (bit 13), one
 * locality (CapLocality 0), interface selector FIFO (0). */
#define TIS_INTERFACE_ID_VALUE (1u << 13)
/* DID_VID and RID as QEMU's tpm-tis: IBM (0x1014), device 1, revision 1. */
#define TIS_DID_VID_VALUE 0x00011014u
#define TIS_RID_VALUE	  0x01u

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void tpm_tis_init(struct tpm_tis *t, void (*submit)(void *), void *opaque)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	t->state = TPM_TIS_IDLE;
	t->submit = submit;
	t->opaque = opaque;
}

void tpm_tis_release(struct tpm_tis *t)
{
	pthread_mutex_destroy(&t->lock);
}

static bool tis_fifo(uint64_t off)
{
	return (off >= TPM_TIS_DATA_FIFO && off < TPM_TIS_DATA_FIFO + 4) ||
	       (off >= TPM_TIS_XDATA_FIFO && off < TPM_TIS_XDATA_FIFO + 4);
}

/* The header's size field, once 6 bytes are in; 0 before. Locked. */
static size_t tis_expected(const struct tpm_tis *t)
{
	return t->in >= 6 ? be32(t->buf + 2) : 0;
}

/* Expect: the command is not whole yet (its size unknown or not reached,
 * and a size this interface can take). Locked. */
static bool tis_expect(const struct tpm_tis *t)
{
	size_t want = tis_expected(t);

	if (t->state != TPM_TIS_RECEPTION)
		return t->state == TPM_TIS_READY;
	if (t->in < 6)
		return true;
	if (want < TPM_HEADER_SIZE || want > TPM_TIS_BUF_SIZE)
		return false; /* a size refused at tpmGo: take no more */
	return t->in < want;
}

static uint32_t tis_sts(const struct tpm_tis *t)
{
	uint32_t v = TPM_TIS_STS_FAMILY_2_0, burst = 0;

	if (!t->active)
		return v;
	v |= TPM_TIS_STS_VALID;
	switch (t->state) {
	case TPM_TIS_READY:
		v |= TPM_TIS_STS_READY | TPM_TIS_STS_EXPECT;
		burst = TPM_TIS_BURST;
		break;
	case TPM_TIS_RECEPTION:
		if (tis_expect(t)) {
			v |= TPM_TIS_STS_EXPECT;
			burst = TPM_TIS_BURST;
		}
		break;
	case TPM_TIS_COMPLETION:
		if (t->out < t->rsp_len) {
			v |= TPM_TIS_STS_DATA_AVAIL;
			burst = TPM_TIS_BURST;
		}
		break;
	default:
		break;
	}
	return v | burst << TPM_TIS_STS_BURST_SHIFT;
}

/* The register dword at off (4-aligned) of locality 0. Locked. */
static uint32_t tis_reg(const struct tpm_tis *t, uint64_t off)
{
	switch (off) {
	case TPM_TIS_ACCESS:
		return TPM_TIS_ACCESS_VALID | (t->active ? TPM_TIS_ACCESS_ACTIVE : 0) |
		       (t->established ? 0 : TPM_TIS_ACCESS_ESTABLISHMENT);
	case TPM_TIS_INT_ENABLE:
		return t->int_enable;
	case TPM_TIS_INT_VECTOR:
		return t->int_vector;
	case TPM_TIS_INTF_CAP:
		return TIS_INTF_CAP_VALUE;
	case TPM_TIS_STS:
		return tis_sts(t);
	case TPM_TIS_INTERFACE_ID:
		return TIS_INTERFACE_ID_VALUE;
	case TPM_TIS_DID_VID:
		return TIS_DID_VID_VALUE;
	case TPM_TIS_RID:
		return TIS_RID_VALUE;
	default: /* INT_STATUS: no interrupt ever pends */
		return 0;
	}
}

/* One response byte out of the FIFO: 0xff when there is none. Locked. */
static uint8_t tis_fifo_byte(struct tpm_tis *t)
{
	if (!t->active || t->state != TPM_TIS_COMPLETION || t->out >= t->rsp_len)
		return 0xff;
	return t->buf[t->out++];
}

static void tis_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct tpm_tis *t = dev;
	uint8_t *p = data, tmp[8];

	memset(data, 0xff, len);
	if (off >= TPM_TIS_LOCALITY || len > TPM_TIS_LOCALITY - off)
		return; /* localities 1-4: not present */
	pthread_mutex_lock(&t->lock);
	if (tis_fifo(off)) {
		for (uint32_t i = 0; i < len; i++)
			p[i] = tis_fifo_byte(t);
	} else {
		uint64_t a = off & ~3ull;
		uint32_t lo = tis_reg(t, a), hi = tis_reg(t, a + 4);

		memcpy(tmp, &lo, 4);
		memcpy(tmp + 4, &hi, 4);
		if ((off - a) + len <= sizeof(tmp))
			memcpy(data, tmp + (off - a), len);
	}
	pthread_mutex_unlock(&t->lock);
}

/* A TPM response made here, offered in the FIFO: the header with rc. */
static void tis_answer(struct tpm_tis *t, uint32_t rc)
{
	static const uint8_t hdr[6] = {0x80, 0x01, 0, 0, 0, TPM_HEADER_SIZE};

	memcpy(t->buf, hdr, sizeof(hdr));
	t->buf[6] = (uint8_t)(rc >> 24), t->buf[7] = (uint8_t)(rc >> 16);
	t->buf[8] = (uint8_t)(rc >> 8), t->buf[9] = (uint8_t)rc;
	t->rsp_len = TPM_HEADER_SIZE;
	t->out = 0;
	t->state = TPM_TIS_COMPLETION;
}

/* tpmGo: true when the backend must be woken. Locked. */
static bool tis_go(struct tpm_tis *t)
{
	size_t want = tis_expected(t);

	if (t->state != TPM_TIS_RECEPTION || tis_expect(t))
		return false; /* nothing whole to send */
	if (t->fatal) {
		tis_answer(t, 0x101u); /* TPM_RC_FAILURE */
		return false;
	}
	if (want < TPM_HEADER_SIZE || want > TPM_TIS_BUF_SIZE) {
		tis_answer(t, TPM_RC_COMMAND_SIZE);
		return false;
	}
	memcpy(t->cmd, t->buf, want);
	t->cmd_len = want;
	t->pending = true;
	t->state = TPM_TIS_EXECUTION;
	t->commands++;
	return true;
}

/* commandReady: a new command may be written (aborting any in flight). */
static void tis_ready(struct tpm_tis *t)
{
	if (t->state == TPM_TIS_EXECUTION && t->pending)
		t->pending = false; /* not taken yet: never sent */
	else if (t->state == TPM_TIS_EXECUTION)
		t->aborted++; /* the backend has it: its answer is dropped */
	t->state = TPM_TIS_READY;
	t->in = t->out = t->rsp_len = 0;
}

/* A write to STS (its low byte: the bits the guest sets). Locked. */
static bool tis_write_sts(struct tpm_tis *t, uint8_t v)
{
	if (v & TPM_TIS_STS_READY) {
		tis_ready(t);
		return false;
	}
	if (v & TPM_TIS_STS_GO)
		return tis_go(t);
	if ((v & TPM_TIS_STS_RETRY) && t->state == TPM_TIS_COMPLETION)
		t->out = 0;
	return false;
}

static void tis_fifo_put(struct tpm_tis *t, uint8_t b)
{
	if (t->state == TPM_TIS_READY)
		t->state = TPM_TIS_RECEPTION;
	if (t->state != TPM_TIS_RECEPTION || !tis_expect(t) || t->in >= TPM_TIS_BUF_SIZE)
		return; /* dropped: no command being received, or it is whole */
	t->buf[t->in++] = b;
}

static void tis_access(struct tpm_tis *t, uint8_t v)
{
	if (v & TPM_TIS_ACCESS_ACTIVE) /* relinquish */
		t->active = false;
	if (v & TPM_TIS_ACCESS_REQUEST_USE)
		t->active = true;
}

/* Register bytes written at off (within one dword). Locked. */
static bool tis_write_reg(struct tpm_tis *t, uint64_t off, const uint8_t *p, uint32_t len)
{
	uint64_t a = off & ~3ull;
	uint32_t v = 0;

	memcpy((uint8_t *)&v + (off - a), p, len);
	if (a == TPM_TIS_ACCESS && off == TPM_TIS_ACCESS) {
		tis_access(t, p[0]);
		return false;
	}
	if (!t->active)
		return false;
	switch (a) {
	case TPM_TIS_INT_ENABLE:
		t->int_enable = v & 0x8000008fu; /* kept, never raised */
		break;
	case TPM_TIS_INT_VECTOR:
		if (off == a)
			t->int_vector = p[0] & 0xf;
		break;
	case TPM_TIS_STS:
		if (off == a)
			return tis_write_sts(t, p[0]);
		break; /* commandCancel, resetEstablishment: nothing to do */
	default:
		break;
	}
	return false;
}

static void tis_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct tpm_tis *t = dev;
	const uint8_t *p = data;
	bool wake = false;

	if (off >= TPM_TIS_LOCALITY || len > TPM_TIS_LOCALITY - off)
		return; /* localities 1-4: not present */
	pthread_mutex_lock(&t->lock);
	if (tis_fifo(off)) {
		if (t->active)
			for (uint32_t i = 0; i < len; i++)
				tis_fifo_put(t, p[i]);
	} else if ((off & 3) + len <= 4) {
		wake = tis_write_reg(t, off, p, len);
	}
	pthread_mutex_unlock(&t->lock);
	if (wake && t->submit)
		t->submit(t->opaque);
}

const struct io_ops tpm_tis_ops = {.read = tis_read, .write = tis_write};

size_t tpm_tis_take(struct tpm_tis *t, uint8_t *out, size_t cap)
{
	size_t n = 0;

	pthread_mutex_lock(&t->lock);
	if (t->pending && t->cmd_len <= cap) {
		memcpy(out, t->cmd, t->cmd_len);
		n = t->cmd_len;
		t->pending = false;
	}
	pthread_mutex_unlock(&t->lock);
	return n;
}

int tpm_tis_complete(struct tpm_tis *t, const uint8_t *rsp, size_t len)
{
	int ret = 0;

	if (len < TPM_HEADER_SIZE || len > TPM_TIS_BUF_SIZE || be32(rsp + 2) != len)
		return -EPROTO;
	pthread_mutex_lock(&t->lock);
	if (t->aborted) { /* the guest gave up on it: drop the answer */
		t->aborted--;
	} else if (t->state != TPM_TIS_EXECUTION || t->pending) {
		ret = -EPROTO; /* no command in flight: nothing to answer */
	} else {
		memcpy(t->buf, rsp, len);
		t->rsp_len = len;
		t->out = 0;
		t->state = TPM_TIS_COMPLETION;
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}

void tpm_tis_fail(struct tpm_tis *t)
{
	pthread_mutex_lock(&t->lock);
	t->fatal = true;
	t->pending = false;
	t->aborted = 0;
	if (t->state == TPM_TIS_EXECUTION)
		tis_answer(t, 0x101u); /* TPM_RC_FAILURE */
	pthread_mutex_unlock(&t->lock);
}

void tpm_tis_set_established(struct tpm_tis *t, bool on)
{
	pthread_mutex_lock(&t->lock);
	t->established = on;
	pthread_mutex_unlock(&t->lock);
}
