/* SPDX-License-Identifier: MIT */
/*
 * tpm_snap.c - the TPM interface's registers and swtpm's blobs in a
 * snapshot, checked on the way in (tpm_snap.h).
 */
#include <errno.h>
#include <string.h>

#include "vmm/dev/tpm/tpm_snap.h"
#include "vmm/dev/tpm/tpm_swtpm.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/util/log.h"

#define KIND_TIS	    1u
#define KIND_CRB	    2u
#define TIS_INT_ENABLE_BITS 0x8000008fu

/* TIS registers: v[] */
enum { R_STATE, R_ACTIVE, R_INT_ENABLE, R_INT_VECTOR, R_OUT, R_RSP_LEN };
/* CRB registers: v[] */
enum { R_GRANTED, R_IDLE, R_CANCEL };

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Locked. */
static int tis_idle(const struct tpm_tis *t)
{
	if (t->fatal)
		return -ENOTSUP;
	if (t->pending || t->aborted || t->state == TPM_TIS_EXECUTION ||
	    t->state == TPM_TIS_RECEPTION)
		return -EAGAIN;
	return 0;
}

static int crb_idle(const struct tpm_crb *c)
{
	if (c->fatal)
		return -ENOTSUP;
	return c->busy || c->pending ? -EAGAIN : 0;
}

static int idle_logged(int ret)
{
	if (ret == -ENOTSUP)
		return error_errno(ret, "snapshot: the TPM has failed (swtpm is gone)");
	if (ret)
		return error_errno(ret, "snapshot: the TPM has a command in flight or being "
					"written: try again");
	return 0;
}

int tpm_snap_idle(const struct tpm_snap_if *i)
{
	int ret;

	if (i->tis) {
		pthread_mutex_lock(&i->t->lock);
		ret = tis_idle(i->t);
		pthread_mutex_unlock(&i->t->lock);
	} else {
		pthread_mutex_lock(&i->c->lock);
		ret = crb_idle(i->c);
		pthread_mutex_unlock(&i->c->lock);
	}
	return idle_logged(ret);
}

static int put_tis(struct tpm_tis *t, struct snap_buf *b)
{
	uint32_t v[TPM_SNAP_NREGS] = {0}, kind = KIND_TIS;
	int ret;

	pthread_mutex_lock(&t->lock);
	ret = tis_idle(t);
	if (!ret) {
		v[R_STATE] = t->state;
		v[R_ACTIVE] = t->active;
		v[R_INT_ENABLE] = t->int_enable;
		v[R_INT_VECTOR] = t->int_vector;
		if (t->state == TPM_TIS_COMPLETION)
			v[R_OUT] = (uint32_t)t->out, v[R_RSP_LEN] = (uint32_t)t->rsp_len;
		snap_buf_item(b, TPM_SNAP_KIND, &kind, sizeof(kind));
		snap_buf_item(b, TPM_SNAP_REGS, v, sizeof(v));
		snap_buf_item(b, TPM_SNAP_BUF, t->buf, v[R_RSP_LEN]);
	}
	pthread_mutex_unlock(&t->lock);
	return idle_logged(ret);
}

static int put_crb(struct tpm_crb *c, struct snap_buf *b)
{
	uint32_t v[TPM_SNAP_NREGS] = {0}, kind = KIND_CRB;
	int ret;

	pthread_mutex_lock(&c->lock);
	ret = crb_idle(c);
	if (!ret) {
		v[R_GRANTED] = c->granted;
		v[R_IDLE] = c->idle;
		v[R_CANCEL] = c->cancel;
		snap_buf_item(b, TPM_SNAP_KIND, &kind, sizeof(kind));
		snap_buf_item(b, TPM_SNAP_REGS, v, sizeof(v));
		snap_buf_item(b, TPM_SNAP_BUF, c->buf, sizeof(c->buf));
	}
	pthread_mutex_unlock(&c->lock);
	return idle_logged(ret);
}

int tpm_snap_put_regs(const struct tpm_snap_if *i, struct snap_buf *b)
{
	return i->tis ? put_tis(i->t, b) : put_crb(i->c, b);
}

void tpm_snap_put_blob(struct snap_buf *b, uint32_t type, const uint8_t *p, size_t len,
		       uint32_t flags)
{
	size_t mark = snap_buf_open(b, TPM_SNAP_BLOB);

	snap_buf_u32(b, type);
	snap_buf_u32(b, flags);
	if (len)
		snap_buf_put(b, p, len);
	snap_buf_close(b, mark);
}

/* Why these TIS registers cannot be (NULL: they can). */
static const char *tis_refused(const struct tpm_snap_regs *r)
{
	const uint32_t *v = r->v;

	if (v[R_STATE] != TPM_TIS_IDLE && v[R_STATE] != TPM_TIS_READY &&
	    v[R_STATE] != TPM_TIS_COMPLETION)
		return "a state with a command in flight or being written";
	if (v[R_ACTIVE] > 1)
		return "a flag is neither 0 nor 1";
	if ((v[R_INT_ENABLE] & ~TIS_INT_ENABLE_BITS) || v[R_INT_VECTOR] > 0xf)
		return "interrupt bits the registers never keep";
	if (v[R_STATE] != TPM_TIS_COMPLETION)
		return v[R_OUT] || v[R_RSP_LEN] || r->buf_len ? "a response outside COMPLETION"
							      : NULL;
	if (v[R_RSP_LEN] < TPM_HEADER_SIZE || v[R_RSP_LEN] > TPM_TIS_BUF_SIZE ||
	    r->buf_len != v[R_RSP_LEN] || be32(r->buf + 2) != v[R_RSP_LEN])
		return "a response that is not a whole TPM response";
	if (v[R_OUT] > v[R_RSP_LEN])
		return "a read position past the response";
	return NULL;
}

static const char *crb_refused(const struct tpm_snap_regs *r)
{
	if (r->v[R_GRANTED] > 1 || r->v[R_IDLE] > 1 || r->v[R_CANCEL] > 1)
		return "a flag is neither 0 nor 1";
	if (r->buf_len != TPM_CRB_BUF_SIZE)
		return "a buffer of another size";
	return NULL;
}

static int parse_blobs(struct snap_cur *in, struct tpm_snap_blobs *bl)
{
	static const uint32_t types[3] = {TPM_SWTPM_BLOB_PERMANENT, TPM_SWTPM_BLOB_VOLATILE,
					  TPM_SWTPM_BLOB_SAVESTATE};
	struct snap_cur body;
	uint32_t type;

	for (int k = 0; k < 3; k++) {
		if (snap_cur_want_any(in, TPM_SNAP_BLOB, &body) || snap_cur_u32(&body, &type) ||
		    snap_cur_u32(&body, &bl->flags[k]))
			return error_errno(-EBADMSG, "tpm: bad saved state");
		if (type != types[k] || (bl->flags[k] & ~TPM_SWTPM_BLOB_ENCRYPTED))
			return error_errno(-EINVAL, "tpm: saved state refused: a blob of another "
						    "type or with unknown flags");
		if (body.left > TPM_SWTPM_BLOB_MAX)
			return error_errno(-EINVAL, "tpm: saved state refused: a blob of %zu bytes",
					   body.left);
		bl->p[k] = body.left ? body.p : NULL;
		bl->len[k] = body.left;
	}
	if (bl->len[0] == 0)
		return error_errno(-EINVAL, "tpm: saved state refused: no permanent state");
	return 0;
}

int tpm_snap_parse(const struct tpm_snap_if *i, struct snap_cur *in, struct tpm_snap_regs *r,
		   struct tpm_snap_blobs *bl)
{
	struct snap_cur buf;
	uint32_t kind;
	const char *why;

	memset(r, 0, sizeof(*r));
	memset(bl, 0, sizeof(*bl));
	if (snap_cur_want(in, TPM_SNAP_KIND, &kind, sizeof(kind)) ||
	    snap_cur_want(in, TPM_SNAP_REGS, r->v, sizeof(r->v)) ||
	    snap_cur_want_any(in, TPM_SNAP_BUF, &buf))
		return error_errno(-EBADMSG, "tpm: bad saved state");
	if (kind != (i->tis ? KIND_TIS : KIND_CRB))
		return error_errno(-EINVAL, "tpm: saved state refused: the other interface");
	r->buf = buf.p;
	r->buf_len = buf.left;
	for (uint32_t k = i->tis ? R_RSP_LEN + 1 : R_CANCEL + 1; k < TPM_SNAP_NREGS; k++)
		if (r->v[k])
			return error_errno(-EINVAL, "tpm: saved state refused: unknown registers");
	why = i->tis ? tis_refused(r) : crb_refused(r);
	if (why)
		return error_errno(-EINVAL, "tpm: saved state refused: %s", why);
	return parse_blobs(in, bl);
}

void tpm_snap_apply(const struct tpm_snap_if *i, const struct tpm_snap_regs *r)
{
	if (i->tis) {
		struct tpm_tis *t = i->t;

		pthread_mutex_lock(&t->lock);
		t->state = (enum tpm_tis_state)r->v[R_STATE];
		t->active = r->v[R_ACTIVE];
		t->int_enable = r->v[R_INT_ENABLE];
		t->int_vector = (uint8_t)r->v[R_INT_VECTOR];
		t->in = 0;
		t->out = r->v[R_OUT];
		t->rsp_len = r->v[R_RSP_LEN];
		if (r->buf_len)
			memcpy(t->buf, r->buf, r->buf_len);
		pthread_mutex_unlock(&t->lock);
		return;
	}
	pthread_mutex_lock(&i->c->lock);
	i->c->granted = r->v[R_GRANTED];
	i->c->idle = r->v[R_IDLE];
	i->c->cancel = r->v[R_CANCEL];
	memcpy(i->c->buf, r->buf, TPM_CRB_BUF_SIZE);
	pthread_mutex_unlock(&i->c->lock);
}
