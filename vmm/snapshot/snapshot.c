/* SPDX-License-Identifier: MIT */
/*
 * snapshot.c - save a VM into a snapshot (snapshot.h): pause, vCPUs,
 * chips, devices, config, memory; then resume or end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vmm/vm/lifecycle.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_file.h"
#include "vmm/snapshot/snapshot.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

#define SNAP_CHUNK 4096u

static bool all_zero(const uint8_t *p, size_t n)
{
	static const uint8_t zero[SNAP_CHUNK];

	return !memcmp(p, zero, n);
}

static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* Guest RAM into mem_fd at consecutive offsets, zero pages left as holes;
 * the regions' table into b (only the table when mem_fd < 0: live
 * migration sends the pages itself). */
static int save_memory(struct vm *vm, int mem_fd, struct snap_buf *b)
{
	const struct guest_mem *m = &vm->mem;
	uint64_t off = 0;
	int ret = 0;

	snap_buf_u32(b, m->n);
	for (unsigned int i = 0; i < m->n; i++) {
		const struct guest_mem_region *r = &m->r[i];

		snap_buf_u64(b, r->gpa);
		snap_buf_u64(b, r->size);
		snap_buf_u64(b, off);
		for (uint64_t p = 0; mem_fd >= 0 && p < r->size; p += SNAP_CHUNK) {
			size_t n = r->size - p < SNAP_CHUNK ? (size_t)(r->size - p) : SNAP_CHUNK;

			if (all_zero(r->host + p, n))
				continue;
			ret = write_all(mem_fd, r->host + p, n, off + p);
			if (ret)
				return error_errno(ret, "snapshot: writing guest memory");
		}
		off += r->size;
	}
	/* the file's size is all of RAM, its tail a hole if it is zero */
	if (mem_fd >= 0 && off && (ret = write_all(mem_fd, "", 1, off - 1)) == 0) {
		uint8_t last;

		if (pread(mem_fd, &last, 1, (off_t)(off - 1)) != 1)
			ret = -EIO;
	}
	return ret ? error_errno(ret, "snapshot: writing guest memory") : 0;
}

static int save_devices(struct vm *vm, struct snap_buf *out)
{
	struct snap_buf b = {0};
	int ret = 0;

	for (unsigned int i = 0; i < vm->n_devs && !ret; i++) {
		const struct device_type *t = vm->devs[i].type;

		if (!t->save) {
			ret = error_errno(-ENOTSUP, "snapshot: device %s has no snapshot state",
					  t->name);
			break;
		}
		b.len = 0;
		snap_buf_item(&b, 0, t->name, strlen(t->name));
		ret = t->save(vm->devs[i].state, &b);
		if (!ret && b.err)
			ret = b.err;
		if (!ret)
			snap_file_section(out, SNAP_SEC_DEVICE, i, b.p, b.len);
		else if (ret != -ENOTSUP)
			error_errno(ret, "snapshot: device %s", t->name);
	}
	snap_buf_release(&b);
	return ret;
}

static int save_vcpus(struct vm *vm, struct snap_buf *out, uint64_t *xcr0)
{
	struct snap_buf b = {0};
	struct kvm_xcrs xcrs;
	int ret = 0;

	*xcr0 = 0;
	for (uint32_t i = 0; i < vm->n_vcpus && !ret; i++) {
		b.len = 0;
		ret = snap_vcpu_save(vm, &vm->vcpus[i], &b);
		if (!ret && b.err)
			ret = b.err;
		if (!ret)
			snap_file_section(out, SNAP_SEC_VCPU, i, b.p, b.len);
		if (!ret && !ioctl(vm->vcpus[i].fd, KVM_GET_XCRS, &xcrs))
			for (uint32_t k = 0; k < xcrs.nr_xcrs && k < KVM_MAX_XCRS; k++)
				if (xcrs.xcrs[k].xcr == 0)
					*xcr0 |= xcrs.xcrs[k].value;
	}
	snap_buf_release(&b);
	return ret;
}

int snapshot_state(struct vm *vm, const struct kvm_clock_data *clock, bool user_paused, int mem_fd,
		   struct snap_buf *out)
{
	const char *config = vm->snapshot_config;
	struct snap_header h = {.version = SNAP_VERSION,
				.vendor = (uint32_t)vm->vendor,
				.n_vcpus = vm->n_vcpus,
				.memory_bytes = vm->cfg->memory_bytes,
				.features = SNAP_FEAT_XSAVE};
	struct snap_buf vcpus = {0}, b = {0};
	int ret;

	snprintf(h.writer, sizeof(h.writer), "%s", SNAP_WRITER);
	ret = save_vcpus(vm, &vcpus, &h.xcr0);
	if (!ret)
		ret = snap_chips_save(vm, clock, user_paused ? SNAP_RUN_PAUSED : 0, &b);
	if (ret)
		goto out;
	snap_file_begin(out, &h);
	snap_file_section(out, SNAP_SEC_CONFIG, 0, config, strlen(config));
	if (vm->snapshot_inputs)
		snap_file_section(out, SNAP_SEC_INPUT, 0, vm->snapshot_inputs,
				  vm->snapshot_inputs_len);
	snap_file_section(out, SNAP_SEC_VM, 0, b.p, b.len);
	snap_buf_put(out, vcpus.p, vcpus.len);
	ret = save_devices(vm, out);
	if (ret)
		goto out;
	b.len = 0;
	ret = save_memory(vm, mem_fd, &b);
	if (!ret)
		snap_file_section(out, SNAP_SEC_MEMORY, 0, b.p, b.len);
	snap_file_end(out);
	ret = ret ? ret : b.err ? b.err : out->err;
out:
	snap_buf_release(&vcpus);
	snap_buf_release(&b);
	return ret;
}

int snapshot_freeze_devices(struct vm *vm)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < vm->n_devs && !ret; i++)
		if (vm->devs[i].type->freeze)
			ret = vm->devs[i].type->freeze(vm->devs[i].state);
	if (ret)
		while (i-- > 0)
			if (vm->devs[i].type->thaw)
				vm->devs[i].type->thaw(vm->devs[i].state);
	return ret;
}

void snapshot_thaw_devices(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->n_devs; i++)
		if (vm->devs[i].type->thaw)
			vm->devs[i].type->thaw(vm->devs[i].state);
}

int snapshot_save(struct vm *vm, int state_fd, int mem_fd, bool resume)
{
	struct snap_buf out = {0};
	bool was_paused = vm_is_paused(vm);
	char reason[32], msg[256];
	struct kvm_clock_data clock;
	uint64_t t0 = vm_now_ns();
	int ret;

	ret = vm->snapshot_config ? 0 : -ENOTSUP;
	if (ret) {
		log_warn("snapshot: this VM has no config to record (vmlet probe)");
		return ret;
	}
	if (vm_paused_because(vm, reason, sizeof(reason), msg, sizeof(msg)) &&
	    strcmp(reason, "PausedByUser"))
		return error_errno(-EBUSY,
				   "snapshot: the VM is paused for an error (%s): resume "
				   "or stop it first",
				   reason);
	if (!was_paused) {
		ret = vm_pause(vm);
		if (ret)
			return ret;
	}
	ret = snap_clock_save(vm, &clock);
	if (!ret)
		ret = snapshot_freeze_devices(vm);
	if (!ret)
		ret = snapshot_state(vm, &clock, was_paused, mem_fd, &out);
	if (!ret)
		ret = write_all(state_fd, out.p, out.len, 0);
	if (!ret && (fsync(mem_fd) || fsync(state_fd)))
		ret = -errno;
	if (!ret)
		log_info("snapshot: %zu bytes of state, %llu ms paused", out.len,
			 (unsigned long long)(vm_now_ns() - t0) / 1000000);
	snap_buf_release(&out);
	if (!ret && !resume) {
		log_info("snapshot: the VM stops (--stop)");
		lifecycle_request_stop();
		vm_request_exit(vm, VM_EXIT_POWEROFF);
	} else {
		snapshot_thaw_devices(vm);
		if (!was_paused)
			vm_resume(vm);
	}
	return ret;
}
