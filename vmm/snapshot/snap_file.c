/* SPDX-License-Identifier: MIT */
/*
 * snap_file.c - write and check the snapshot's state file (snap_file.h).
 *
 * Header (SNAP_HEADER_SIZE bytes, little endian):
 *    0 magic "VMLTSNAP"      8 version        12 header size
 *   16 vendor               20 vCPUs          24 memory bytes
 *   32 XCR0                 40 writer[24]     64 features
 *   68 CRC-32C of bytes 0..67
 * Section header (SNAP_SECTION_HDR bytes): type, id, u64 length, CRC-32C
 * of those 16 header bytes and then the section's bytes, reserved 0; the
 * bytes follow, zero-padded to 8.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/snapshot/snap_file.h"

static const uint8_t zeros[8];

void snap_file_begin(struct snap_buf *b, const struct snap_header *h)
{
	size_t start = b->len;
	char writer[sizeof(h->writer)] = {0};

	snprintf(writer, sizeof(writer), "%s", h->writer);
	snap_buf_put(b, SNAP_MAGIC, 8);
	snap_buf_u32(b, h->version);
	snap_buf_u32(b, SNAP_HEADER_SIZE);
	snap_buf_u32(b, h->vendor);
	snap_buf_u32(b, h->n_vcpus);
	snap_buf_u64(b, h->memory_bytes);
	snap_buf_u64(b, h->xcr0);
	snap_buf_put(b, writer, sizeof(writer));
	snap_buf_u32(b, h->features);
	if (!b->err)
		snap_buf_u32(b, snap_crc32c(0, b->p + start, b->len - start));
}

void snap_file_section(struct snap_buf *b, uint32_t type, uint32_t id, const void *data, size_t len)
{
	size_t start = b->len;
	uint32_t crc;

	snap_buf_u32(b, type);
	snap_buf_u32(b, id);
	snap_buf_u64(b, len);
	crc = b->err ? 0 : snap_crc32c(0, b->p + start, 16);
	snap_buf_u32(b, snap_crc32c(crc, data, len));
	snap_buf_u32(b, 0);
	snap_buf_put(b, data, len);
	snap_buf_put(b, zeros, (8 - (len & 7)) & 7);
}

void snap_file_end(struct snap_buf *b)
{
	snap_file_section(b, SNAP_SEC_END, 0, NULL, 0);
}

static int bad(char *err, size_t errlen, int ret, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int bad(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

static int parse_header(struct snap_cur *c, struct snap_header *h, char *err, size_t errlen)
{
	const uint8_t *start = c->p;
	uint32_t hsize, crc;
	char magic[8];

	if (c->left < SNAP_HEADER_SIZE)
		return bad(err, errlen, -EBADMSG, "truncated: %zu bytes, the header alone is %u",
			   c->left, SNAP_HEADER_SIZE);
	snap_cur_bytes(c, magic, sizeof(magic));
	if (memcmp(magic, SNAP_MAGIC, sizeof(magic)))
		return bad(err, errlen, -EBADMSG, "not a vmlet snapshot (bad magic)");
	snap_cur_u32(c, &h->version);
	snap_cur_u32(c, &hsize);
	if (h->version != SNAP_VERSION)
		return bad(err, errlen, -ENOTSUP,
			   "snapshot format version %u, this vmlet reads version %u", h->version,
			   SNAP_VERSION);
	if (hsize != SNAP_HEADER_SIZE)
		return bad(err, errlen, -EBADMSG, "header size %u, want %u", hsize,
			   SNAP_HEADER_SIZE);
	snap_cur_u32(c, &h->vendor);
	snap_cur_u32(c, &h->n_vcpus);
	snap_cur_u64(c, &h->memory_bytes);
	snap_cur_u64(c, &h->xcr0);
	snap_cur_bytes(c, h->writer, sizeof(h->writer));
	snap_cur_u32(c, &h->features);
	snap_cur_u32(c, &crc);
	if (crc != snap_crc32c(0, start, SNAP_HEADER_SIZE - 4))
		return bad(err, errlen, -EBADMSG, "header checksum mismatch");
	if (memchr(h->writer, 0, sizeof(h->writer)) == NULL)
		return bad(err, errlen, -EBADMSG, "header: writer name is not terminated");
	return 0;
}

static bool type_known(uint32_t t)
{
	return (t >= SNAP_SEC_CONFIG && t <= SNAP_SEC_INPUT) || t == SNAP_SEC_END;
}

/* One section at c (offset off in the file) into *s. */
static int parse_section(struct snap_cur *c, size_t off, struct snap_section *s, char *err,
			 size_t errlen)
{
	const uint8_t *hdr = c->p;
	uint32_t crc, reserved;
	uint64_t len;
	size_t pad;

	if (c->left < SNAP_SECTION_HDR)
		return bad(err, errlen, -EBADMSG,
			   "truncated at offset %zu: a section header needs %u bytes, %zu left",
			   off, SNAP_SECTION_HDR, c->left);
	snap_cur_u32(c, &s->type);
	snap_cur_u32(c, &s->id);
	snap_cur_u64(c, &len);
	snap_cur_u32(c, &crc);
	snap_cur_u32(c, &reserved);
	s->offset = off;
	if (!type_known(s->type) || reserved)
		return bad(err, errlen, -EBADMSG, "section at offset %zu: unknown type %u", off,
			   s->type);
	if (len > c->left)
		return bad(err, errlen, -EBADMSG,
			   "section at offset %zu: length %llu runs past the end of the file "
			   "(%zu bytes left)",
			   off, (unsigned long long)len, c->left);
	s->data = c->p;
	s->len = (size_t)len;
	c->p += s->len;
	c->left -= s->len;
	pad = (8 - (s->len & 7)) & 7;
	if (pad > c->left || memcmp(c->p, zeros, pad))
		return bad(err, errlen, -EBADMSG, "section at offset %zu: bad padding", off);
	c->p += pad;
	c->left -= pad;
	if (crc != snap_crc32c(snap_crc32c(0, hdr, 16), s->data, s->len))
		return bad(err, errlen, -EBADMSG,
			   "section at offset %zu (type %u): checksum mismatch", off, s->type);
	return 0;
}

int snap_file_parse(const void *data, size_t len, struct snap_file *f, char *err, size_t errlen)
{
	struct snap_cur c = snap_cur_make(data, len);
	struct snap_section s;
	int ret;

	memset(f, 0, sizeof(*f));
	if (len > SNAP_MAX_STATE)
		return bad(err, errlen, -EBADMSG, "%zu bytes, more than a state file has", len);
	ret = parse_header(&c, &f->hdr, err, errlen);
	if (ret)
		return ret;
	for (;;) {
		size_t off = len - c.left;

		ret = parse_section(&c, off, &s, err, errlen);
		if (ret)
			goto fail;
		if (s.type == SNAP_SEC_END)
			break;
		if (f->n >= SNAP_MAX_SECTIONS) {
			ret =
			    bad(err, errlen, -EBADMSG, "more than %u sections", SNAP_MAX_SECTIONS);
			goto fail;
		}
		if (snap_file_find(f, s.type, s.id)) {
			ret = bad(err, errlen, -EBADMSG,
				  "section at offset %zu: type %u id %u appears twice", off, s.type,
				  s.id);
			goto fail;
		}
		if (!(f->n & 63)) {
			struct snap_section *g = realloc(f->sec, (f->n + 64) * sizeof(*g));

			if (!g) {
				ret = -ENOMEM;
				goto fail;
			}
			f->sec = g;
		}
		f->sec[f->n++] = s;
	}
	if (c.left) {
		ret = bad(err, errlen, -EBADMSG, "%zu bytes after the end section", c.left);
		goto fail;
	}
	return 0;
fail:
	snap_file_release(f);
	return ret;
}

const struct snap_section *snap_file_find(const struct snap_file *f, uint32_t type, uint32_t id)
{
	for (unsigned int i = 0; i < f->n; i++)
		if (f->sec[i].type == type && f->sec[i].id == id)
			return &f->sec[i];
	return NULL;
}

void snap_file_release(struct snap_file *f)
{
	free(f->sec);
	f->sec = NULL;
	f->n = 0;
}
