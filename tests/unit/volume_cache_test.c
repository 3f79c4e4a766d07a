// SPDX-License-Identifier: MIT
/*
 * A disk's cache mode as KubeVirt's virt-launcher sets it (volume.c):
 * unset is none (O_DIRECT) where the image takes direct I/O, else
 * writethrough (O_DSYNC); explicit none without direct I/O is refused;
 * writeback and unsafe are the page cache. A file system without O_DIRECT
 * (tmpfs before Linux 6.6, some FUSE and network file systems) is made
 * here on any host: this program's open() and fcntl(F_SETFL) refuse
 * O_DIRECT with EINVAL, as such a file system does, for files named
 * "nodio*" (vmm/disk/ sets O_DIRECT with F_SETFL). The descriptors
 * volume_open() leaves are checked (fcntl F_GETFL) along with the modes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/disk/volume.h"
#include "vmm/vm_config.h"

static char dir[64];

/* vmm/disk/ opens images through here (this program's definition comes
 * before the C library's). */
int open(const char *path, int flags, ...)
{
	const char *base = strrchr(path, '/');
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	if ((flags & O_DIRECT) && !strncmp(base ? base + 1 : path, "nodio", 5)) {
		errno = EINVAL;
		return -1;
	}
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

/* The same for fcntl(F_SETFL, ... | O_DIRECT) on such a file. */
int fcntl(int fd, int cmd, ...)
{
	char link[64], target[512];
	const char *base;
	va_list ap;
	long arg;
	ssize_t n;

	va_start(ap, cmd);
	arg = va_arg(ap, long); /* every command vmlet uses takes one or none */
	va_end(ap);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (cmd == F_SETFL && (arg & O_DIRECT) &&
	    (n = readlink(link, target, sizeof(target) - 1)) > 0) {
		target[n] = 0;
		base = strrchr(target, '/');
		if (!strncmp(base ? base + 1 : target, "nodio", 5)) {
			errno = EINVAL;
			return -1;
		}
	}
	return (int)syscall(SYS_fcntl, fd, cmd, arg);
}

/* The open file of disk cache mode `cache` on image name, or NULL (its
 * error is logged). */
static struct blk *open_disk(const char *name, enum vm_cache_mode cache)
{
	char path[128];
	struct vm_config cfg = {0};
	struct vm_disk d = {.name = "d", .device = VM_DEV_DISK, .source = VM_DISK_HOSTDISK};
	struct blk *b = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || ftruncate(fileno(f), 1 << 20))
		return NULL;
	fclose(f);
	d.path = path;
	d.cache = cache;
	return volume_open(&cfg, &d, &b) ? NULL : b;
}

/* The descriptor flags of b's image, -1 when b is NULL. */
static int flags_of(struct blk *b)
{
	int fl = b ? fcntl(b->fd, F_GETFL) : -1;

	return fl < 0 ? -1 : fl & (O_DIRECT | O_DSYNC);
}

static bool direct_io_here(void)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "%s/probe", dir);
	fd = open(path, O_RDWR | O_CREAT | O_DIRECT, 0600);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static void test_cache_modes(void)
{
	struct blk *b;

	/* no direct I/O: unset is writethrough, none is refused */
	b = open_disk("nodio-unset.img", VM_CACHE_DEFAULT);
	CHECK(b && b->cache == BLK_CACHE_WRITETHROUGH && flags_of(b) == O_DSYNC && !b->dio_align);
	blk_close(b);
	CHECK(open_disk("nodio-none.img", VM_CACHE_NONE) == NULL);
	b = open_disk("nodio-wb.img", VM_CACHE_WRITEBACK);
	CHECK(b && b->cache == BLK_CACHE_WRITEBACK && flags_of(b) == 0);
	blk_close(b);
	b = open_disk("nodio-wt.img", VM_CACHE_WRITETHROUGH);
	CHECK(b && b->cache == BLK_CACHE_WRITETHROUGH && flags_of(b) == O_DSYNC);
	blk_close(b);
	if (!direct_io_here()) {
		SKIP("the test directory's file system has no O_DIRECT");
	}
	/* direct I/O: unset and none are O_DIRECT, aligned to what the kernel says */
	b = open_disk("unset.img", VM_CACHE_DEFAULT);
	CHECK(b && b->cache == BLK_CACHE_NONE && flags_of(b) == O_DIRECT);
	CHECK(b && b->dio_align >= 512 && !(b->dio_align & (b->dio_align - 1)));
	blk_close(b);
	b = open_disk("none.img", VM_CACHE_NONE);
	CHECK(b && b->cache == BLK_CACHE_NONE && flags_of(b) == O_DIRECT);
	blk_close(b);
	b = open_disk("wb.img", VM_CACHE_WRITEBACK);
	CHECK(b && flags_of(b) == 0);
	blk_close(b);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/var/tmp/vmlet-vcache.XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/vmlet-vcache.XXXXXX");
		if (!mkdtemp(dir))
			return 1;
	}
	TEST_RUN(test_cache_modes);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return test_summary();
}
