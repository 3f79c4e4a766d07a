/* SPDX-License-Identifier: MIT */
/*
 * snap_restore.c - start a created VM from a snapshot directory
 * (snapshot.h): check all of DIR/state, compare it with this VM, map
 * DIR/memory copy-on-write over guest RAM, load vCPUs, chips, devices and
 * the clock. Every length and value in the files is untrusted.
 */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/log.h"
#include "vmm/snapshot/snap_file.h"
#include "vmm/snapshot/snapshot.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

int snap_read_state_at(int dfd, uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *p = NULL;
	size_t got = 0;
	int fd, ret = 0;

	fd = openat(dfd, SNAP_STATE_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > SNAP_MAX_STATE) {
		ret = -EFBIG;
		goto out;
	}
	p = malloc((size_t)st.st_size + 1);
	if (!p) {
		ret = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, p + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	*out = p;
	*len = got;
	p = NULL;
out:
	free(p);
	close(fd);
	return ret;
}

/* The host's KVM offers every XSAVE feature the guest had enabled. */
static bool xcr0_supported(const struct vm *vm, uint64_t xcr0)
{
	const struct kvm_cpuid2 *c = vm->host_cpuid;

	for (uint32_t i = 0; i < c->nent; i++)
		if (c->entries[i].function == 0xd && c->entries[i].index == 0) {
			uint64_t host = c->entries[i].eax | (uint64_t)c->entries[i].edx << 32;

			return !(xcr0 & ~host);
		}
	return xcr0 == 0;
}

static int check_header(struct vm *vm, const struct snap_header *h, const struct snap_file *f,
			const char *config)
{
	const struct snap_section *s = snap_file_find(f, SNAP_SEC_CONFIG, 0);

	if (h->vendor != (uint32_t)vm->vendor)
		return error_errno(-EINVAL,
				   "restore: the snapshot was taken with another CPU "
				   "vendor (%u, this VM %u)",
				   h->vendor, (unsigned int)vm->vendor);
	if (h->n_vcpus != vm->n_vcpus || h->memory_bytes != vm->cfg->memory_bytes)
		return error_errno(-EINVAL,
				   "restore: the snapshot has %u vCPUs and %llu bytes of memory, "
				   "this VM %u and %llu",
				   h->n_vcpus, (unsigned long long)h->memory_bytes, vm->n_vcpus,
				   (unsigned long long)vm->cfg->memory_bytes);
	if (h->features & ~SNAP_FEAT_XSAVE)
		return error_errno(-ENOTSUP, "restore: the snapshot needs features 0x%x",
				   h->features);
	if (!xcr0_supported(vm, h->xcr0))
		return error_errno(
		    -ENOTSUP,
		    "restore: the guest used XSAVE features (XCR0 0x%llx) this host's "
		    "KVM does not offer",
		    (unsigned long long)h->xcr0);
	if (!s || s->len != strlen(config) || memcmp(s->data, config, s->len))
		return error_errno(-EINVAL, "restore: the manifests and options resolve to another "
					    "config than the snapshot's (vmlet resolve -o config "
					    "shows it; disks, NICs and sizes must be the same)");
	return 0;
}

/* Live migration: the pages are in guest RAM already; the regions must be
 * this VM's. */
static int check_regions(const struct guest_mem *m, struct snap_cur *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t gpa, size, off;

		if (snap_cur_u64(c, &gpa) || snap_cur_u64(c, &size) || snap_cur_u64(c, &off) ||
		    gpa != m->r[i].gpa || size != m->r[i].size)
			return error_errno(-EINVAL,
					   "restore: memory region %u does not match this VM", i);
	}
	return c->left ? error_errno(-EINVAL, "restore: trailing bytes in the memory section") : 0;
}

/* DIR/memory over guest RAM, MAP_PRIVATE (dfd < 0: see check_regions). */
static int map_memory(struct vm *vm, int dfd, const struct snap_section *s)
{
	struct snap_cur c = snap_cur_make(s->data, s->len);
	struct guest_mem *m = &vm->mem;
	struct stat st;
	uint32_t n;
	int fd, ret = 0;

	if (vm->cfg->hugepage_size && dfd >= 0)
		return error_errno(-ENOTSUP, "restore: a VM on hugepages cannot map its memory "
					     "from a snapshot file yet");
	if (snap_cur_u32(&c, &n) || n != m->n)
		return error_errno(-EINVAL, "restore: the snapshot's memory layout differs");
	if (dfd < 0)
		return check_regions(m, &c, n);
	fd = openat(dfd, SNAP_MEMORY_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return error_errno(-errno, "restore: %s", SNAP_MEMORY_FILE);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = error_errno(-EINVAL, "restore: %s is not a regular file", SNAP_MEMORY_FILE);
		goto out;
	}
	for (uint32_t i = 0; i < n && !ret; i++) {
		struct guest_mem_region *r = &m->r[i];
		uint64_t gpa, size, off;

		if (snap_cur_u64(&c, &gpa) || snap_cur_u64(&c, &size) || snap_cur_u64(&c, &off) ||
		    gpa != r->gpa || size != r->size || (off & 4095) ||
		    off > (uint64_t)st.st_size || size > (uint64_t)st.st_size - off) {
			ret = error_errno(-EINVAL,
					  "restore: memory region %u does not match this VM or "
					  "lies outside %s (%lld bytes)",
					  i, SNAP_MEMORY_FILE, (long long)st.st_size);
			break;
		}
		if (mmap(r->host, r->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
			 (off_t)off) == MAP_FAILED)
			ret = error_errno(-errno, "restore: mapping %s", SNAP_MEMORY_FILE);
	}
	if (!ret && c.left)
		ret = error_errno(-EINVAL, "restore: trailing bytes in the memory section");
out:
	close(fd);
	return ret;
}

static int load_devices(struct vm *vm, const struct snap_file *f)
{
	for (unsigned int i = 0; i < vm->n_devs; i++) {
		const struct device_type *t = vm->devs[i].type;
		const struct snap_section *s = snap_file_find(f, SNAP_SEC_DEVICE, i);
		struct snap_cur c, name;
		int ret;

		if (!s)
			return error_errno(-EINVAL, "restore: device %s is not in the snapshot",
					   t->name);
		c = snap_cur_make(s->data, s->len);
		if (snap_cur_want_any(&c, 0, &name) || name.left != strlen(t->name) ||
		    memcmp(name.p, t->name, name.left))
			return error_errno(
			    -EINVAL, "restore: device %u is not a %s in the snapshot", i, t->name);
		if (!t->load)
			return error_errno(-ENOTSUP, "restore: device %s cannot load state",
					   t->name);
		ret = t->load(vm->devs[i].state, &c);
		if (!ret && c.left)
			ret = -EBADMSG;
		if (ret)
			return error_errno(ret, "restore: device %s: bad state", t->name);
	}
	return 0;
}

static int load_all(struct vm *vm, int dfd, const struct snap_file *f)
{
	const struct snap_section *vs = snap_file_find(f, SNAP_SEC_VM, 0);
	const struct snap_section *ms = snap_file_find(f, SNAP_SEC_MEMORY, 0);
	struct snap_cur c;
	int ret;

	if (!vs || !ms)
		return error_errno(-EINVAL, "restore: the snapshot lacks its %s section",
				   vs ? "memory" : "VM");
	/* config, VM, memory, vCPUs, devices, and the manifests (optional) */
	if (f->n - (snap_file_find(f, SNAP_SEC_INPUT, 0) != NULL) != 3u + vm->n_vcpus + vm->n_devs)
		return error_errno(-EINVAL,
				   "restore: the snapshot has %u sections, this VM "
				   "needs %u",
				   f->n, 3u + vm->n_vcpus + vm->n_devs);
	ret = map_memory(vm, dfd, ms);
	if (ret)
		return ret;
	c = snap_cur_make(vs->data, vs->len);
	ret = snap_chips_load(vm, &c);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < vm->n_vcpus; i++) {
		const struct snap_section *s = snap_file_find(f, SNAP_SEC_VCPU, i);
		struct snap_cur vc;

		if (!s)
			return error_errno(-EINVAL, "restore: vcpu%u is not in the snapshot", i);
		vc = snap_cur_make(s->data, s->len);
		ret = snap_vcpu_load(vm, &vm->vcpus[i], &vc);
		if (!ret && vc.left)
			ret = error_errno(-EINVAL, "restore: vcpu%u: trailing state", i);
		if (ret)
			return ret;
	}
	ret = load_devices(vm, f);
	if (ret)
		return ret;
	c = snap_cur_make(vs->data, vs->len);
	return snap_clock_load(vm, &c);
}

int snapshot_load(struct vm *vm, const void *data, size_t len, int dfd, const char *config_json)
{
	struct snap_file f;
	char err[256];
	int ret;

	ret = snap_file_parse(data, len, &f, err, sizeof(err));
	if (ret)
		return error_errno(ret, "restore: %s: %s", dfd >= 0 ? SNAP_STATE_FILE : "state",
				   err);
	ret = check_header(vm, &f.hdr, &f, config_json);
	if (!ret)
		ret = load_all(vm, dfd, &f);
	snap_file_release(&f);
	return ret;
}

int snapshot_restore(struct vm *vm, const char *dir, const char *config_json)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int dfd, ret;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return error_errno(-errno, "restore: %s", dir);
	ret = snap_read_state_at(dfd, &data, &len);
	if (ret) {
		error_errno(ret, "restore: %s/%s", dir, SNAP_STATE_FILE);
		goto out;
	}
	ret = snapshot_load(vm, data, len, dfd, config_json);
	if (!ret)
		log_info("restore: the guest continues from %s", dir);
out:
	free(data);
	close(dfd);
	return ret;
}
