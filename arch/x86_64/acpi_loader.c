/* SPDX-License-Identifier: MIT */
/*
 * acpi_loader.c - vmlet's ACPI tables as a BIOS firmware loads them through
 * fw_cfg: two files and the script that links them (QEMU's "table-loader"
 * format, which SeaBIOS and OVMF execute; its commands are 128-byte
 * little-endian records):
 *
 *   ALLOCATE     (1)  file[56], u32 align, u8 zone (1 high memory, 2 the
 *                     0xF0000 segment): copy the file into guest memory
 *   ADD_POINTER  (2)  dest[56], src[56], u32 offset, u8 size: add the
 *                     address src was loaded at to the size-byte integer at
 *                     offset of dest
 *   ADD_CHECKSUM (3)  file[56], u32 offset, u32 start, u32 length: make
 *                     [start, start+length) sum to zero through the byte at
 *                     offset, which lies in the range and must be 0 in the
 *                     file: SeaBIOS subtracts the range's sum from it, OVMF
 *                     (EDK II's CalculateCheckSum8) overwrites it with the
 *                     negated sum; only a zero byte gives both the same
 *                     result (OVMF left a FADT whose byte was the
 *                     precomputed checksum unrecognised: no FADT for Linux)
 *
 * The RSDP goes to the F segment, where an OS scans for it; everything else
 * to high memory. A pointer in the files holds its target's offset within
 * the tables file until the firmware adds where that file landed.
 */
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64/acpi_tables.h"
#include "arch/x86_64/util.h"

#define LOADER_ALLOCATE	    1
#define LOADER_ADD_POINTER  2
#define LOADER_ADD_CHECKSUM 3
#define LOADER_ZONE_HIGH    1
#define LOADER_ZONE_FSEG    2
#define LOADER_FILESZ	    56
#define LOADER_CMD_SIZE	    128

struct loader {
	uint8_t *buf;
	size_t cap, len;
	int err;
};

static uint8_t *loader_cmd(struct loader *l, uint32_t cmd)
{
	uint8_t *c;

	if (l->err || l->cap - l->len < LOADER_CMD_SIZE) {
		l->err = -ENOSPC;
		return NULL;
	}
	c = l->buf + l->len;
	memset(c, 0, LOADER_CMD_SIZE);
	arch_put_le32(c, cmd);
	l->len += LOADER_CMD_SIZE;
	return c;
}

static void loader_alloc(struct loader *l, const char *file, uint32_t align, uint8_t zone)
{
	uint8_t *c = loader_cmd(l, LOADER_ALLOCATE);

	if (!c)
		return;
	strncpy((char *)c + 4, file, LOADER_FILESZ - 1);
	arch_put_le32(c + 4 + LOADER_FILESZ, align);
	c[8 + LOADER_FILESZ] = zone;
}

static void loader_pointer(struct loader *l, const char *dest, uint32_t off, uint8_t size)
{
	uint8_t *c = loader_cmd(l, LOADER_ADD_POINTER);

	if (!c)
		return;
	strncpy((char *)c + 4, dest, LOADER_FILESZ - 1);
	strncpy((char *)c + 4 + LOADER_FILESZ, ARCH_ACPI_FILE_TABLES, LOADER_FILESZ - 1);
	arch_put_le32(c + 4 + 2 * LOADER_FILESZ, off);
	c[8 + 2 * LOADER_FILESZ] = size;
}

static void loader_checksum(struct loader *l, const char *file, uint32_t off, uint32_t start,
			    uint32_t len)
{
	uint8_t *c = loader_cmd(l, LOADER_ADD_CHECKSUM);

	if (!c)
		return;
	strncpy((char *)c + 4, file, LOADER_FILESZ - 1);
	arch_put_le32(c + 4 + LOADER_FILESZ, off);
	arch_put_le32(c + 8 + LOADER_FILESZ, start);
	arch_put_le32(c + 12 + LOADER_FILESZ, len);
}

/* loader_checksum() for a range of the buffer p whose file starts at
 * p[file_start]: the checksum byte is zeroed first (see ADD_CHECKSUM) */
static void loader_checksum_zeroed(struct loader *l, uint8_t *p, const char *file,
				   size_t file_start, size_t off, size_t start, size_t len)
{
	p[off] = 0;
	loader_checksum(l, file, (uint32_t)(off - file_start), (uint32_t)(start - file_start),
			(uint32_t)len);
}

static uint64_t get_le(const uint8_t *p, unsigned int size)
{
	uint64_t v = 0;

	for (unsigned int i = size; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void put_le(uint8_t *p, unsigned int size, uint64_t v)
{
	for (unsigned int i = 0; i < size; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

struct blob {
	uint8_t *p;
	size_t used, tables; /* tables: offset of the tables file in p */
	uint64_t base;
};

/*
 * Turn the absolute pointer at p[at] (size bytes; 0 = none) into an
 * offset into the tables file and emit its ADD_POINTER for dest (whose
 * file starts at p[dest_start]). *target = the pointed-to offset in p.
 */
static int relink(struct blob *b, struct loader *l, const char *dest, size_t dest_start, size_t at,
		  unsigned int size, size_t *target)
{
	uint64_t v = get_le(b->p + at, size);

	*target = 0;
	if (!v)
		return 0;
	if (v < b->base + b->tables || v >= b->base + b->used)
		return -EINVAL;
	*target = (size_t)(v - b->base);
	put_le(b->p + at, size, v - b->base - b->tables);
	loader_pointer(l, dest, (uint32_t)(at - dest_start), (uint8_t)size);
	return 0;
}

static int table_len(const struct blob *b, size_t off, uint32_t *len)
{
	if (off + sizeof(struct acpi_header) > b->used)
		return -EINVAL;
	*len = (uint32_t)get_le(b->p + off + 4, 4);
	return *len < sizeof(struct acpi_header) || *len > b->used - off ? -EINVAL : 0;
}

/* FADT: FIRMWARE_CTRL, DSDT and their 64-bit forms (ACPI 6.5 §5.2.9). */
static int relink_fadt(struct blob *b, struct loader *l, size_t fadt, uint32_t len)
{
	static const struct {
		size_t off;
		unsigned int size;
	} ptr[] = {{36, 4}, {40, 4}, {132, 8}, {140, 8}};
	size_t t;
	int r = 0;

	for (size_t i = 0; i < sizeof(ptr) / sizeof(ptr[0]) && !r; i++)
		if (ptr[i].off + ptr[i].size <= len)
			r = relink(b, l, ARCH_ACPI_FILE_TABLES, b->tables, fadt + ptr[i].off,
				   ptr[i].size, &t);
	return r;
}

/* The XSDT's entries and what they point to; then its checksum. */
static int relink_xsdt(struct blob *b, struct loader *l, size_t xsdt)
{
	uint32_t len, tlen;
	size_t t;
	int r = table_len(b, xsdt, &len);

	for (size_t e = sizeof(struct acpi_header); !r && e + 8 <= len; e += 8) {
		r = relink(b, l, ARCH_ACPI_FILE_TABLES, b->tables, xsdt + e, 8, &t);
		if (r || !t)
			continue;
		r = table_len(b, t, &tlen);
		if (!r && !memcmp(b->p + t, "FACP", 4)) {
			r = relink_fadt(b, l, t, tlen);
			loader_checksum_zeroed(l, b->p, ARCH_ACPI_FILE_TABLES, b->tables, t + 9, t,
					       tlen);
		}
	}
	if (!r)
		loader_checksum_zeroed(l, b->p, ARCH_ACPI_FILE_TABLES, b->tables, xsdt + 9, xsdt,
				       len);
	return r;
}

int arch_acpi_loader_build(uint8_t *tables, size_t used, gpa_t base, uint8_t *script, size_t cap,
			   size_t *script_len, size_t *tables_off)
{
	struct blob b = {tables, used, 64, base};
	struct loader l = {script, cap, 0, 0};
	size_t xsdt, rsdt;
	int r;

	/* arch_acpi_build(): the RSDP first, the FACS 64-byte aligned after it */
	if (!tables || used <= b.tables || memcmp(tables, "RSD PTR ", 8) || tables[15] < 2)
		return -EINVAL;
	loader_alloc(&l, ARCH_ACPI_FILE_RSDP, 16, LOADER_ZONE_FSEG);
	loader_alloc(&l, ARCH_ACPI_FILE_TABLES, 64, LOADER_ZONE_HIGH);
	r = relink(&b, &l, ARCH_ACPI_FILE_RSDP, 0, 16, 4, &rsdt);
	if (!r)
		r = relink(&b, &l, ARCH_ACPI_FILE_RSDP, 0, 24, 8, &xsdt);
	if (!r && (rsdt || !xsdt))
		r = -EINVAL; /* vmlet's RSDP points to an XSDT only */
	if (!r)
		r = relink_xsdt(&b, &l, xsdt);
	/* RSDP checksums: the first 20 bytes, then all 36 */
	loader_checksum_zeroed(&l, tables, ARCH_ACPI_FILE_RSDP, 0, 8, 0, 20);
	loader_checksum_zeroed(&l, tables, ARCH_ACPI_FILE_RSDP, 0, 32, 0, ARCH_ACPI_RSDP_SIZE);
	if (r)
		return r;
	if (l.err)
		return l.err;
	*script_len = l.len;
	*tables_off = b.tables;
	return 0;
}
