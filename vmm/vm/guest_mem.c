/* SPDX-License-Identifier: MIT */
/*
 * guest_mem.c - guest RAM: one anonymous mapping per RAM region that
 * arch_ram_regions() lays out around the 32-bit MMIO hole.
 *
 * Memory is reserved, not touched: a 5 GiB guest that only reads its memory
 * map costs the host a few pages. THP is requested with madvise(), on a
 * mapping aligned to 2 MiB (map_thp_aligned()); explicit
 * hugepages (memory.hugepages.pageSize) need MAP_HUGETLB and pages reserved
 * on the host, which is checked up front so the error names the cause.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/x86_64/layout.h"
#include "vmm/vm/guest_mem.h"
#include "vmm/util/log.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

/* Pages [off, off+len) of r (bounds checked by the caller). */
static void mark_pages(uint64_t *map, uint64_t off, uint64_t len)
{
	uint64_t first = off >> 12, last = (off + (len ? len : 1) - 1) >> 12;

	if (!map)
		return;
	for (uint64_t p = first; p <= last; p++)
		__atomic_fetch_or(&map[p >> 6], 1ull << (p & 63), __ATOMIC_RELAXED);
}

void guest_mem_set_smram(struct guest_mem *m, uint64_t tseg_lo, uint64_t tseg_hi, bool aseg_hidden)
{
	/* hi first when the range grows, lo first when it shrinks: a reader
	 * between the two stores sees the larger range */
	if (tseg_hi >= __atomic_load_n(&m->smram_hi, __ATOMIC_RELAXED)) {
		__atomic_store_n(&m->smram_hi, tseg_hi, __ATOMIC_RELEASE);
		__atomic_store_n(&m->smram_lo, tseg_lo, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&m->smram_lo, tseg_lo, __ATOMIC_RELEASE);
		__atomic_store_n(&m->smram_hi, tseg_hi, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&m->aseg_hidden, aseg_hidden, __ATOMIC_RELEASE);
}

/* Does [gpa, end) touch SMRAM hidden outside SMM? */
static bool guest_mem_smram(const struct guest_mem *m, gpa_t gpa, uint64_t end)
{
	uint64_t lo = __atomic_load_n(&m->smram_lo, __ATOMIC_ACQUIRE),
		 hi = __atomic_load_n(&m->smram_hi, __ATOMIC_ACQUIRE);

	if (lo < hi && gpa < hi && end > lo)
		return true;
	return __atomic_load_n(&m->aseg_hidden, __ATOMIC_ACQUIRE) && gpa < 0xc0000 && end > 0xa0000;
}

void *guest_mem_ptr(const struct guest_mem *m, gpa_t gpa, uint64_t len)
{
	if (!m)
		return NULL;
	for (unsigned int i = 0; i < m->n && i < GUEST_MEM_MAX_REGIONS; i++) {
		const struct guest_mem_region *r = &m->r[i];

		/* [gpa, gpa+len) inside [r->gpa, r->gpa + r->size), written
		 * with subtractions only so that nothing can wrap */
		if (gpa < r->gpa || gpa - r->gpa > r->size || len > r->size - (gpa - r->gpa))
			continue;
		if (guest_mem_smram(m, gpa, gpa + (len ? len : 1)))
			return NULL;
		if (__atomic_load_n(&m->tracking, __ATOMIC_ACQUIRE) && gpa - r->gpa < r->size)
			mark_pages(m->dev_dirty[i], gpa - r->gpa, len);
		return r->host + (gpa - r->gpa);
	}
	return NULL;
}

void guest_mem_mark_host(const struct guest_mem *m, const void *p, uint64_t len)
{
	const uint8_t *h = p;

	if (!m || !__atomic_load_n(&m->tracking, __ATOMIC_ACQUIRE))
		return;
	for (unsigned int i = 0; i < m->n && i < GUEST_MEM_MAX_REGIONS; i++) {
		const struct guest_mem_region *r = &m->r[i];

		if (h < r->host || (uint64_t)(h - r->host) >= r->size ||
		    len > r->size - (uint64_t)(h - r->host))
			continue;
		mark_pages(m->dev_dirty[i], (uint64_t)(h - r->host), len);
		return;
	}
}

void guest_mem_track(struct guest_mem *m, bool on)
{
	if (on)
		for (unsigned int i = 0; i < m->n; i++)
			if (m->dev_dirty[i])
				memset(m->dev_dirty[i], 0, guest_mem_bitmap_bytes(m->r[i].size));
	__atomic_store_n(&m->tracking, on ? 1 : 0, __ATOMIC_SEQ_CST);
}

/* Free hugepages of this size the host has reserved (0 when none / unknown). */
static uint64_t hugepages_free(uint64_t page_size)
{
	char path[128];
	unsigned long long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%llukB/free_hugepages",
		 (unsigned long long)(page_size >> 10));
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &n) != 1)
		n = 0;
	fclose(f);
	return n;
}

static int check_hugepages(uint64_t mem_bytes, uint64_t page_size)
{
	uint64_t need, have;

	if (page_size != (2ull << 20) && page_size != (1ull << 30))
		return error_errno(-EINVAL, "memory: unsupported hugepage size %llu (2Mi or 1Gi)",
				   (unsigned long long)page_size);
	if (mem_bytes % page_size)
		return error_errno(
		    -EINVAL,
		    "memory: guest memory %llu is not a multiple of the hugepage size %llu",
		    (unsigned long long)mem_bytes, (unsigned long long)page_size);
	need = mem_bytes / page_size;
	have = hugepages_free(page_size);
	if (have < need)
		return error_errno(
		    -ENOMEM,
		    "memory: the guest needs %llu hugepages of %llu KiB but the host has %llu free "
		    "(reserve them in /sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages)",
		    (unsigned long long)need, (unsigned long long)(page_size >> 10),
		    (unsigned long long)have, (unsigned long long)(page_size >> 10));
	return 0;
}

/* Anonymous memory whose start is 2 MiB-aligned. KVM maps a guest page
 * with a 2 MiB (NPT/EPT) page only when the host address and the guest
 * address agree modulo 2 MiB and THP backs it; a 4 KiB-aligned start makes
 * every guest page a 4 KiB fault and mapping. Linux aligns large anonymous
 * mappings itself only from 6.7 and only for sizes that are multiples of
 * 2 MiB (Debian 12's 6.1, the nested L1, never: its L2 Linux booted 1.5 s
 * slower under vmlet than under QEMU, which aligns its RAM; issue 29 and
 * docs/performance.md). So: map 2 MiB more and unmap the ends. */
static void *map_thp_aligned(size_t size, int flags)
{
	const uintptr_t align = 2u << 20;
	size_t len = size + align;
	uint8_t *p, *q;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		return p;
	q = (uint8_t *)(((uintptr_t)p + align - 1) & ~(align - 1));
	if (q > p)
		munmap(p, (size_t)(q - p));
	if (p + len > q + size)
		munmap(q + size, (size_t)(p + len - (q + size)));
	return q;
}

static int map_region(struct guest_mem_region *r, uint64_t hugepage_size)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	void *p;

	if (hugepage_size) {
		flags |= MAP_HUGETLB;
		flags |= (__builtin_ctzll(hugepage_size) << MAP_HUGE_SHIFT);
	}
	if (hugepage_size) /* hugetlbfs mappings are aligned to their page */
		p = mmap(NULL, r->size, PROT_READ | PROT_WRITE, flags, -1, 0);
	else
		p = map_thp_aligned(r->size, flags);
	if (p == MAP_FAILED)
		return error_errno(-errno, "memory: cannot map %llu bytes of guest RAM%s",
				   (unsigned long long)r->size,
				   hugepage_size ? " with hugepages" : "");
	/* Best effort: THP may be disabled on the host; that is not an error. */
	if (!hugepage_size)
		madvise(p, r->size, MADV_HUGEPAGE);
	/* Guest RAM has no place in a core dump of vmlet. */
	madvise(p, r->size, MADV_DONTDUMP);
	r->host = p;
	return 0;
}

int guest_mem_init(struct guest_mem *m, uint64_t mem_bytes, uint64_t hugepage_size)
{
	return guest_mem_init_below(m, mem_bytes, hugepage_size, ARCH_MMIO_HOLE_START);
}

int guest_mem_init_below(struct guest_mem *m, uint64_t mem_bytes, uint64_t hugepage_size,
			 uint64_t low_max)
{
	struct arch_ram_region regs[2];
	size_t n = 0, i;
	int ret;

	memset(m, 0, sizeof(*m));
	if (!mem_bytes)
		return error_errno(-EINVAL, "memory: guest memory size is 0");
	if (hugepage_size) {
		ret = check_hugepages(mem_bytes, hugepage_size);
		if (ret)
			return ret;
	}
	ret = arch_ram_regions_below(mem_bytes, low_max, regs, &n);
	if (ret)
		return error_errno(ret, "memory: cannot lay out %llu bytes of guest RAM",
				   (unsigned long long)mem_bytes);
	if (n > GUEST_MEM_MAX_REGIONS)
		return error_errno(-E2BIG, "memory: too many RAM regions");
	for (i = 0; i < n; i++) {
		m->r[i].gpa = regs[i].gpa;
		m->r[i].size = regs[i].size;
		ret = map_region(&m->r[i], hugepage_size);
		m->dev_dirty[i] = calloc(1, guest_mem_bitmap_bytes(regs[i].size));
		if (!ret && !m->dev_dirty[i])
			ret = -ENOMEM;
		if (ret) {
			guest_mem_release(m);
			return ret;
		}
		m->n = i + 1;
		m->total += regs[i].size;
	}
	m->page_size = hugepage_size ? hugepage_size : 4096;
	return 0;
}

void guest_mem_release(struct guest_mem *m)
{
	unsigned int i;

	for (i = 0; i < GUEST_MEM_MAX_REGIONS; i++) {
		if (m->r[i].host)
			munmap(m->r[i].host, m->r[i].size);
		free(m->dev_dirty[i]);
	}
	memset(m, 0, sizeof(*m));
}
