/* SPDX-License-Identifier: MIT */
/*
 * snap_buf.c - snapshot items: the writer's buffer and the reader's
 * bounded cursor (snap_buf.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/snapshot/snap_buf.h"

static int buf_grow(struct snap_buf *b, size_t more)
{
	size_t cap;
	uint8_t *p;

	if (b->err)
		return b->err;
	if (more > SNAP_BUF_MAX - b->len) {
		b->err = -E2BIG;
		return b->err;
	}
	if (b->len + more <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return b->err;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void snap_buf_put(struct snap_buf *b, const void *data, size_t len)
{
	if (!len || buf_grow(b, len))
		return;
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

void snap_buf_u32(struct snap_buf *b, uint32_t v)
{
	uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	snap_buf_put(b, le, sizeof(le));
}

void snap_buf_u64(struct snap_buf *b, uint64_t v)
{
	snap_buf_u32(b, (uint32_t)v);
	snap_buf_u32(b, (uint32_t)(v >> 32));
}

static void buf_pad(struct snap_buf *b)
{
	static const uint8_t zero[4];

	snap_buf_put(b, zero, (4 - (b->len & 3)) & 3);
}

void snap_buf_item(struct snap_buf *b, uint32_t tag, const void *data, size_t len)
{
	if (len > UINT32_MAX) {
		if (!b->err)
			b->err = -E2BIG;
		return;
	}
	snap_buf_u32(b, tag);
	snap_buf_u32(b, (uint32_t)len);
	snap_buf_put(b, data, len);
	buf_pad(b);
}

size_t snap_buf_open(struct snap_buf *b, uint32_t tag)
{
	snap_buf_u32(b, tag);
	snap_buf_u32(b, 0);
	return b->len;
}

void snap_buf_close(struct snap_buf *b, size_t mark)
{
	size_t len;

	if (b->err || mark < 8 || mark > b->len)
		return;
	len = b->len - mark;
	if (len > UINT32_MAX) {
		b->err = -E2BIG;
		return;
	}
	for (int i = 0; i < 4; i++)
		b->p[mark - 4 + i] = (uint8_t)(len >> (8 * i));
	buf_pad(b);
}

void snap_buf_release(struct snap_buf *b)
{
	free(b->p);
	*b = (struct snap_buf){0};
}

int snap_cur_bytes(struct snap_cur *c, void *out, size_t len)
{
	if (len > c->left)
		return -EBADMSG;
	if (len)
		memcpy(out, c->p, len);
	c->p += len;
	c->left -= len;
	return 0;
}

int snap_cur_u32(struct snap_cur *c, uint32_t *v)
{
	uint8_t le[4];

	if (snap_cur_bytes(c, le, sizeof(le)))
		return -EBADMSG;
	*v = le[0] | (uint32_t)le[1] << 8 | (uint32_t)le[2] << 16 | (uint32_t)le[3] << 24;
	return 0;
}

int snap_cur_u64(struct snap_cur *c, uint64_t *v)
{
	uint32_t lo, hi;

	if (snap_cur_u32(c, &lo) || snap_cur_u32(c, &hi))
		return -EBADMSG;
	*v = lo | (uint64_t)hi << 32;
	return 0;
}

int snap_cur_next(struct snap_cur *c, uint32_t *tag, struct snap_cur *body)
{
	struct snap_cur t = *c;
	uint32_t len;
	size_t pad;

	if (!c->left)
		return -ENOENT;
	if (snap_cur_u32(&t, tag) || snap_cur_u32(&t, &len) || len > t.left)
		return -EBADMSG;
	*body = snap_cur_make(t.p, len);
	t.p += len;
	t.left -= len;
	pad = (4 - (len & 3)) & 3;
	if (pad > t.left)
		return -EBADMSG;
	for (size_t i = 0; i < pad; i++)
		if (t.p[i])
			return -EBADMSG;
	t.p += pad;
	t.left -= pad;
	*c = t;
	return 0;
}

int snap_cur_want_any(struct snap_cur *c, uint32_t tag, struct snap_cur *body)
{
	struct snap_cur t = *c;
	uint32_t got;

	if (snap_cur_next(&t, &got, body) || got != tag)
		return -EBADMSG;
	*c = t;
	return 0;
}

int snap_cur_want(struct snap_cur *c, uint32_t tag, void *out, size_t len)
{
	struct snap_cur t = *c, body;

	if (snap_cur_want_any(&t, tag, &body) || body.left != len)
		return -EBADMSG;
	memcpy(out, body.p, len);
	*c = t;
	return 0;
}

uint32_t snap_crc32c(uint32_t crc, const void *data, size_t len)
{
	static uint32_t table[256];
	static int ready;
	const uint8_t *p = data;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t v = i;

			for (int k = 0; k < 8; k++)
				v = v & 1 ? (v >> 1) ^ 0x82f63b78u : v >> 1;
			table[i] = v;
		}
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
