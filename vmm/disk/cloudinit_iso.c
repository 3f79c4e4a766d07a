// SPDX-License-Identifier: MIT
/*
 * cloudinit_iso.c - a small ISO 9660 writer with a Joliet tree
 * (ECMA-119 2nd ed.; Joliet specification 1995). Only what seed disks
 * need: a few nested directories, regular files, one extent per file.
 *
 * Layout (2048-byte sectors): 0-15 system area, 16 primary volume
 * descriptor, 17 Joliet supplementary descriptor, 18 terminator, 19-22
 * path tables (L and M for each tree), then the primary directories, the
 * Joliet directories and the file data shared by both trees.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/disk/cloudinit.h"

#define SECTOR		  2048u
#define ISO_MAX_DIRS	  16
#define ISO_MAX_NAME	  64
#define ISO_FIRST_DIR_LBA 23u

struct iso_node {
	char name[ISO_MAX_NAME]; /* as given (Joliet) */
	char pname[40];		 /* primary: upper-case d-characters */
	int parent;		 /* directory index, -1 for root */
	bool dir;
	const void *data; /* files */
	size_t len;
	uint32_t lba[2];  /* [0] primary, [1] Joliet (dirs); files: [0] */
	uint32_t size[2]; /* bytes of the directory extent per tree */
	int num;	  /* path table number (dirs, 1-based) */
	int level;
};

struct iso {
	struct iso_node n[ISO_MAX_DIRS * 4];
	unsigned int count;
	int order[ISO_MAX_DIRS]; /* directories in path table order */
	unsigned int ndirs;
	int tree; /* for the sort comparator */
};

static void put16b(uint8_t *p, uint16_t v) /* both-endian */
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put32le(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put32be(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put32b(uint8_t *p, uint32_t v)
{
	put32le(p, v);
	put32be(p + 4, v);
}

static int iso_find(struct iso *s, int parent, const char *name, size_t len)
{
	for (unsigned int i = 0; i < s->count; i++)
		if (s->n[i].parent == parent && strlen(s->n[i].name) == len &&
		    !memcmp(s->n[i].name, name, len))
			return (int)i;
	return -1;
}

static void iso_pname(struct iso_node *n)
{
	size_t k = 0;
	bool dot = false;

	for (const char *c = n->name; *c && k < 30; c++) {
		char u = (char)toupper((unsigned char)*c);

		if (u == '.' && !n->dir && !dot) {
			dot = true;
		} else if (!((u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_')) {
			u = '_';
		}
		n->pname[k++] = u;
	}
	if (!n->dir) {
		if (!dot)
			n->pname[k++] = '.';
		memcpy(n->pname + k, ";1", 2);
		k += 2;
	}
	n->pname[k] = 0;
}

static int iso_add(struct iso *s, const char *path, const void *data, size_t len)
{
	int parent = 0, idx;
	const char *c = path, *slash;

	for (;;) {
		slash = strchr(c, '/');
		size_t l = slash ? (size_t)(slash - c) : strlen(c);

		if (!l || l >= ISO_MAX_NAME)
			return -EINVAL;
		idx = iso_find(s, parent, c, l);
		if (idx < 0) {
			if (s->count >= sizeof(s->n) / sizeof(s->n[0]))
				return -EINVAL;
			idx = (int)s->count++;
			memcpy(s->n[idx].name, c, l);
			s->n[idx].parent = parent;
			s->n[idx].dir = slash != NULL;
			s->n[idx].level = s->n[parent].level + 1;
			iso_pname(&s->n[idx]);
		} else if (s->n[idx].dir != (slash != NULL)) {
			return -EINVAL; /* a file and a directory of the same name */
		}
		if (!slash)
			break;
		parent = idx;
		c = slash + 1;
	}
	s->n[idx].data = data;
	s->n[idx].len = len;
	return 0;
}

static const char *iso_name(const struct iso *s, int i, int tree)
{
	return tree ? s->n[i].name : s->n[i].pname;
}

/* Children of dir d in recorded-name order. */
static unsigned int iso_children(const struct iso *s, int d, int tree, int *out)
{
	unsigned int k = 0;

	for (unsigned int i = 1; i < s->count; i++) {
		if (s->n[i].parent != d)
			continue;
		unsigned int j = k++;
		while (j && strcmp(iso_name(s, out[j - 1], tree), iso_name(s, (int)i, tree)) > 0) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = (int)i;
	}
	return k;
}

static uint32_t iso_rec_len(const struct iso *s, int i, int tree)
{
	uint32_t l = tree ? 2u * (uint32_t)strlen(s->n[i].name) : (uint32_t)strlen(s->n[i].pname);

	return (33 + l + 1) & ~1u;
}

/* Path table order: by level, then parent's number, then name. */
static void iso_order(struct iso *s)
{
	int kids[ISO_MAX_DIRS * 4];

	s->order[0] = 0;
	s->n[0].num = 1;
	s->ndirs = 1;
	for (unsigned int at = 0; at < s->ndirs; at++) {
		unsigned int k = iso_children(s, s->order[at], 0, kids);

		for (unsigned int j = 0; j < k; j++) {
			if (!s->n[kids[j]].dir || s->ndirs >= ISO_MAX_DIRS)
				continue;
			s->order[s->ndirs++] = kids[j];
			s->n[kids[j]].num = (int)s->ndirs;
		}
	}
}

/* Directory extent size in bytes: records never straddle a sector. */
static uint32_t iso_dir_size(const struct iso *s, int d, int tree)
{
	int kids[ISO_MAX_DIRS * 4];
	unsigned int k = iso_children(s, d, tree, kids);
	uint32_t used = 68, sectors = 1; /* "." and ".." */

	for (unsigned int j = 0; j < k; j++) {
		uint32_t l = iso_rec_len(s, kids[j], tree);

		if (used + l > SECTOR) {
			sectors++;
			used = 0;
		}
		used += l;
	}
	return sectors * SECTOR;
}

static void iso_dirrec(uint8_t *p, uint32_t lba, uint32_t size, bool dir, const uint8_t *id,
		       uint32_t id_len)
{
	static const uint8_t date[7] = {120, 1, 1, 0, 0, 0, 0}; /* 2020-01-01 UTC */

	memset(p, 0, (33 + id_len + 1) & ~1u); /* ext attr, unit size, gap, pad */
	p[0] = (uint8_t)((33 + id_len + 1) & ~1u);
	put32b(p + 2, lba);
	put32b(p + 10, size);
	memcpy(p + 18, date, 7);
	p[25] = dir ? 2 : 0;
	put16b(p + 28, 1);
	p[32] = (uint8_t)id_len;
	memcpy(p + 33, id, id_len);
}

/* The record of node i as it appears in its parent's extent. */
static uint32_t iso_node_rec(const struct iso *s, int i, int tree, uint8_t *p)
{
	uint8_t id[2 * ISO_MAX_NAME];
	uint32_t l = 0;
	const struct iso_node *n = &s->n[i];

	if (tree) {
		for (const char *c = n->name; *c; c++) {
			id[l++] = 0;
			id[l++] = (uint8_t)*c;
		}
	} else {
		l = (uint32_t)strlen(n->pname);
		memcpy(id, n->pname, l);
	}
	if (n->dir)
		iso_dirrec(p, n->lba[tree], n->size[tree], true, id, l);
	else
		iso_dirrec(p, n->lba[0], (uint32_t)n->len, false, id, l);
	return p[0];
}

static void iso_write_dir(const struct iso *s, int d, int tree, uint8_t *img)
{
	int kids[ISO_MAX_DIRS * 4];
	unsigned int k = iso_children(s, d, tree, kids);
	const struct iso_node *n = &s->n[d], *par = &s->n[n->parent < 0 ? 0 : n->parent];
	uint8_t *p = img + (size_t)n->lba[tree] * SECTOR, *start = p;
	static const uint8_t self = 0, up = 1;

	iso_dirrec(p, n->lba[tree], n->size[tree], true, &self, 1);
	p += 34;
	iso_dirrec(p, par->lba[tree], par->size[tree], true, &up, 1);
	p += 34;
	for (unsigned int j = 0; j < k; j++) {
		uint32_t l = iso_rec_len(s, kids[j], tree);

		if ((size_t)(p - start) % SECTOR + l > SECTOR)
			p += SECTOR - (size_t)(p - start) % SECTOR;
		p += iso_node_rec(s, kids[j], tree, p);
	}
}

static uint32_t iso_path_table(const struct iso *s, int tree, bool msb, uint8_t *p)
{
	uint8_t *start = p;

	for (unsigned int o = 0; o < s->ndirs; o++) {
		const struct iso_node *n = &s->n[s->order[o]];
		uint32_t l = 1;
		uint16_t parent = (uint16_t)(o ? s->n[n->parent].num : 1);

		p[0] = 1;
		if (o) {
			l = tree ? 2u * (uint32_t)strlen(n->name) : (uint32_t)strlen(n->pname);
			p[0] = (uint8_t)l;
			for (uint32_t c = 0; c < l; c++)
				p[8 + c] = tree ? (c & 1 ? (uint8_t)n->name[c / 2] : 0)
						: (uint8_t)n->pname[c];
		}
		if (msb) {
			put32be(p + 2, n->lba[tree]);
			p[6] = (uint8_t)(parent >> 8);
			p[7] = (uint8_t)parent;
		} else {
			put32le(p + 2, n->lba[tree]);
			p[6] = (uint8_t)parent;
			p[7] = (uint8_t)(parent >> 8);
		}
		p += 8 + l + (l & 1);
	}
	return (uint32_t)(p - start);
}

/* Fill a space-padded text field; Joliet fields are UCS-2BE. */
static void iso_text(uint8_t *p, size_t len, const char *s, int tree)
{
	for (size_t i = 0; i < len; i++)
		p[i] = tree && !(i & 1) ? 0 : ' ';
	for (size_t i = 0; *s && i < len; s++, i += tree ? 2 : 1) {
		if (tree)
			p[i + 1] = (uint8_t)*s;
		else
			p[i] = (uint8_t)toupper((unsigned char)*s);
	}
}

static void iso_volume(const struct iso *s, int tree, const char *label, uint32_t total,
		       uint32_t pt_size, uint8_t *p)
{
	static const char date[] = "2020010100000000";
	uint8_t root[34];

	p[0] = tree ? 2 : 1;
	memcpy(p + 1, "CD001", 5);
	p[6] = 1;
	iso_text(p + 8, 32, "LINUX", tree);
	iso_text(p + 40, 32, label, tree);
	put32b(p + 80, total);
	if (tree)
		memcpy(p + 88, "%/E", 3); /* UCS-2 level 3 */
	put16b(p + 120, 1);
	put16b(p + 124, 1);
	put16b(p + 128, SECTOR);
	put32b(p + 132, pt_size);
	put32le(p + 140, 19 + 2u * (uint32_t)tree);
	put32be(p + 148, 20 + 2u * (uint32_t)tree);
	iso_dirrec(root, s->n[0].lba[tree], s->n[0].size[tree], true, (const uint8_t *)"", 1);
	memcpy(p + 156, root, 34);
	iso_text(p + 190, 128, "", tree);
	iso_text(p + 318, 128, "", tree);
	iso_text(p + 446, 128, "", tree);
	iso_text(p + 574, 128, "VMLET", tree);
	iso_text(p + 702, 37 * 3, "", tree);
	for (int i = 0; i < 4; i++)
		memcpy(p + 813 + 17 * i, date, 16); /* byte 17 (tz) stays 0 */
	memset(p + 847, '0', 16);		    /* no expiration date */
	p[881] = 1;
}

int iso9660_build(const char *label, const struct iso9660_file *files, unsigned int n,
		  uint8_t **out, size_t *out_len)
{
	struct iso *s = calloc(1, sizeof(*s));
	uint32_t lba = ISO_FIRST_DIR_LBA, pt[2];
	uint8_t *img;
	int r = 0;

	if (!s)
		return -ENOMEM;
	s->n[0].dir = true;
	s->n[0].parent = -1;
	s->count = 1;
	for (unsigned int i = 0; !r && i < n; i++)
		r = iso_add(s, files[i].path, files[i].data, files[i].len);
	if (r)
		goto out;
	iso_order(s);
	for (int tree = 0; tree < 2; tree++) {
		for (unsigned int o = 0; o < s->ndirs; o++) {
			struct iso_node *d = &s->n[s->order[o]];

			d->size[tree] = iso_dir_size(s, s->order[o], tree);
			d->lba[tree] = lba;
			lba += d->size[tree] / SECTOR;
		}
	}
	for (unsigned int i = 1; i < s->count; i++) {
		if (s->n[i].dir)
			continue;
		s->n[i].lba[0] = lba;
		lba += (uint32_t)((s->n[i].len + SECTOR - 1) / SECTOR);
	}
	img = calloc(lba, SECTOR);
	if (!img) {
		r = -ENOMEM;
		goto out;
	}
	for (int tree = 0; tree < 2; tree++) {
		pt[tree] = iso_path_table(s, tree, false, img + (19 + 2 * tree) * SECTOR);
		iso_path_table(s, tree, true, img + (20 + 2 * tree) * SECTOR);
		for (unsigned int o = 0; o < s->ndirs; o++)
			iso_write_dir(s, s->order[o], tree, img);
		iso_volume(s, tree, label, lba, pt[tree], img + (16 + tree) * SECTOR);
	}
	img[18 * SECTOR] = 255;
	memcpy(img + 18 * SECTOR + 1, "CD001\1", 6);
	for (unsigned int i = 1; i < s->count; i++)
		if (!s->n[i].dir && s->n[i].len)
			memcpy(img + (size_t)s->n[i].lba[0] * SECTOR, s->n[i].data, s->n[i].len);
	*out = img;
	*out_len = (size_t)lba * SECTOR;
out:
	free(s);
	return r;
}
