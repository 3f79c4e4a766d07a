// SPDX-License-Identifier: MIT
/* fat.c - read-only FAT12/16/32: BPB checks, cluster chains, directories
 * with long names, path lookup, file reads. */
#include "firmware/efi/fat.h"

#define FAT_DIR_MAX (65536u * 32u) /* spec: at most 65536 entries */
#define DIRENT	    32u
#define ATTR_LFN    0x0f
#define NO_SECTOR   UINT64_MAX

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* Sector-cached read of len bytes (within one sector) at sector sec. */
static int fat_cached(struct fat_fs *fs, uint64_t *cached, uint8_t *cache, uint64_t sec)
{
	int ret;

	if (*cached == sec)
		return 0;
	*cached = NO_SECTOR;
	ret = blk_read_bytes(fs->dev, sec * fs->sector_size, fs->sector_size, cache);
	if (ret)
		return ret;
	*cached = sec;
	return 0;
}

static int fat_bpb(struct fat_fs *fs, const uint8_t *bs, uint64_t dev_bytes)
{
	uint32_t rsvd = le16(bs + 14), nfats = bs[16], root_ent = le16(bs + 17);
	uint32_t tot = le16(bs + 19) ? le16(bs + 19) : le32(bs + 32);
	uint32_t fatsz = le16(bs + 22) ? le16(bs + 22) : le32(bs + 36);

	fs->sector_size = le16(bs + 11);
	fs->sec_per_clus = bs[13];
	if (bs[510] != 0x55 || bs[511] != 0xaa || fs->sector_size < 512 ||
	    fs->sector_size > BLK_MAX_BLOCK || !pow2(fs->sector_size) || !pow2(fs->sec_per_clus) ||
	    rsvd == 0 || nfats == 0 || fatsz == 0 || tot == 0)
		return -FW_EBADMSG;
	fs->cluster_size = fs->sector_size * fs->sec_per_clus;
	if (fs->cluster_size > 65536 || (uint64_t)tot * fs->sector_size > dev_bytes)
		return -FW_EBADMSG;
	uint32_t root_secs = (root_ent * DIRENT + fs->sector_size - 1) / fs->sector_size;
	uint64_t data = rsvd + (uint64_t)nfats * fatsz + root_secs;

	if (data + fs->sec_per_clus > tot)
		return -FW_EBADMSG;
	fs->data_sector = (uint32_t)data;
	fs->n_clusters = (uint32_t)((tot - data) / fs->sec_per_clus);
	fs->type = fs->n_clusters < 4085 ? 12 : fs->n_clusters < 65525 ? 16 : 32;
	fs->fat_sectors = fatsz;
	fs->fat_sector = rsvd;
	fs->root_sector = rsvd + nfats * fatsz;
	fs->root_entries = root_ent;
	/* the FAT must cover every cluster */
	uint64_t need_bits = (uint64_t)(fs->n_clusters + 2) * (uint64_t)(fs->type == 12	  ? 12
									 : fs->type == 16 ? 16
											  : 32);

	if (need_bits > (uint64_t)fatsz * fs->sector_size * 8)
		return -FW_EBADMSG;
	if (fs->type == 32) {
		uint16_t ext = le16(bs + 40);

		fs->root_cluster = le32(bs + 44) & 0x0fffffff;
		if (root_ent || fs->root_cluster < 2 || fs->root_cluster > fs->n_clusters + 1)
			return -FW_EBADMSG;
		if ((ext & 0x80) && (ext & 0xf) < nfats) /* mirroring off: one FAT */
			fs->fat_sector = rsvd + (ext & 0xf) * fatsz;
		fs->serial = le32(bs + 67);
		memcpy(fs->label, bs + 71, 11);
	} else {
		if (!root_ent)
			return -FW_EBADMSG;
		fs->serial = le32(bs + 39);
		memcpy(fs->label, bs + 43, 11);
	}
	return 0;
}

int fat_mount(struct fat_fs *fs, const struct blkdev *dev)
{
	uint8_t bs[512];
	int ret;

	memset(fs, 0, sizeof(*fs) - sizeof(fs->fat_cache) - sizeof(fs->data_cache));
	fs->dev = dev;
	fs->fat_cache_sec = fs->data_cache_sec = NO_SECTOR;
	ret = blk_read_bytes(dev, 0, sizeof(bs), bs);
	if (ret)
		return ret == -FW_ERANGE ? -FW_EBADMSG : ret;
	return fat_bpb(fs, bs, dev->n_blocks * dev->block_size);
}

static int fat_byte(struct fat_fs *fs, uint64_t off, uint8_t *out)
{
	int ret = fat_cached(fs, &fs->fat_cache_sec, fs->fat_cache,
			     fs->fat_sector + off / fs->sector_size);

	if (!ret)
		*out = fs->fat_cache[off % fs->sector_size];
	return ret;
}

/* The FAT entry of cluster c, normalised: end of chain = 0x0fffffff. */
static int fat_next(struct fat_fs *fs, uint32_t c, uint32_t *next)
{
	uint64_t off = fs->type == 12 ? c + c / 2 : (uint64_t)c * (uint32_t)(fs->type / 8);
	int n = fs->type == 12 ? 2 : fs->type / 8;
	uint8_t b[4] = {0};
	uint32_t v;
	int ret;

	for (int i = 0; i < n; i++) {
		ret = fat_byte(fs, off + (uint64_t)i, &b[i]);
		if (ret)
			return ret;
	}
	v = le32(b);
	if (fs->type == 12) {
		v = (c & 1) ? (v & 0xffff) >> 4 : v & 0xfff;
		if (v >= 0xff8)
			v = 0x0fffffff;
	} else if (fs->type == 16) {
		if (v >= 0xfff8)
			v = 0x0fffffff;
	} else {
		v &= 0x0fffffff;
		if (v >= 0x0ffffff8)
			v = 0x0fffffff;
	}
	*next = v;
	return 0;
}

static bool fat_valid(const struct fat_fs *fs, uint32_t c)
{
	return c >= 2 && c <= fs->n_clusters + 1;
}

/* Map byte pos of node to a volume sector; *run = bytes readable from there
 * before the cluster ends. -FW_ENOENT past the end of the chain. */
static int fat_map(struct fat_fs *fs, struct fat_node *node, uint64_t pos, uint64_t *sec,
		   uint32_t *run)
{
	if (node->fixed_root) {
		*sec = fs->root_sector + pos / fs->sector_size;
		*run = (uint32_t)(fs->root_entries * DIRENT - pos);
		return 0;
	}
	uint64_t idx = pos / fs->cluster_size;
	int ret;

	if (!fat_valid(fs, node->first_cluster) || idx > fs->n_clusters)
		return node->first_cluster ? -FW_EBADMSG : -FW_ENOENT;
	if (!fat_valid(fs, node->cur_cluster) || node->cur_index > idx) {
		node->cur_index = 0;
		node->cur_cluster = node->first_cluster;
	}
	while (node->cur_index < idx) {
		uint32_t next;

		ret = fat_next(fs, node->cur_cluster, &next);
		if (ret)
			return ret;
		if (next == 0x0fffffff)
			return -FW_ENOENT;
		if (!fat_valid(fs, next))
			return -FW_EBADMSG;
		node->cur_cluster = next;
		node->cur_index++;
	}
	uint32_t in = (uint32_t)(pos % fs->cluster_size);

	*sec = fs->data_sector + (uint64_t)(node->cur_cluster - 2) * fs->sec_per_clus +
	       in / fs->sector_size;
	*run = fs->cluster_size - in;
	return 0;
}

int64_t fat_read(struct fat_fs *fs, struct fat_node *node, uint64_t pos, void *buf, uint64_t len)
{
	uint8_t *out = buf;
	uint64_t done = 0;
	int ret;

	if (pos >= node->size)
		return 0;
	if (len > node->size - pos)
		len = node->size - pos;
	while (done < len) {
		uint64_t sec;
		uint32_t run, in = (uint32_t)(pos % fs->sector_size);

		ret = fat_map(fs, node, pos, &sec, &run);
		if (ret == -FW_ENOENT && fat_is_dir(node))
			break; /* directories end with their chain */
		if (ret)
			return ret == -FW_ENOENT ? -FW_EBADMSG : ret;
		uint64_t n = len - done < run ? len - done : run;

		if (in == 0 && n >= fs->sector_size) {
			n -= n % fs->sector_size;
			ret = blk_read_bytes(fs->dev, sec * fs->sector_size, n, out + done);
		} else {
			if (n > fs->sector_size - in)
				n = fs->sector_size - in;
			ret = fat_cached(fs, &fs->data_cache_sec, fs->data_cache, sec);
			if (!ret)
				memcpy(out + done, fs->data_cache + in, n);
		}
		if (ret)
			return ret;
		done += n;
		pos += n;
	}
	return (int64_t)done;
}

void fat_root(const struct fat_fs *fs, struct fat_node *out)
{
	memset(out, 0, sizeof(*out));
	out->attr = FAT_ATTR_DIR;
	out->name[0] = '\\';
	if (fs->type == 32) {
		out->first_cluster = fs->root_cluster;
		out->size = FAT_DIR_MAX;
	} else {
		out->fixed_root = true;
		out->size = fs->root_entries * DIRENT;
	}
}

/* ---- directories --------------------------------------------------------- */

struct lfn_state {
	uint16_t buf[20 * 13 + 1];
	int expect; /* ordinal of the next LFN entry we want; 0 = none */
	uint8_t csum;
};

static const uint8_t lfn_offs[13] = {1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30};

static void lfn_add(struct lfn_state *l, const uint8_t *e)
{
	int ord = e[0] & 0x3f;

	if (e[0] & 0x40) {
		l->expect = ord;
		l->csum = e[13];
		memset(l->buf, 0, sizeof(l->buf));
	}
	if (ord < 1 || ord > 20 || ord != l->expect || e[13] != l->csum) {
		l->expect = 0;
		return;
	}
	for (int i = 0; i < 13; i++)
		l->buf[(ord - 1) * 13 + i] = le16(e + lfn_offs[i]);
	l->expect = ord - 1 ? ord - 1 : -1; /* -1: complete */
}

static uint8_t sfn_checksum(const uint8_t *name)
{
	uint8_t sum = 0;

	for (int i = 0; i < 11; i++)
		sum = (uint8_t)(((sum & 1) << 7) + (sum >> 1) + name[i]);
	return sum;
}

/* "NAME.EXT" from the 11 raw bytes; lower = NT case flags (0 for the
 * canonical upper-case short name). */
static void sfn_format(const uint8_t *raw, uint8_t lower, uint16_t *out)
{
	int n = 0, base = 8, ext = 3;

	while (base > 0 && raw[base - 1] == ' ')
		base--;
	while (ext > 0 && raw[8 + ext - 1] == ' ')
		ext--;
	for (int i = 0; i < base; i++) {
		uint16_t c = (i == 0 && raw[0] == 0x05) ? 0xe5 : raw[i];

		out[n++] = (lower & 0x08) && c >= 'A' && c <= 'Z' ? c + 32 : c;
	}
	if (ext)
		out[n++] = '.';
	for (int i = 0; i < ext; i++) {
		uint16_t c = raw[8 + i];

		out[n++] = (lower & 0x10) && c >= 'A' && c <= 'Z' ? c + 32 : c;
	}
	out[n] = 0;
}

static void fat_fill(const struct fat_fs *fs, const uint8_t *e, const struct lfn_state *l,
		     struct fat_node *out)
{
	memset(out, 0, sizeof(*out));
	out->attr = e[11];
	out->first_cluster = le16(e + 26) | (fs->type == 32 ? (uint32_t)le16(e + 20) << 16 : 0);
	out->size = fat_is_dir(out) ? FAT_DIR_MAX : le32(e + 28);
	out->ctime = le16(e + 14);
	out->cdate = le16(e + 16);
	out->adate = le16(e + 18);
	out->wtime = le16(e + 22);
	out->wdate = le16(e + 24);
	sfn_format(e, 0, out->short_name);
	if (l->expect == -1 && l->csum == sfn_checksum(e)) {
		int i;

		for (i = 0; i < FAT_NAME_MAX && l->buf[i]; i++)
			out->name[i] = l->buf[i];
		out->name[i] = 0;
	} else {
		sfn_format(e, e[12], out->name);
	}
}

int fat_dir_next(struct fat_fs *fs, struct fat_node *dir, uint64_t *pos, struct fat_node *out)
{
	struct lfn_state lfn = {.expect = 0};
	uint8_t e[DIRENT];

	if (!fat_is_dir(dir))
		return -FW_EINVAL;
	for (;;) {
		int64_t n = fat_read(fs, dir, *pos, e, DIRENT);

		if (n < 0)
			return (int)n;
		if (n < DIRENT || e[0] == 0)
			return -FW_ENOENT;
		*pos += DIRENT;
		if (e[0] == 0xe5) {
			lfn.expect = 0;
			continue;
		}
		if ((e[11] & 0x3f) == ATTR_LFN) {
			lfn_add(&lfn, e);
			continue;
		}
		if (e[11] & FAT_ATTR_VOL) {
			lfn.expect = 0;
			continue;
		}
		fat_fill(fs, e, &lfn, out);
		return 0;
	}
}

static uint16_t fold(uint16_t c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 0xe0 && c <= 0xfe && c != 0xf7))
		return (uint16_t)(c - 32);
	return c;
}

static bool name_eq(const uint16_t *name, const uint16_t *comp, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!name[i] || fold(name[i]) != fold(comp[i]))
			return false;
	return name[i] == 0;
}

static bool is_sep(uint16_t c)
{
	return c == '\\' || c == '/';
}

/* Find comp[0..len) in dir. */
static int fat_find(struct fat_fs *fs, struct fat_node *dir, const uint16_t *comp, size_t len,
		    struct fat_node *out)
{
	uint64_t pos = 0;
	int ret;

	while ((ret = fat_dir_next(fs, dir, &pos, out)) == 0)
		if (name_eq(out->name, comp, len) || name_eq(out->short_name, comp, len))
			return 0;
	return ret;
}

int fat_lookup(struct fat_fs *fs, const struct fat_node *dir, const uint16_t *path,
	       struct fat_node *out)
{
	struct fat_node cur;
	int ret;

	if (!dir || is_sep(path[0]))
		fat_root(fs, &cur);
	else
		cur = *dir;
	while (*path) {
		size_t len = 0;

		while (is_sep(*path))
			path++;
		while (path[len] && !is_sep(path[len]))
			len++;
		if (!len)
			break;
		if (!fat_is_dir(&cur))
			return -FW_ENOENT;
		if (!(len == 1 && path[0] == '.')) {
			bool root = cur.fixed_root ||
				    (fs->type == 32 && cur.first_cluster == fs->root_cluster);

			if (len == 2 && path[0] == '.' && path[1] == '.' && root) {
				path += len;
				continue;
			}
			ret = fat_find(fs, &cur, path, len, out);
			if (ret)
				return ret;
			cur = *out;
			if (fat_is_dir(&cur) && cur.first_cluster == 0) /* ".." to the root */
				fat_root(fs, &cur);
		}
		path += len;
	}
	*out = cur;
	out->cur_index = out->cur_cluster = 0;
	return 0;
}
