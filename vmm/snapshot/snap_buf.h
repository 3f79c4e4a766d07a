/* SPDX-License-Identifier: MIT */
/*
 * snap_buf.h - the bytes of a snapshot: a growing buffer to write state
 * into and a bounded cursor to read it back (docs/snapshot.md).
 *
 * State is a sequence of items: u32 tag, u32 length, the bytes, zero
 * padding to a multiple of 4; all integers little endian. Items nest: a
 * device's item holds its own items. Writers cannot fail midway: the
 * first allocation failure is kept in b->err and every later call is a
 * no-op. Readers never trust the bytes: every length is checked against
 * what is left before anything is read, padding must be zero, and an item
 * asked for by tag and size must have exactly that tag and size.
 */
#ifndef VMLET_SNAP_BUF_H
#define VMLET_SNAP_BUF_H

#include <stddef.h>
#include <stdint.h>

struct snap_buf {
	uint8_t *p;
	size_t len, cap;
	int err; /* first failure (-ENOMEM, -E2BIG), 0 */
};

/* Largest buffer a writer builds (the snapshot's state, not its memory). */
#define SNAP_BUF_MAX (256u << 20)

void snap_buf_put(struct snap_buf *b, const void *data, size_t len);
void snap_buf_u32(struct snap_buf *b, uint32_t v);
void snap_buf_u64(struct snap_buf *b, uint64_t v);
/* One item of len bytes (len < 2^32). */
void snap_buf_item(struct snap_buf *b, uint32_t tag, const void *data, size_t len);
/* An item whose bytes are what is written until snap_buf_close(b, mark):
 * returns the mark. */
size_t snap_buf_open(struct snap_buf *b, uint32_t tag);
void snap_buf_close(struct snap_buf *b, size_t mark);
void snap_buf_release(struct snap_buf *b);

struct snap_cur {
	const uint8_t *p;
	size_t left;
};

static inline struct snap_cur snap_cur_make(const void *p, size_t len)
{
	return (struct snap_cur){(const uint8_t *)p, len};
}

/* The next item: its tag and a cursor over its bytes. 0, -ENOENT at the
 * end, or -EBADMSG (a header or length past the end, non-zero padding). */
int snap_cur_next(struct snap_cur *c, uint32_t *tag, struct snap_cur *body);
/* The next item must be tag with exactly len bytes: copied to out.
 * 0 or -EBADMSG. */
int snap_cur_want(struct snap_cur *c, uint32_t tag, void *out, size_t len);
/* The next item must be tag: its bytes in *body (any length). */
int snap_cur_want_any(struct snap_cur *c, uint32_t tag, struct snap_cur *body);
/* Fixed-size reads inside an item's bytes. 0 or -EBADMSG. */
int snap_cur_u32(struct snap_cur *c, uint32_t *v);
int snap_cur_u64(struct snap_cur *c, uint64_t *v);
int snap_cur_bytes(struct snap_cur *c, void *out, size_t len);

/* CRC-32C (Castagnoli) of len bytes, continuing from crc (start with 0). */
uint32_t snap_crc32c(uint32_t crc, const void *data, size_t len);

#endif /* VMLET_SNAP_BUF_H */
