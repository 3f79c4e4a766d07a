// SPDX-License-Identifier: MIT
/*
 * fs.c - SimpleFileSystem and the File protocol over fat.c, read-only:
 * Open/Close/Read/GetPosition/SetPosition/GetInfo (FileInfo, FileSystemInfo,
 * VolumeLabel); writes answer EFI_WRITE_PROTECTED.
 */
#include "firmware/efi/fat.h"
#include "firmware/efi/fw.h"

#define FS_MAGIC 0x73667476u

struct fs {
	struct efi_simple_fs sfs; /* first */
	uint32_t magic;
	struct fat_fs fat;
};

struct file {
	struct efi_file f; /* first */
	struct fs *fs;
	struct fat_node node;
	uint64_t pos; /* file: byte offset; directory: entry offset */
};

static const struct efi_file file_ops;

static efi_status fat_status(int ret)
{
	switch (ret) {
	case -FW_ENOENT:
		return EFI_NOT_FOUND;
	case -FW_EBADMSG:
		return EFI_VOLUME_CORRUPTED;
	case -FW_ENOMEM:
		return EFI_OUT_OF_RESOURCES;
	default:
		return EFI_DEVICE_ERROR;
	}
}

static struct file *file_new(struct fs *fs, const struct fat_node *n)
{
	struct file *f = efi_alloc(sizeof(*f));

	if (!f)
		return NULL;
	f->f = file_ops;
	f->fs = fs;
	f->node = *n;
	return f;
}

static efi_status EFIAPI file_open(struct efi_file *self, struct efi_file **out, const char16 *name,
				   uint64_t mode, uint64_t attr)
{
	struct file *f = (struct file *)self, *nf;
	struct fat_node n;
	int ret;

	(void)attr;
	if (!out || !name)
		return EFI_INVALID_PARAMETER;
	if (mode != EFI_FILE_MODE_READ)
		return mode & (EFI_FILE_MODE_WRITE | EFI_FILE_MODE_CREATE) ? EFI_WRITE_PROTECTED
									   : EFI_INVALID_PARAMETER;
	ret = fat_lookup(&f->fs->fat, &f->node, name, &n);
	if (ret)
		return fat_status(ret);
	nf = file_new(f->fs, &n);
	if (!nf)
		return EFI_OUT_OF_RESOURCES;
	*out = &nf->f;
	return EFI_SUCCESS;
}

static efi_status EFIAPI file_close(struct efi_file *self)
{
	efi_free(self);
	return EFI_SUCCESS;
}

static efi_status EFIAPI file_delete(struct efi_file *self)
{
	efi_free(self);
	return EFI_WARN_DELETE_FAILURE;
}

static void fat_time(struct efi_time *t, uint16_t date, uint16_t time)
{
	memset(t, 0, sizeof(*t));
	t->year = (uint16_t)(1980 + (date >> 9));
	t->month = (uint8_t)((date >> 5) & 0xf);
	t->day = (uint8_t)(date & 0x1f);
	t->hour = (uint8_t)(time >> 11);
	t->minute = (uint8_t)((time >> 5) & 0x3f);
	t->second = (uint8_t)((time & 0x1f) * 2);
	t->timezone = EFI_UNSPECIFIED_TIMEZONE;
}

/* EFI_FILE_INFO of n into buf (*size bytes). */
static efi_status file_info(const struct fs *fs, const struct fat_node *n, uint64_t *size,
			    void *buf)
{
	size_t name_len = 0;

	while (n->name[name_len])
		name_len++;
	uint64_t need = sizeof(struct efi_file_info) + (name_len + 1) * 2;
	struct efi_file_info *fi = buf;

	if (*size < need) {
		*size = need;
		return EFI_BUFFER_TOO_SMALL;
	}
	if (!buf)
		return EFI_INVALID_PARAMETER;
	memset(fi, 0, sizeof(*fi));
	fi->size = need;
	if (!fat_is_dir(n)) {
		fi->file_size = n->size;
		fi->physical_size = (n->size + fs->fat.cluster_size - 1) / fs->fat.cluster_size *
				    fs->fat.cluster_size;
	}
	fat_time(&fi->create_time, n->cdate, n->ctime);
	fat_time(&fi->last_access_time, n->adate, 0);
	fat_time(&fi->modification_time, n->wdate, n->wtime);
	fi->attribute = n->attr & 0x37;
	memcpy(fi->file_name, n->name, (name_len + 1) * 2);
	*size = need;
	return EFI_SUCCESS;
}

static efi_status EFIAPI file_read(struct efi_file *self, uint64_t *size, void *buf)
{
	struct file *f = (struct file *)self;

	if (!size || (*size && !buf))
		return EFI_INVALID_PARAMETER;
	if (fat_is_dir(&f->node)) {
		struct fat_node n;
		uint64_t pos = f->pos;
		int ret = fat_dir_next(&f->fs->fat, &f->node, &pos, &n);

		if (ret == -FW_ENOENT) {
			*size = 0;
			return EFI_SUCCESS;
		}
		if (ret)
			return fat_status(ret);
		efi_status st = file_info(f->fs, &n, size, buf);

		if (st == EFI_SUCCESS)
			f->pos = pos;
		return st;
	}
	int64_t n = fat_read(&f->fs->fat, &f->node, f->pos, buf, *size);

	if (n < 0)
		return fat_status((int)n);
	f->pos += (uint64_t)n;
	*size = (uint64_t)n;
	return EFI_SUCCESS;
}

static efi_status EFIAPI file_write(struct efi_file *self, uint64_t *size, const void *buf)
{
	(void)self, (void)size, (void)buf;
	return EFI_WRITE_PROTECTED;
}

static efi_status EFIAPI file_get_pos(struct efi_file *self, uint64_t *pos)
{
	struct file *f = (struct file *)self;

	if (!pos)
		return EFI_INVALID_PARAMETER;
	if (fat_is_dir(&f->node))
		return EFI_UNSUPPORTED;
	*pos = f->pos;
	return EFI_SUCCESS;
}

static efi_status EFIAPI file_set_pos(struct efi_file *self, uint64_t pos)
{
	struct file *f = (struct file *)self;

	if (fat_is_dir(&f->node)) {
		if (pos)
			return EFI_UNSUPPORTED;
		f->pos = 0;
		return EFI_SUCCESS;
	}
	f->pos = pos == UINT64_MAX ? f->node.size : pos;
	return EFI_SUCCESS;
}

static efi_status EFIAPI file_get_info(struct efi_file *self, const efi_guid *type, uint64_t *size,
				       void *buf)
{
	struct file *f = (struct file *)self;
	const struct fat_fs *fat = &f->fs->fat;
	uint64_t label_len = 11, need;

	if (!type || !size)
		return EFI_INVALID_PARAMETER;
	if (guid_eq(type, &efi_file_info_guid))
		return file_info(f->fs, &f->node, size, buf);
	while (label_len && fat->label[label_len - 1] == ' ')
		label_len--;
	if (guid_eq(type, &efi_fs_info_guid)) {
		struct efi_fs_info *fi = buf;

		need = 36 + (label_len + 1) * 2;
		if (*size < need) {
			*size = need;
			return EFI_BUFFER_TOO_SMALL;
		}
		fi->size = need;
		fi->read_only = true;
		fi->volume_size = (uint64_t)fat->n_clusters * fat->cluster_size;
		fi->free_space = 0;
		fi->block_size = fat->cluster_size;
		for (uint64_t i = 0; i < label_len; i++)
			fi->volume_label[i] = fat->label[i];
		fi->volume_label[label_len] = 0;
		*size = need;
		return EFI_SUCCESS;
	}
	if (guid_eq(type, &efi_fs_label_guid)) {
		char16 *l = buf;

		need = (label_len + 1) * 2;
		if (*size < need) {
			*size = need;
			return EFI_BUFFER_TOO_SMALL;
		}
		for (uint64_t i = 0; i < label_len; i++)
			l[i] = fat->label[i];
		l[label_len] = 0;
		*size = need;
		return EFI_SUCCESS;
	}
	return EFI_UNSUPPORTED;
}

static efi_status EFIAPI file_set_info(struct efi_file *self, const efi_guid *type, uint64_t size,
				       const void *buf)
{
	(void)self, (void)type, (void)size, (void)buf;
	return EFI_WRITE_PROTECTED;
}

static efi_status EFIAPI file_flush(struct efi_file *self)
{
	(void)self;
	return EFI_SUCCESS;
}

static const struct efi_file file_ops = {
    .revision = 0x00010000,
    .open = file_open,
    .close = file_close,
    .delete_file = file_delete,
    .read = file_read,
    .write = file_write,
    .get_position = file_get_pos,
    .set_position = file_set_pos,
    .get_info = file_get_info,
    .set_info = file_set_info,
    .flush = file_flush,
};

static efi_status EFIAPI open_volume(struct efi_simple_fs *self, struct efi_file **root)
{
	struct fs *fs = (struct fs *)self;
	struct fat_node n;
	struct file *f;

	if (!root)
		return EFI_INVALID_PARAMETER;
	fat_root(&fs->fat, &n);
	f = file_new(fs, &n);
	if (!f)
		return EFI_OUT_OF_RESOURCES;
	*root = &f->f;
	return EFI_SUCCESS;
}

efi_status efi_fs_install(efi_handle h, const struct blkdev *dev)
{
	struct fs *fs = efi_alloc(sizeof(*fs));

	if (!fs)
		return EFI_OUT_OF_RESOURCES;
	if (fat_mount(&fs->fat, dev)) {
		efi_free(fs);
		return EFI_UNSUPPORTED;
	}
	fs->sfs.revision = 0x00010000;
	fs->sfs.open_volume = open_volume;
	fs->magic = FS_MAGIC;
	return proto_install(&h, &efi_simple_fs_guid, &fs->sfs);
}

efi_status efi_fs_read_file(efi_handle h, const char16 *path, void **buf, uint64_t *size)
{
	struct fs *fs;
	struct fat_node n;
	int ret;

	if (proto_get(h, &efi_simple_fs_guid, (void **)&fs) || !fs || fs->magic != FS_MAGIC)
		return EFI_UNSUPPORTED;
	ret = fat_lookup(&fs->fat, NULL, path, &n);
	if (ret)
		return fat_status(ret);
	if (fat_is_dir(&n))
		return EFI_NOT_FOUND;
	/* not efi_alloc: zeroing what is read over next costs time */
	if (mem_pool_alloc(&efi_mem, EfiBootServicesData, n.size ? n.size : 1, buf))
		return EFI_OUT_OF_RESOURCES;
	int64_t got = fat_read(&fs->fat, &n, 0, *buf, n.size);

	if (got != (int64_t)n.size) {
		efi_free(*buf);
		return got < 0 ? fat_status((int)got) : EFI_VOLUME_CORRUPTED;
	}
	*size = n.size;
	return EFI_SUCCESS;
}
