// SPDX-License-Identifier: MIT
/*
 * dirty.c - vmlet.dirty=T,H: a memory workload with a check, for
 * scripts/bench-migrate (probe.h). Runs at CPL3 on the identity map.
 */
#include "firmware/lib/cpu.h"
#include "firmware/lib/pvh.h"
#include "firmware/probe/probe.h"

#define PAGE	      4096ull
#define MIB	      (1ull << 20)
#define COLD	      16 /* a pass checks every COLD-th cold page, a rotating share */
#define WORD(base, i) ((volatile uint64_t *)(uintptr_t)((base) + (i)*PAGE))

static char line[96];
static struct fw_buf out;

/* Start a line; send() writes it on the console. */
static struct fw_buf *next_line(void)
{
	fw_buf_init(&out, line, sizeof(line));
	return &out;
}

static void send(void)
{
	fw_kcall(PROBE_KC_WRITE, (uintptr_t)line, out.len, 0);
}

/* Decimal MiB at *s (at most 4096); *s moves past the digits. */
static uint64_t mib_at(const char **s)
{
	uint64_t v = 0;

	for (; **s >= '0' && **s <= '9' && v <= 4096; (*s)++)
		v = v * 10 + (uint64_t)(**s - '0');
	return v;
}

/* Whether [PROBE_DIRTY_BASE, +bytes) is inside one RAM entry of the PVH
 * memory map (and below the 4 GiB identity map). */
static bool range_is_ram(uint32_t si_addr, uint64_t bytes)
{
	const struct hvm_start_info *si = (const struct hvm_start_info *)(uintptr_t)si_addr;
	const struct hvm_memmap_entry *mm;
	uint64_t end = PROBE_DIRTY_BASE + bytes;

	if (!si_addr || si->magic != HVM_START_MAGIC || si->version < 1 || !si->memmap_paddr ||
	    !si->memmap_entries || si->memmap_entries > HVM_MEMMAP_MAX ||
	    si->memmap_paddr >= (1ull << 32) - HVM_MEMMAP_MAX * sizeof(*mm) || end > (1ull << 32))
		return false;
	mm = (const struct hvm_memmap_entry *)(uintptr_t)si->memmap_paddr;
	for (uint32_t i = 0; i < si->memmap_entries; i++)
		if (mm[i].type == HVM_MEMMAP_RAM && mm[i].addr <= PROBE_DIRTY_BASE &&
		    mm[i].size >= end - mm[i].addr)
			return true;
	return false;
}

/* One pass: the hot pages hold round - 1 and get round, every COLD-th
 * cold page (a rotating share) still holds what the touch wrote. Returns
 * the first page that disagrees, or -1. */
static int64_t pass(uint64_t round, uint64_t hot, uint64_t all)
{
	const uint64_t b = PROBE_DIRTY_BASE;

	for (uint64_t i = 0; i < hot; i++) {
		if (*WORD(b, i) != ((round - 1) << 32 | i))
			return (int64_t)i;
		*WORD(b, i) = round << 32 | i;
	}
	for (uint64_t i = hot + round % COLD; i < all; i += COLD)
		if (*WORD(b, i) != i)
			return (int64_t)i;
	return -1;
}

void probe_dirty(uint32_t si_addr, const char *arg)
{
	const char *p = arg;
	uint64_t touch = mib_at(&p), hot = 0;
	int64_t bad;

	if (*p == ',') {
		p++;
		hot = mib_at(&p);
	}
	if (!touch || touch > 4096 || hot > touch || *p || !range_is_ram(si_addr, touch * MIB)) {
		fw_buf_printf(next_line(),
			      "dirty=error %llu MiB from %llu MiB not RAM, or hot > all\n",
			      (unsigned long long)touch, PROBE_DIRTY_BASE / MIB);
		send();
		return;
	}
	touch = touch * MIB / PAGE;
	hot = hot * MIB / PAGE;
	for (uint64_t i = 0; i < touch; i++)
		*WORD(PROBE_DIRTY_BASE, i) = i; /* round 0 */
	fw_buf_printf(next_line(), "dirtyReady=%llu %llu\n", (unsigned long long)touch,
		      (unsigned long long)hot);
	send();
	if (!hot)
		return;
	for (uint64_t round = 1;; round++) {
		bad = pass(round, hot, touch);
		if (bad >= 0) {
			fw_buf_printf(next_line(), "dirty=BAD page %lld round %llu\n",
				      (long long)bad, (unsigned long long)round);
			send();
			probe_end(PROBE_END_HOLD);
		}
		fw_buf_printf(next_line(), "dirty=%llu\n", (unsigned long long)round);
		send();
	}
}
