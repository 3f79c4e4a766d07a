/* SPDX-License-Identifier: MIT */
/*
 * aml.c - see aml.h. Opcode values and encodings from ACPI 6.5 §20.2
 * (AML grammar: §20.2.2 name objects, §20.2.3 data objects, §20.2.4
 * PkgLength, §20.2.5 term objects) and §6.4 (resource descriptors).
 */
#include <errno.h>
#include <string.h>

#include "arch/x86_64/aml.h"

#define AML_ZERO	  0x00
#define AML_ONE		  0x01
#define AML_ONES	  0xff
#define AML_NAME	  0x08
#define AML_BYTE_PREFIX	  0x0a
#define AML_WORD_PREFIX	  0x0b
#define AML_DWORD_PREFIX  0x0c
#define AML_STRING_PREFIX 0x0d
#define AML_QWORD_PREFIX  0x0e
#define AML_SCOPE	  0x10
#define AML_BUFFER	  0x11
#define AML_PACKAGE	  0x12
#define AML_METHOD	  0x14
#define AML_DUAL_NAME	  0x2e
#define AML_MULTI_NAME	  0x2f
#define AML_EXT_PREFIX	  0x5b
#define AML_EXT_DEVICE	  0x82
#define AML_RETURN	  0xa4
#define AML_ROOT_CHAR	  '\\'
#define AML_PARENT_CHAR	  '^'

#define PKGLEN_RESERVE 4 /* bytes reserved at open, compacted at close */

void aml_init(struct aml *a, uint8_t *buf, size_t cap)
{
	a->buf = buf;
	a->cap = cap;
	a->len = 0;
	a->err = 0;
}

void aml_bytes(struct aml *a, const void *p, size_t n)
{
	if (a->err)
		return;
	if (n > a->cap - a->len) {
		a->err = -ENOSPC;
		return;
	}
	memcpy(a->buf + a->len, p, n);
	a->len += n;
}

static void aml_byte(struct aml *a, uint8_t b)
{
	aml_bytes(a, &b, 1);
}

static int seg_char_ok(char c, int first)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

/* One NameSeg from s[0..n), padded with '_' to 4 characters. */
static int name_seg(struct aml *a, const char *s, size_t n)
{
	char seg[4] = {'_', '_', '_', '_'};

	if (!n || n > 4)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!seg_char_ok(s[i], i == 0))
			return -EINVAL;
		seg[i] = s[i];
	}
	aml_bytes(a, seg, 4);
	return 0;
}

void aml_name_string(struct aml *a, const char *path)
{
	const char *p = path;
	size_t nseg = 0;

	while (*p == AML_ROOT_CHAR || *p == AML_PARENT_CHAR)
		aml_byte(a, (uint8_t)*p++);
	for (const char *q = p; *q; q++)
		nseg += *q == '.';
	nseg = *p ? nseg + 1 : 0;
	if (nseg == 0) {
		aml_byte(a, 0); /* NullName */
		return;
	}
	if (nseg == 2) {
		aml_byte(a, AML_DUAL_NAME);
	} else if (nseg > 2) {
		if (nseg > 255) {
			a->err = a->err ? a->err : -EINVAL;
			return;
		}
		aml_byte(a, AML_MULTI_NAME);
		aml_byte(a, (uint8_t)nseg);
	}
	while (*p) {
		size_t n = strcspn(p, ".");

		if (name_seg(a, p, n) && !a->err)
			a->err = -EINVAL;
		p += n + (p[n] == '.');
	}
}

void aml_integer(struct aml *a, uint64_t v)
{
	uint8_t b[9];
	size_t n;

	if (v == 0 || v == 1) {
		aml_byte(a, v ? AML_ONE : AML_ZERO);
		return;
	}
	if (v == UINT64_MAX) {
		aml_byte(a, AML_ONES);
		return;
	}
	if (v <= 0xff) {
		b[0] = AML_BYTE_PREFIX, n = 1;
	} else if (v <= 0xffff) {
		b[0] = AML_WORD_PREFIX, n = 2;
	} else if (v <= 0xffffffffu) {
		b[0] = AML_DWORD_PREFIX, n = 4;
	} else {
		b[0] = AML_QWORD_PREFIX, n = 8;
	}
	for (size_t i = 0; i < n; i++)
		b[1 + i] = (uint8_t)(v >> (8 * i));
	aml_bytes(a, b, n + 1);
}

void aml_string(struct aml *a, const char *s)
{
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x01 || (unsigned char)*p > 0x7f)
			a->err = a->err ? a->err : -EINVAL;
	aml_byte(a, AML_STRING_PREFIX);
	aml_bytes(a, s, strlen(s) + 1);
}

/*
 * "PNPdddd": three uppercase letters packed 5 bits each ('A' = 1) into the
 * top 15 bits of a big-endian 16-bit value, then 4 hex digits; the 32-bit
 * result is stored in the byte order of the compressed ID.
 */
void aml_eisaid(struct aml *a, const char *id)
{
	uint32_t v = 0;

	if (strlen(id) != 7) {
		a->err = a->err ? a->err : -EINVAL;
		return;
	}
	for (int i = 0; i < 3; i++) {
		if (id[i] < 'A' || id[i] > 'Z') {
			a->err = a->err ? a->err : -EINVAL;
			return;
		}
		v = v << 5 | (uint32_t)(id[i] - 'A' + 1);
	}
	for (int i = 3; i < 7; i++) {
		char c = id[i];
		uint32_t d = c >= '0' && c <= '9'   ? (uint32_t)(c - '0')
			     : c >= 'A' && c <= 'F' ? (uint32_t)(c - 'A' + 10)
						    : 16;

		if (d > 15) {
			a->err = a->err ? a->err : -EINVAL;
			return;
		}
		v = v << 4 | d;
	}
	/* Bytes in order: v[31:24], v[23:16], v[15:8], v[7:0]. */
	aml_byte(a, AML_DWORD_PREFIX);
	aml_byte(a, (uint8_t)(v >> 24));
	aml_byte(a, (uint8_t)(v >> 16));
	aml_byte(a, (uint8_t)(v >> 8));
	aml_byte(a, (uint8_t)v);
}

/* Reserve room for a PkgLength; aml_close() writes and compacts it. */
static size_t pkg_open(struct aml *a)
{
	static const uint8_t zero[PKGLEN_RESERVE];
	size_t at = a->len;

	aml_bytes(a, zero, PKGLEN_RESERVE);
	return at;
}

void aml_close(struct aml *a, size_t at)
{
	size_t body, total, n;

	if (a->err)
		return;
	body = a->len - at - PKGLEN_RESERVE;
	/* §20.2.4: the length counts the PkgLength bytes themselves. */
	for (n = 1; n <= 4; n++) {
		total = body + n;
		if ((n == 1 && total < 0x40) || (n > 1 && total < (1ull << (4 + 8 * (n - 1)))))
			break;
	}
	if (n > 4) {
		a->err = -ENOSPC;
		return;
	}
	if (n == 1) {
		a->buf[at] = (uint8_t)total;
	} else {
		a->buf[at] = (uint8_t)((n - 1) << 6 | (total & 0xf));
		for (size_t i = 1; i < n; i++)
			a->buf[at + i] = (uint8_t)(total >> (4 + 8 * (i - 1)));
	}
	memmove(a->buf + at + n, a->buf + at + PKGLEN_RESERVE, body);
	a->len -= PKGLEN_RESERVE - n;
}

void aml_buffer(struct aml *a, const uint8_t *bytes, size_t n)
{
	size_t at;

	aml_byte(a, AML_BUFFER);
	at = pkg_open(a);
	aml_integer(a, n);
	aml_bytes(a, bytes, n);
	aml_close(a, at);
}

void aml_name(struct aml *a, const char *path)
{
	aml_byte(a, AML_NAME);
	aml_name_string(a, path);
}

void aml_name_integer(struct aml *a, const char *path, uint64_t v)
{
	aml_name(a, path);
	aml_integer(a, v);
}

void aml_name_string_obj(struct aml *a, const char *path, const char *s)
{
	aml_name(a, path);
	aml_string(a, s);
}

void aml_name_eisaid(struct aml *a, const char *path, const char *id)
{
	aml_name(a, path);
	aml_eisaid(a, id);
}

size_t aml_scope_open(struct aml *a, const char *path)
{
	size_t at;

	aml_byte(a, AML_SCOPE);
	at = pkg_open(a);
	aml_name_string(a, path);
	return at;
}

size_t aml_device_open(struct aml *a, const char *path)
{
	size_t at;

	aml_byte(a, AML_EXT_PREFIX);
	aml_byte(a, AML_EXT_DEVICE);
	at = pkg_open(a);
	aml_name_string(a, path);
	return at;
}

size_t aml_method_open(struct aml *a, const char *path, unsigned nargs, int serialized)
{
	size_t at;

	if (nargs > 7)
		a->err = a->err ? a->err : -EINVAL;
	aml_byte(a, AML_METHOD);
	at = pkg_open(a);
	aml_name_string(a, path);
	/* MethodFlags: ArgCount [2:0], SerializeFlag [3], SyncLevel [7:4] 0. */
	aml_byte(a, (uint8_t)((nargs & 7) | (serialized ? 8 : 0)));
	return at;
}

size_t aml_package_open(struct aml *a, unsigned n_elements)
{
	size_t at;

	if (n_elements > 255)
		a->err = a->err ? a->err : -EINVAL;
	aml_byte(a, AML_PACKAGE);
	at = pkg_open(a);
	aml_byte(a, (uint8_t)n_elements);
	return at;
}

void aml_return_integer(struct aml *a, uint64_t v)
{
	aml_byte(a, AML_RETURN);
	aml_integer(a, v);
}

/* ---- resource templates (§6.4) ------------------------------------------ */

static void rt_bytes(struct aml_rt *rt, const uint8_t *p, size_t n)
{
	if (rt->err)
		return;
	if (n > sizeof(rt->b) - rt->len) {
		rt->err = -ENOSPC;
		return;
	}
	memcpy(rt->b + rt->len, p, n);
	rt->len += n;
}

static void le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* §6.4.2.5 I/O Port Descriptor: 16-bit decode, fixed base. */
void aml_rt_io(struct aml_rt *rt, uint16_t base, uint8_t len)
{
	uint8_t d[8] = {0x47, 0x01};

	le(d + 2, base, 2);
	le(d + 4, base, 2);
	d[6] = 1; /* alignment */
	d[7] = len;
	rt_bytes(rt, d, sizeof(d));
}

/* §6.4.2.1 IRQ Descriptor without the information byte (edge, high). */
void aml_rt_irq(struct aml_rt *rt, unsigned irq)
{
	uint8_t d[3] = {0x22};

	if (irq > 15) {
		rt->err = -EINVAL;
		return;
	}
	le(d + 1, 1u << irq, 2);
	rt_bytes(rt, d, sizeof(d));
}

/*
 * §6.4.3.5.2/3 DWord and Word Address Space Descriptors: tag, length,
 * resource type (0 memory, 1 I/O, 2 bus), general flags (0x0c: producer,
 * MinFixed, MaxFixed, positive decode), type-specific flags, then
 * granularity, min, max, translation and length, each `width` bytes.
 */
static void rt_addr(struct aml_rt *rt, uint8_t tag, size_t width, uint8_t type, uint8_t tflags,
		    uint64_t min, uint64_t max)
{
	uint8_t d[6 + 5 * 4] = {tag};
	size_t n = 6 + 5 * width;

	le(d + 1, n - 3, 2);
	d[3] = type;
	d[4] = 0x0c;
	d[5] = tflags;
	le(d + 6, 0, width);
	le(d + 6 + width, min, width);
	le(d + 6 + 2 * width, max, width);
	le(d + 6 + 3 * width, 0, width);
	le(d + 6 + 4 * width, max - min + 1, width);
	rt_bytes(rt, d, n);
}

void aml_rt_word_bus(struct aml_rt *rt, uint16_t min, uint16_t max)
{
	rt_addr(rt, 0x88, 2, 2, 0, min, max);
}

void aml_rt_word_io(struct aml_rt *rt, uint16_t min, uint16_t max)
{
	rt_addr(rt, 0x88, 2, 1, 0x03, min, max); /* ISA and non-ISA ranges */
}

/* Memory, read/write, non-cacheable. */
void aml_rt_dword_mem(struct aml_rt *rt, uint32_t min, uint32_t max)
{
	rt_addr(rt, 0x87, 4, 0, 0x01, min, max);
}

/* §6.4.3.4 32-Bit Fixed Memory Range Descriptor, read/write. */
void aml_rt_mem32_fixed(struct aml_rt *rt, uint32_t base, uint32_t len)
{
	uint8_t d[12] = {0x86, 9, 0, 0x01};

	le(d + 4, base, 4);
	le(d + 8, len, 4);
	rt_bytes(rt, d, sizeof(d));
}

/* §6.4.2.9 End Tag; checksum 0 means "treat as valid". */
void aml_rt_end(struct aml_rt *rt)
{
	static const uint8_t d[2] = {0x79, 0x00};

	rt_bytes(rt, d, sizeof(d));
}

void aml_name_rt(struct aml *a, const char *path, const struct aml_rt *rt)
{
	if (rt->err)
		a->err = a->err ? a->err : rt->err;
	aml_name(a, path);
	aml_buffer(a, rt->b, rt->len);
}
