// SPDX-License-Identifier: MIT
/*
 * hostDisk types at volume_open() (volume.c): only DiskOrCreate
 * (create_missing) makes a missing file, sparse at its capacity; type Disk
 * never creates one, even with a capacity in the config (spec/ refuses
 * that combination, as KubeVirt does: this is the VMM's own guard), and
 * DiskOrCreate leaves an existing file's size alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/disk/volume.h"
#include "vmm/vm_config.h"

static char dir[64];

/* volume_open() of a hostDisk at dir/name: 0 or -errno; *size the file's
 * size afterwards, -1 when there is none. */
static int open_host_disk(const char *name, bool create, uint64_t capacity, long long *size)
{
	char path[128];
	struct vm_config cfg = {0};
	struct vm_disk d = {.name = "d", .device = VM_DEV_DISK, .source = VM_DISK_HOSTDISK};
	struct blk *b = NULL;
	struct stat st;
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	d.path = path;
	d.capacity = capacity;
	d.create_missing = create;
	d.cache = VM_CACHE_WRITEBACK;
	r = volume_open(&cfg, &d, &b);
	if (b)
		blk_close(b);
	*size = stat(path, &st) ? -1 : (long long)st.st_size;
	return r;
}

static void test_host_disk_types(void)
{
	long long size;

	CHECK(open_host_disk("disk.img", false, 1 << 20, &size) < 0);
	CHECK(size == -1); /* Disk: never created, capacity or not */
	CHECK(open_host_disk("disk.img", false, 0, &size) < 0 && size == -1);
	CHECK(open_host_disk("create.img", true, 2 << 20, &size) == 0);
	CHECK(size == 2 << 20); /* DiskOrCreate: made at its capacity */
	CHECK(open_host_disk("create.img", true, 4 << 20, &size) == 0);
	CHECK(size == 2 << 20); /* an existing file is used as it is */
	CHECK(open_host_disk("create.img", false, 0, &size) == 0 && size == 2 << 20);
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/vmlet-vhost.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	TEST_RUN(test_host_disk_types);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return test_summary();
}
