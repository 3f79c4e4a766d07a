/* SPDX-License-Identifier: MIT */
/*
 * tpm_crb.c - the CRB register model (tpm_crb.h).
 */
#include <errno.h>
#include <string.h>

#include "vmm/dev/tpm/tpm_crb.h"

/* INTF_ID as QEMU's tpm-crb: type CRB active (1), version CRB (1), locality
 * 0 only, 64-byte transfers (3), CRB supported, interface selector CRB;
 * vendor IBM (0x1014), device 1. */
#define TPM_CRB_INTF_ID_VALUE	 (0x1u | 0x1u << 4 | 0x3u << 11 | 0x1u << 14 | 0x1u << 17)
#define TPM_CRB_INTF_ID_HI_VALUE (0x1014u | 0x0001u << 16)

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void tpm_crb_init(struct tpm_crb *c, uint64_t base, void (*submit)(void *), void *opaque)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->base = base;
	c->idle = true;
	c->submit = submit;
	c->opaque = opaque;
}

void tpm_crb_release(struct tpm_crb *c)
{
	pthread_mutex_destroy(&c->lock);
}

/* The register dword at off (4-aligned, below TPM_CRB_BUF_OFF). Locked. */
static uint32_t crb_reg(const struct tpm_crb *c, uint64_t off)
{
	uint64_t buf = c->base + TPM_CRB_BUF_OFF;

	switch (off) {
	case TPM_CRB_LOC_STATE:
		return TPM_CRB_LOC_STATE_VALID | (c->granted ? TPM_CRB_LOC_STATE_ASSIGNED : 0) |
		       (c->established ? TPM_CRB_LOC_STATE_ESTABLISHED : 0);
	case TPM_CRB_LOC_STS:
		return c->granted ? TPM_CRB_LOC_STS_GRANTED : 0;
	case TPM_CRB_INTF_ID:
		return TPM_CRB_INTF_ID_VALUE;
	case TPM_CRB_INTF_ID_HI:
		return TPM_CRB_INTF_ID_HI_VALUE;
	case TPM_CRB_CTRL_STS:
		return (c->fatal ? TPM_CRB_CTRL_STS_FATAL : 0) |
		       (c->idle ? TPM_CRB_CTRL_STS_IDLE : 0);
	case TPM_CRB_CTRL_CNCL:
		return c->cancel;
	case TPM_CRB_CTRL_START:
		return c->busy ? 1 : 0;
	case TPM_CRB_CMD_SIZE:
	case TPM_CRB_RSP_SIZE:
		return TPM_CRB_BUF_SIZE;
	case TPM_CRB_CMD_LADDR:
	case TPM_CRB_RSP_ADDR:
		return (uint32_t)buf;
	case TPM_CRB_CMD_HADDR:
	case TPM_CRB_RSP_ADDR + 4:
		return (uint32_t)(buf >> 32);
	default: /* CTRL_REQ reads 0: every request is done at once */
		return 0;
	}
}

static void crb_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct tpm_crb *c = dev;
	uint8_t tmp[8];

	memset(data, 0, len);
	if (off >= TPM_CRB_WINDOW || len > TPM_CRB_WINDOW - off)
		return;
	pthread_mutex_lock(&c->lock);
	if (off >= TPM_CRB_BUF_OFF) {
		memcpy(data, c->buf + (off - TPM_CRB_BUF_OFF), len);
	} else {
		uint64_t a = off & ~3ull;
		uint32_t lo = crb_reg(c, a), hi = crb_reg(c, a + 4);

		memcpy(tmp, &lo, 4);
		memcpy(tmp + 4, &hi, 4);
		if ((off - a) + len <= sizeof(tmp))
			memcpy(data, tmp + (off - a), len);
	}
	pthread_mutex_unlock(&c->lock);
}

/* A TPM response made here: just the header with rc. */
static void crb_answer(struct tpm_crb *c, uint32_t rc)
{
	static const uint8_t hdr[6] = {0x80, 0x01, 0, 0, 0, TPM_HEADER_SIZE};

	memcpy(c->buf, hdr, sizeof(hdr));
	c->buf[6] = (uint8_t)(rc >> 24), c->buf[7] = (uint8_t)(rc >> 16);
	c->buf[8] = (uint8_t)(rc >> 8), c->buf[9] = (uint8_t)rc;
}

/* CTRL_START written with bit 0: true when the backend must be woken. */
static bool crb_start(struct tpm_crb *c)
{
	uint32_t len;

	if (c->busy || c->fatal || !c->granted || c->idle)
		return false;
	len = be32(c->buf + 2);
	if (len < TPM_HEADER_SIZE || len > TPM_CRB_BUF_SIZE) {
		crb_answer(c, TPM_RC_COMMAND_SIZE);
		return false;
	}
	memcpy(c->cmd, c->buf, len);
	c->cmd_len = len;
	c->busy = c->pending = true;
	c->commands++;
	return true;
}

static bool crb_write_reg(struct tpm_crb *c, uint64_t reg, uint32_t v)
{
	switch (reg) {
	case TPM_CRB_LOC_CTRL:
		if (v & TPM_CRB_LOC_CTRL_RELINQUISH)
			c->granted = false;
		if (v & TPM_CRB_LOC_CTRL_REQUEST)
			c->granted = true;
		break;
	case TPM_CRB_CTRL_REQ:
		if (v & TPM_CRB_CTRL_REQ_READY)
			c->idle = false;
		else if ((v & TPM_CRB_CTRL_REQ_IDLE) && !c->busy)
			c->idle = true;
		break;
	case TPM_CRB_CTRL_CNCL:
		/* swtpm's cancel acts on its own slow commands only; the
		 * guest sees the command finish either way */
		c->cancel = v & 1;
		break;
	case TPM_CRB_CTRL_START:
		if (v & 1)
			return crb_start(c);
		break;
	default:
		break;
	}
	return false;
}

static void crb_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct tpm_crb *c = dev;
	bool wake = false;

	if (off >= TPM_CRB_WINDOW || len > TPM_CRB_WINDOW - off)
		return;
	pthread_mutex_lock(&c->lock);
	if (off >= TPM_CRB_BUF_OFF) {
		if (!c->busy)
			memcpy(c->buf + (off - TPM_CRB_BUF_OFF), data, len);
	} else if ((off & 3) + len <= 4) {
		uint32_t v = 0;

		memcpy((uint8_t *)&v + (off & 3), data, len);
		wake = crb_write_reg(c, off & ~3ull, v);
	}
	pthread_mutex_unlock(&c->lock);
	if (wake && c->submit)
		c->submit(c->opaque);
}

const struct io_ops tpm_crb_ops = {.read = crb_read, .write = crb_write};

size_t tpm_crb_take(struct tpm_crb *c, uint8_t *out, size_t cap)
{
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	if (c->pending && c->cmd_len <= cap) {
		memcpy(out, c->cmd, c->cmd_len);
		n = c->cmd_len;
		c->pending = false;
	}
	pthread_mutex_unlock(&c->lock);
	return n;
}

int tpm_crb_complete(struct tpm_crb *c, const uint8_t *rsp, size_t len)
{
	if (len < TPM_HEADER_SIZE || len > TPM_CRB_BUF_SIZE || be32(rsp + 2) != len)
		return -EPROTO;
	pthread_mutex_lock(&c->lock);
	if (!c->busy) { /* no command in flight: nothing to answer */
		pthread_mutex_unlock(&c->lock);
		return -EPROTO;
	}
	memcpy(c->buf, rsp, len);
	c->busy = c->pending = false;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void tpm_crb_fail(struct tpm_crb *c)
{
	pthread_mutex_lock(&c->lock);
	c->fatal = true;
	c->busy = c->pending = false;
	crb_answer(c, 0x101u); /* TPM_RC_FAILURE */
	pthread_mutex_unlock(&c->lock);
}

void tpm_crb_set_established(struct tpm_crb *c, bool on)
{
	pthread_mutex_lock(&c->lock);
	c->established = on;
	pthread_mutex_unlock(&c->lock);
}
