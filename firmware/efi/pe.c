// SPDX-License-Identifier: MIT
/* pe.c - PE32+ parsing, loading and base relocation. */
#include "firmware/efi/pe.h"

#define COFF_SIZE    20u
#define OPT_MIN	     112u /* PE32+ optional header up to the data directories */
#define SECT_SIZE    40u
#define DIR_CERT     4
#define DIR_RELOC    5
#define REL_ABSOLUTE 0
#define REL_HIGHLOW  3
#define REL_DIR64    10

static int pe_sections_ok(const uint8_t *f, uint64_t len, const struct pe_image *img)
{
	for (unsigned int i = 0; i < img->n_sections; i++) {
		const uint8_t *s = f + img->sections_off + i * SECT_SIZE;
		uint32_t vsize = le32(s + 8), va = le32(s + 12);
		uint32_t raw = le32(s + 16), roff = le32(s + 20);
		uint32_t copy = vsize && vsize < raw ? vsize : raw;

		if (!in_bounds(va, vsize > raw ? vsize : raw, img->size_of_image))
			return -FW_EBADMSG;
		if (copy && !in_bounds(roff, copy, len))
			return -FW_EBADMSG;
	}
	return 0;
}

int pe_parse(const void *file, uint64_t len, struct pe_image *out)
{
	const uint8_t *f = file, *coff, *opt;
	uint32_t lfanew, optsize, ndirs;

	memset(out, 0, sizeof(*out));
	if (len < 0x40 || f[0] != 'M' || f[1] != 'Z')
		return -FW_EBADMSG;
	lfanew = le32(f + 0x3c);
	if (!in_bounds(lfanew, 4 + COFF_SIZE, len) || memcmp(f + lfanew, "PE\0\0", 4))
		return -FW_EBADMSG;
	coff = f + lfanew + 4;
	if (le16(coff) != 0x8664)
		return -FW_ENOTSUP;
	out->n_sections = le16(coff + 2);
	optsize = le16(coff + 16);
	out->relocs_stripped = le16(coff + 18) & 1;
	if (optsize < OPT_MIN || !in_bounds(lfanew + 4 + COFF_SIZE, optsize, len))
		return -FW_EBADMSG;
	opt = coff + COFF_SIZE;
	if (le16(opt) != 0x20b)
		return -FW_ENOTSUP;
	out->entry_rva = le32(opt + 16);
	out->image_base = le64(opt + 24);
	out->section_align = le32(opt + 32);
	out->size_of_image = le32(opt + 56);
	out->size_of_headers = le32(opt + 60);
	out->subsystem = le16(opt + 68);
	ndirs = le32(opt + 108);
	if (ndirs > (optsize - OPT_MIN) / 8)
		ndirs = (optsize - OPT_MIN) / 8;
	out->sections_off = lfanew + 4 + COFF_SIZE + optsize;
	if (!out->size_of_image || out->size_of_image > PE_MAX_IMAGE ||
	    out->size_of_headers > out->size_of_image || out->size_of_headers > len ||
	    !in_bounds(out->sections_off, (uint64_t)out->n_sections * SECT_SIZE, len) ||
	    out->entry_rva >= out->size_of_image || (out->image_base & 0xfff))
		return -FW_EBADMSG;
	if (ndirs > DIR_RELOC) {
		out->reloc_rva = le32(opt + OPT_MIN + 8 * DIR_RELOC);
		out->reloc_size = le32(opt + OPT_MIN + 8 * DIR_RELOC + 4);
		if (!in_bounds(out->reloc_rva, out->reloc_size, out->size_of_image))
			return -FW_EBADMSG;
	}
	if (ndirs > DIR_CERT) {
		out->cert_off = le32(opt + OPT_MIN + 8 * DIR_CERT);
		out->cert_size = le32(opt + OPT_MIN + 8 * DIR_CERT + 4);
		if (out->cert_size && !in_bounds(out->cert_off, out->cert_size, len))
			return -FW_EBADMSG;
	}
	return pe_sections_ok(f, len, out);
}

/* Apply one relocation block; returns relocations applied or -errno. */
static int pe_reloc_block(uint8_t *img, uint32_t size, const uint8_t *blk, uint32_t n,
			  uint32_t page, uint64_t delta)
{
	int applied = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint16_t ent = le16(blk + 2 * i);
		uint64_t at = (uint64_t)page + (ent & 0xfff);

		switch (ent >> 12) {
		case REL_ABSOLUTE:
			continue;
		case REL_DIR64:
			if (!in_bounds(at, 8, size))
				return -FW_EBADMSG;
			put_le64(img + at, le64(img + at) + delta);
			break;
		case REL_HIGHLOW:
			if (!in_bounds(at, 4, size))
				return -FW_EBADMSG;
			put_le32(img + at, le32(img + at) + (uint32_t)delta);
			break;
		default:
			return -FW_EBADMSG;
		}
		applied++;
	}
	return applied;
}

static int pe_relocate(uint8_t *img, const struct pe_image *pe, uint64_t delta)
{
	uint32_t off = pe->reloc_rva, end = pe->reloc_rva + pe->reloc_size;
	int total = 0;

	while (end - off >= 8) {
		uint8_t hdr[8];
		uint32_t page, bsize;
		int n;

		memcpy(hdr, img + off, 8); /* the table may relocate itself: copy first */
		page = le32(hdr);
		bsize = le32(hdr + 4);
		if (bsize < 8 || bsize > end - off || (bsize & 1))
			return -FW_EBADMSG;
		n = pe_reloc_block(img, pe->size_of_image, img + off + 8, (bsize - 8) / 2, page,
				   delta);
		if (n < 0)
			return n;
		total += n;
		off += bsize;
	}
	return total;
}

/* Sections are copied in ascending address order and only the gaps are
 * zeroed (clearing the whole image first doubles the work, which is slow
 * on an emulated CPL0); unordered or overlapping tables fall back to that. */
static bool pe_sections_ascending(const uint8_t *f, const struct pe_image *img)
{
	uint64_t cursor = img->size_of_headers;

	for (unsigned int i = 0; i < img->n_sections; i++) {
		const uint8_t *s = f + img->sections_off + i * SECT_SIZE;

		if (le32(s + 12) < cursor)
			return false;
		cursor = le32(s + 12);
	}
	return true;
}

int pe_load(const void *file, uint64_t len, const struct pe_image *img, void *dest,
	    uint64_t load_addr)
{
	const uint8_t *f = file;
	uint8_t *d = dest;
	uint64_t delta = load_addr - img->image_base, cursor = img->size_of_headers;
	bool ascending = pe_sections_ascending(f, img);

	/* no relocation table but not marked stripped: position independent */
	if (delta && img->relocs_stripped)
		return -FW_ENOTSUP;
	if (!ascending)
		memset(d, 0, img->size_of_image);
	memcpy(d, f, img->size_of_headers);
	for (unsigned int i = 0; i < img->n_sections; i++) {
		const uint8_t *s = f + img->sections_off + i * SECT_SIZE;
		uint32_t vsize = le32(s + 8), va = le32(s + 12), raw = le32(s + 16);
		uint32_t copy = vsize && vsize < raw ? vsize : raw;

		if (!in_bounds(va, copy, img->size_of_image) || !in_bounds(le32(s + 20), copy, len))
			return -FW_EBADMSG;
		if (ascending && va > cursor)
			memset(d + cursor, 0, va - cursor);
		memcpy(d + va, f + le32(s + 20), copy);
		if (va + copy > cursor)
			cursor = va + copy;
	}
	if (ascending && cursor < img->size_of_image)
		memset(d + cursor, 0, img->size_of_image - cursor);
	if (!delta || !img->reloc_size)
		return 0;
	return pe_relocate(d, img, delta);
}
