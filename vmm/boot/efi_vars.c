// SPDX-License-Identifier: MIT
/* efi_vars.c - the crash-safe file behind persistent EFI variables
 * (efi_vars.h describes the format). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "firmware/abi.h"
#include "vmm/boot/efi_vars.h"
#include "vmm/util/file.h"
#include "vmm/util/log.h"

#define EV_MAGIC "VMLETEV1"
#define EV_HDR	 24u

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

static size_t ev_record(uint8_t *rec, const void *blob, size_t len)
{
	uint32_t l = (uint32_t)len, z = 0;
	uint64_t h;

	/* copy first, hash the copy: blob may be guest memory that another
	 * vCPU changes meanwhile, and the record must match its hash */
	memcpy(rec + EV_HDR, blob, len);
	h = fnv1a(rec + EV_HDR, len);
	memcpy(rec, EV_MAGIC, 8);
	memcpy(rec + 8, &l, 4);
	memcpy(rec + 12, &z, 4);
	memcpy(rec + 16, &h, 8);
	return EV_HDR + len;
}

/* The last good record of buf: sets blob and len (len 0: none). Returns
 * whether the file is exactly that one record (no compaction needed). */
static int ev_last(const uint8_t *buf, size_t n, const uint8_t **blob, size_t *len)
{
	size_t off = 0, recs = 0;
	uint32_t l;
	uint64_t h;

	*blob = NULL;
	*len = 0;
	while (n - off >= EV_HDR && !memcmp(buf + off, EV_MAGIC, 8)) {
		memcpy(&l, buf + off + 8, 4);
		memcpy(&h, buf + off + 16, 8);
		if (l > FW_ABI_EFI_VARS_MAX || l > n - off - EV_HDR ||
		    fnv1a(buf + off + EV_HDR, l) != h)
			break;
		*blob = buf + off + EV_HDR;
		*len = l;
		off += EV_HDR + l;
		recs++;
	}
	return recs == 1 && off == n;
}

/* The whole of an open file (at most EFI_VARS_FILE_MAX bytes) into *buf. */
static int ev_read_fd(int fd, uint8_t **buf, size_t *n)
{
	struct stat st;
	ssize_t r;

	*buf = NULL;
	*n = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > EFI_VARS_FILE_MAX)
		return -EINVAL;
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf)
		return -ENOMEM;
	while (*n < (size_t)st.st_size) {
		r = pread(fd, *buf + *n, (size_t)st.st_size - *n, (off_t)*n);
		if (r <= 0)
			return r ? -errno : -EIO;
		*n += (size_t)r;
	}
	return 0;
}

/* Write the store as one record to a new file renamed over v->path
 * (file_replace_begin(): O_EXCL, a link planted at the name is replaced,
 * never followed); its descriptor in *fd, for saving (never reopened by
 * name). */
static int ev_compact(struct efi_vars *v, int *fd)
{
	size_t n = ev_record(v->rec, v->blob, v->len);
	char *tmp = NULL;
	int ret = 0;

	*fd = file_replace_begin(v->path, 0600, &tmp);
	if (*fd < 0)
		return *fd;
	errno = 0;
	if (write(*fd, v->rec, n) != (ssize_t)n)
		ret = errno ? -errno : -EIO;
	ret = file_replace_commit(*fd, &tmp, v->path, ret);
	if (ret) {
		close(*fd);
		*fd = -1;
	}
	return ret;
}

static int ev_alloc(struct efi_vars *v)
{
	memset(v, 0, sizeof(*v));
	v->fd = -1;
	v->rec = malloc(EV_HDR + FW_ABI_EFI_VARS_MAX);
	v->blob = malloc(FW_ABI_EFI_VARS_MAX);
	return v->rec && v->blob ? 0 : -ENOMEM;
}

int efi_vars_open(struct efi_vars *v, const char *path)
{
	static const struct file_where w = {.follow = false}; /* a regular file */
	const uint8_t *blob;
	uint8_t *file = NULL;
	size_t n = 0;
	int ret = ev_alloc(v), fd = -1;

	v->path = strdup(path);
	if (ret || !v->path) {
		ret = -ENOMEM;
		goto fail;
	}
	fd = file_open(&w, path, O_RDWR);
	if (fd >= 0)
		ret = ev_read_fd(fd, &file, &n);
	else if (fd != -ENOENT)
		ret = fd;
	if (ret) {
		error_errno(ret, "efi: cannot read the variable store '%s'%s", path, file_why(ret));
		goto fail;
	}
	if (!ev_last(file, n, &blob, &v->len) || !file) {
		if (n && !blob)
			log_warn("efi: variable store '%s' holds no valid record: starting "
				 "with no variables",
				 path);
		if (v->len)
			memcpy(v->blob, blob, v->len);
		if (fd >= 0)
			close(fd);
		ret = ev_compact(v, &fd);
		if (ret) {
			error_errno(ret, "efi: cannot write the variable store '%s'", path);
			goto fail;
		}
	} else {
		memcpy(v->blob, blob, v->len);
	}
	v->file_size = EV_HDR + v->len; /* one record, compacted or as found */
	/* saves append to the file read or written here, never to a name */
	v->fd = fd;
	fd = -1;
	ret = fcntl(v->fd, F_GETFL);
	if (ret < 0 || fcntl(v->fd, F_SETFL, ret | O_APPEND)) {
		ret = error_errno(-errno, "efi: cannot open the variable store '%s'", path);
		goto fail;
	}
	free(file);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	free(file);
	efi_vars_close(v);
	return ret;
}

int efi_vars_open_fd(struct efi_vars *v, int fd)
{
	const uint8_t *blob;
	uint8_t *file = NULL;
	size_t n, len;
	int ret = ev_alloc(v);

	v->path = strdup("(memory)");
	if (ret || !v->path) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = ev_read_fd(fd, &file, &n);
	if (ret)
		goto fail;
	ev_last(file, n, &blob, &v->len);
	if (v->len)
		memcpy(v->blob, blob, v->len);
	/* compacted in place: one record (nothing here outlives vmlet) */
	len = ev_record(v->rec, v->blob, v->len);
	errno = 0;
	v->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (v->fd < 0 || fcntl(v->fd, F_SETFL, O_APPEND) || ftruncate(v->fd, 0) ||
	    write(v->fd, v->rec, len) != (ssize_t)len) {
		ret = errno ? -errno : -EIO;
		goto fail;
	}
	v->file_size = len;
	free(file);
	return 0;
fail:
	error_errno(ret, "efi: cannot open the VM's variable store");
	free(file);
	efi_vars_close(v);
	return ret;
}

int efi_vars_save(struct efi_vars *v, const void *blob, size_t len)
{
	size_t n;

	if (len > FW_ABI_EFI_VARS_MAX)
		return -E2BIG;
	if (v->file_size + EV_HDR + len > EFI_VARS_FILE_MAX)
		return -ENOSPC;
	n = ev_record(v->rec, blob, len);
	/* one write() to an O_APPEND fd: a crash leaves a torn tail at worst */
	if (write(v->fd, v->rec, n) != (ssize_t)n)
		return errno ? -errno : -EIO;
	v->file_size += n;
	memcpy(v->blob, v->rec + EV_HDR, len); /* what the file has, not a new read */
	v->len = len;
	return 0;
}

void efi_vars_close(struct efi_vars *v)
{
	if (v->fd >= 0) {
		fdatasync(v->fd);
		close(v->fd);
	}
	free(v->path);
	free(v->rec);
	free(v->blob);
	memset(v, 0, sizeof(*v));
	v->fd = -1;
}

char *efi_vars_default_path(const char *manifest, const char *vm_name)
{
	char *name = file_safe_name(vm_name && *vm_name ? vm_name : "vm");
	struct stat st;
	char *dir, *out = NULL;

	if (!name)
		return NULL;

	if (!manifest || !strcmp(manifest, "-"))
		dir = strdup(".");
	else if (!stat(manifest, &st) && S_ISDIR(st.st_mode))
		dir = strdup(manifest);
	else {
		const char *slash = strrchr(manifest, '/');

		dir = slash ? strndup(manifest, (size_t)(slash - manifest + (slash == manifest)))
			    : strdup(".");
	}
	if (dir && asprintf(&out, "%s/%s.efivars", dir, name) < 0)
		out = NULL;
	free(dir);
	free(name);
	return out;
}
