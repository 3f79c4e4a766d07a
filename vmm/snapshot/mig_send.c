/* SPDX-License-Identifier: MIT */
/*
 * mig_send.c - the source of a live migration (migrate.h): pre-copy with
 * KVM's dirty log (its dirty ring where the VM has one, else the bitmap)
 * and the device model's own marks, stop-and-copy of the rest and the
 * snapshot state, then the destination's answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/disk/blk.h"
#include "vmm/snapshot/mig_int.h"
#include "vmm/snapshot/snap_file.h"
#include "vmm/snapshot/snapshot.h"
#include "vmm/util/log.h"
#include "vmm/vm/dirty_ring.h"
#include "vmm/vm/lifecycle.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

struct mig_src {
	struct vm *vm;
	int fd;
	uint64_t *pending[GUEST_MEM_MAX_REGIONS]; /* pages still to send */
	uint64_t *log;				  /* KVM_GET_DIRTY_LOG's bitmap */
	/* with the dirty ring: per RAM slot the pages its entries named
	 * since the last collect() (harvests in a pass add to them) */
	struct dirty_ring_slot ring[GUEST_MEM_MAX_REGIONS];
	uint64_t iter_bytes;
	bool released; /* the disks' locks */
	const struct migrate_tick *tick;
	bool ticking;		/* in pre-copy: the guest runs */
	uint64_t t0, last_tick; /* ns */
};

/* The figures so far, then the tick (now, or MIGRATE_TICK_MS after the
 * last one). */
static void tick(struct mig_src *s, bool now)
{
	uint64_t t = vm_now_ns();

	if (!s->tick || !s->tick->fn || (!now && t - s->last_tick < MIGRATE_TICK_MS * 1000000ull))
		return;
	s->last_tick = t;
	mig_stats.total_ms = (t - s->t0) / 1000000;
	s->tick->fn(s->tick->ctx);
}

static uint64_t words(const struct guest_mem_region *r)
{
	return guest_mem_bitmap_bytes(r->size) / 8;
}

/* KVM_MEM_LOG_DIRTY_PAGES on or off for every RAM slot (vm.c: slot i is
 * region i). */
static int set_logging(struct vm *vm, bool on)
{
	for (unsigned int i = 0; i < vm->mem.n; i++) {
		struct kvm_userspace_memory_region r = {
		    .slot = i,
		    .flags = on ? KVM_MEM_LOG_DIRTY_PAGES : 0,
		    .guest_phys_addr = vm->mem.r[i].gpa,
		    .memory_size = vm->mem.r[i].size,
		    .userspace_addr = (uintptr_t)vm->mem.r[i].host,
		};

		if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0)
			return error_errno(-errno, "migrate: dirty logging %s on slot %u",
					   on ? "on" : "off", i);
	}
	return 0;
}

/* Harvest the vCPUs' dirty rings into s->ring (and let vCPUs waiting on
 * a full ring go on). An entry that names no page of a RAM slot fails
 * the migration: the pages it stood for are unknown. */
static int harvest(struct mig_src *s)
{
	uint64_t bad = 0;
	int ret = vm_dirty_ring_collect(s->vm, s->ring, s->vm->mem.n, &bad);

	if (!ret && bad)
		ret = error_errno(-EIO, "migrate: %llu dirty ring entries outside guest RAM",
				  (unsigned long long)bad);
	return ret;
}

/* Region i's pages KVM saw dirtied since the last call into s->log (and
 * no longer in KVM's log or s->ring). */
static int kvm_dirty(struct mig_src *s, unsigned int i)
{
	uint64_t n = words(&s->vm->mem.r[i]);
	struct kvm_dirty_log d = {.slot = i, .dirty_bitmap = s->log};

	if (s->vm->ring_entries) {
		for (uint64_t w = 0; w < n; w++)
			s->log[w] = __atomic_exchange_n(&s->ring[i].bitmap[w], 0, __ATOMIC_RELAXED);
		return 0;
	}
	memset(s->log, 0, n * 8);
	if (ioctl(s->vm->vm_fd, KVM_GET_DIRTY_LOG, &d) < 0)
		return error_errno(-errno, "migrate: KVM_GET_DIRTY_LOG slot %u", i);
	return 0;
}

/* KVM's dirty pages since the last call (its ring harvested and reset, or
 * KVM_GET_DIRTY_LOG, which clears them) into pending; with devices, also
 * every page the device model reached since tracking began. The number of
 * pages pending. */
static int collect(struct mig_src *s, bool devices, uint64_t *n)
{
	const struct guest_mem *m = &s->vm->mem;
	int ret = s->vm->ring_entries ? harvest(s) : 0;

	*n = 0;
	for (unsigned int i = 0; i < m->n && !ret; i++) {
		ret = kvm_dirty(s, i);
		for (uint64_t w = 0; w < words(&m->r[i]) && !ret; w++) {
			uint64_t dev =
			    devices ? __atomic_load_n(&m->dev_dirty[i][w], __ATOMIC_RELAXED) : 0;

			s->pending[i][w] |= s->log[w] | dev;
			*n += (uint64_t)__builtin_popcountll(s->pending[i][w]);
		}
	}
	return ret;
}

static bool page_zero(const uint8_t *p)
{
	static const uint8_t zero[MIG_PAGE];

	return !memcmp(p, zero, MIG_PAGE);
}

/* pages [first, first+n) of region r */
static int send_run(struct mig_src *s, const struct guest_mem_region *r, uint64_t first, uint64_t n)
{
	uint64_t gpa = r->gpa + first * MIG_PAGE;
	int ret =
	    mig_send(s->fd, MIG_PAGES, &gpa, sizeof(gpa), r->host + first * MIG_PAGE, n * MIG_PAGE);

	if (!ret) {
		s->iter_bytes += n * MIG_PAGE;
		mig_stats.pages += n;
		if (s->ticking)
			tick(s, false);
	}
	return ret;
}

/* Every pending page, in runs of at most MIG_MAX_PAGES; skip_zero: leave
 * out zero pages (the first pass: the destination's RAM starts zero). */
static int send_pending(struct mig_src *s, bool skip_zero)
{
	const struct guest_mem *m = &s->vm->mem;
	int ret = 0;

	for (unsigned int i = 0; i < m->n && !ret; i++) {
		const struct guest_mem_region *r = &m->r[i];
		uint64_t pages = r->size / MIG_PAGE, start = 0, run = 0;

		for (uint64_t p = 0; p < pages && !ret; p++) {
			bool want = s->pending[i][p >> 6] & (1ull << (p & 63));

			/* a vCPU waits on its full ring: harvest it now (its
			 * pages go in the next pass) */
			if (!(p & 255) && s->vm->ring_entries && vm_dirty_ring_wanted(s->vm) &&
			    (ret = harvest(s)))
				break;

			if (want && skip_zero && page_zero(r->host + p * MIG_PAGE))
				want = false;
			if (want) {
				if (!run)
					start = p;
				if (++run < MIG_MAX_PAGES)
					continue;
			}
			if (run)
				ret = send_run(s, r, start, run);
			run = 0;
		}
		if (!ret && run)
			ret = send_run(s, r, start, run);
		memset(s->pending[i], 0, words(r) * 8);
	}
	return ret;
}

static int src_alloc(struct mig_src *s)
{
	const struct guest_mem *m = &s->vm->mem;
	uint64_t most = 0;

	for (unsigned int i = 0; i < m->n; i++) {
		s->pending[i] = calloc(words(&m->r[i]), 8);
		s->ring[i] =
		    (struct dirty_ring_slot){m->r[i].size / MIG_PAGE, calloc(words(&m->r[i]), 8)};
		if (!s->pending[i] || !s->ring[i].bitmap)
			return -ENOMEM;
		most = words(&m->r[i]) > most ? words(&m->r[i]) : most;
	}
	s->log = calloc(most ? most : 1, 8);
	return s->log ? 0 : -ENOMEM;
}

static void src_release(struct mig_src *s)
{
	for (unsigned int i = 0; i < GUEST_MEM_MAX_REGIONS; i++) {
		free(s->pending[i]);
		free(s->ring[i].bitmap);
	}
	free(s->log);
}

/* The destination takes this VM's config (MIG_HELLO, its answer). */
static int hello(struct mig_src *s, char *msg, size_t mlen)
{
	const char *config = s->vm->snapshot_config;
	uint8_t head[12];
	uint32_t v = MIG_VERSION;
	int ret;

	memcpy(head, MIG_MAGIC, 8);
	memcpy(head + 8, &v, 4);
	ret = mig_send(s->fd, MIG_HELLO, head, sizeof(head), config, strlen(config));
	if (ret) {
		snprintf(msg, mlen, "cannot reach the destination: %s", strerror(-ret));
		return ret;
	}
	return mig_recv_reply(s->fd, msg, mlen);
}

/* Pre-copy: everything once, then what was dirtied meanwhile, until the
 * rest fits max_ms at the bandwidth seen (or MIGRATE_MAX_ITER). */
static int precopy(struct mig_src *s, uint32_t max_ms)
{
	uint64_t n = 0, bw = 0; /* bytes per ms */
	int ret = 0;

	for (unsigned int i = 0; i < s->vm->mem.n; i++)
		memset(s->pending[i], 0xff, words(&s->vm->mem.r[i]) * 8);
	s->ticking = true;
	for (uint32_t it = 0; !ret; it++) {
		uint64_t t0 = vm_now_ns(), ns;

		s->iter_bytes = 0;
		mig_stats.iterations = it + 1;
		tick(s, true);
		ret = send_pending(s, it == 0);
		ns = vm_now_ns() - t0;
		if (!ret)
			ret = collect(s, true, &n);
		if (ret)
			break;
		if (ns >= 1000000 && s->iter_bytes >= (1u << 20))
			bw = s->iter_bytes / (ns / 1000000);
		mig_stats.dirty_pages_rate = ns ? n * 1000000000ull / ns : 0;
		log_debug("migrate: pass %u sent %llu bytes in %llu ms, %llu pages dirty", it + 1,
			  (unsigned long long)s->iter_bytes, (unsigned long long)(ns / 1000000),
			  (unsigned long long)n);
		if ((bw && n * MIG_PAGE / bw <= max_ms) || (!bw && n <= 256) ||
		    it + 1 >= MIGRATE_MAX_ITER)
			break;
	}
	s->ticking = false;
	return ret;
}

/* Stop-and-copy: paused, devices held (drained, disks flushed), the rest of
 * the pages and the state; then the destination's answer. */
static int stop_and_copy(struct mig_src *s, bool paused, char *msg, size_t mlen)
{
	uint32_t flags = paused ? MIG_PAUSED : 0;
	struct snap_buf out = {0};
	struct kvm_clock_data clock;
	uint64_t n;
	int ret;

	ret = snap_clock_save(s->vm, &clock);
	if (!ret)
		ret = collect(s, true, &n);
	if (!ret && (ret = send_pending(s, false)))
		snprintf(msg, mlen, "sending memory: %s", strerror(-ret));
	if (!ret)
		ret = snapshot_state(s->vm, &clock, paused, -1, &out);
	/* the disks change hands: flushed and unlocked before the
	 * destination takes them (blk.h) */
	if (!ret && (ret = blk_locks_release()))
		snprintf(msg, mlen, "flushing the disks: %s", strerror(-ret));
	if (!ret)
		s->released = true;
	if (ret == -ENOTSUP || ret == -EBUSY || ret == -EAGAIN)
		snprintf(msg, mlen, "the VM cannot be migrated now (vmlet's log says why)");
	if (!ret && (ret = mig_send(s->fd, MIG_STATE, out.p, out.len, NULL, 0)))
		snprintf(msg, mlen, "sending the state: %s", strerror(-ret));
	snap_buf_release(&out);
	if (!ret)
		ret = mig_recv_reply(s->fd, msg, mlen);
	/* the destination holds the guest, ready: it runs it once told to,
	 * so that a source that did not hear this answer never leaves two */
	if (!ret && (ret = mig_send(s->fd, MIG_COMMIT, &flags, sizeof(flags), NULL, 0)))
		snprintf(msg, mlen, "the destination went away before the switch: %s",
			 strerror(-ret));
	return ret;
}

static int migrate_run(struct mig_src *s, uint32_t max_ms, char *msg, size_t mlen)
{
	bool was_paused = vm_is_paused(s->vm);
	uint64_t t0;
	int ret;

	ret = src_alloc(s);
	if (!ret)
		ret = hello(s, msg, mlen);
	if (ret)
		return ret;
	msg[0] = 0; /* its "ready" is no reason for a later failure */
	/* marks from now on; what devices were doing completes first */
	guest_mem_track(&s->vm->mem, true);
	ret = set_logging(s->vm, true);
	if (!ret && !(ret = snapshot_freeze_devices(s->vm)))
		snapshot_thaw_devices(s->vm);
	if (!ret && (ret = precopy(s, max_ms)))
		snprintf(msg, mlen, "sending memory: %s", strerror(-ret));
	if (ret)
		goto out;
	t0 = vm_now_ns();
	if (!was_paused)
		ret = vm_pause(s->vm);
	if (!ret && !(ret = snapshot_freeze_devices(s->vm))) {
		ret = stop_and_copy(s, was_paused, msg, mlen);
		if (ret)
			snapshot_thaw_devices(s->vm);
	}
	mig_stats.downtime_ms = (vm_now_ns() - t0) / 1000000;
	if (ret && s->released && blk_locks_take())
		error("migrate: the disks' locks could not be taken back: another process holds "
		      "them; the guest runs on here");
	if (ret && !was_paused)
		vm_resume(s->vm);
out:
	if (ret) {
		set_logging(s->vm, false);
		guest_mem_track(&s->vm->mem, false);
		/* what the rings still hold is of no use now; waiting vCPUs go on */
		if (s->vm->ring_entries)
			vm_dirty_ring_collect(s->vm, NULL, 0, &(uint64_t){0});
	}
	return ret;
}

/* Disks that live in this process's temporary files (a containerDisk's
 * overlay, an emptyDisk) cannot move with the guest. */
static const char *local_disk(const struct vm_config *cfg)
{
	for (unsigned int i = 0; i < cfg->n_disks; i++) {
		const struct vm_disk *d = &cfg->disks[i];

		if ((d->source == VM_DISK_CONTAINERDISK && !d->read_only &&
		     d->device != VM_DEV_CDROM) ||
		    (d->source == VM_DISK_EMPTYDISK && !d->path))
			return d->name;
	}
	return NULL;
}

int migrate_send(struct vm *vm, int fd, uint32_t max_downtime_ms, const struct migrate_tick *tk,
		 char *msg, size_t mlen)
{
	uint64_t t0 = vm_now_ns(), full0;
	struct mig_src s = {.vm = vm, .fd = fd, .tick = tk, .t0 = t0, .last_tick = t0};
	char reason[32], why[256], waits[48] = "";
	int ret;

	msg[0] = 0;
	if (!vm->snapshot_config) {
		snprintf(msg, mlen, "this VM has no config to send (vmlet probe)");
		return -ENOTSUP;
	}
	/* SMRAM splits low RAM into KVM slots of two address spaces (smm.c)
	 * that set_logging() and the harvest do not follow yet: refused
	 * before anything changes, where they would fail half-way */
	if (vm->opt.smm) {
		snprintf(msg, mlen,
			 "a VM with SMM (OVMF's secure boot) cannot migrate live yet: its SMRAM "
			 "slots are not dirty-logged; take a snapshot with --stop and restore it");
		return -ENOTSUP;
	}
	if (local_disk(vm->cfg)) {
		snprintf(msg, mlen,
			 "disk '%s' keeps the guest's writes in this process's temporary files "
			 "(a containerDisk's overlay or an emptyDisk): it cannot move",
			 local_disk(vm->cfg));
		return -ENOTSUP;
	}
	if (vm_paused_because(vm, reason, sizeof(reason), why, sizeof(why)) &&
	    strcmp(reason, "PausedByUser")) {
		snprintf(msg, mlen, "the VM is paused for an error (%s): resume or stop it first",
			 reason);
		return -EBUSY;
	}
	full0 = __atomic_load_n(&vm->ring_full_waits, __ATOMIC_RELAXED);
	mig_stats = (struct migrate_stats){.state = "active",
					   .dirty_log = vm->ring_entries ? "ring" : "bitmap"};
	ret = migrate_run(&s, max_downtime_ms ? max_downtime_ms : MIGRATE_DEFAULT_DOWNTIME, msg,
			  mlen);
	src_release(&s);
	mig_stats.total_ms = (vm_now_ns() - t0) / 1000000;
	mig_stats.state = ret ? "failed" : "completed";
	if (ret) {
		if (!msg[0])
			snprintf(msg, mlen, "%s", strerror(-ret));
		error("migrate: failed, the guest runs on here: %s", msg);
		return ret;
	}
	/* how often a vCPU waited for the harvest of its full dirty ring */
	if (vm->ring_entries)
		snprintf(
		    waits, sizeof(waits), ", %llu waits on a full ring",
		    (unsigned long long)(__atomic_load_n(&vm->ring_full_waits, __ATOMIC_RELAXED) -
					 full0));
	log_info("migrate: the destination runs the guest: %llu bytes, %u passes (dirty %s%s), "
		 "%llu ms down, %llu ms in all",
		 (unsigned long long)mig_stats.bytes, mig_stats.iterations, mig_stats.dirty_log,
		 waits, (unsigned long long)mig_stats.downtime_ms,
		 (unsigned long long)mig_stats.total_ms);
	lifecycle_request_stop();
	vm_request_exit(vm, VM_EXIT_POWEROFF);
	return 0;
}
