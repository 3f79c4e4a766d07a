// SPDX-License-Identifier: MIT
/* virtio-balloon through the PCI transport, with guest RAM mapped as vmlet
 * maps it (private anonymous): feature offers, statistics kept and handed
 * back each period, free page reports releasing exactly the reported
 * pages, bad reports and PFNs refused without harm, page poison, and the
 * reporting queue at the index either numbering gives it. */
#include <sys/mman.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/virtio/virtio_balloon.h"

#define RAM   (4ull << 20)
#define QS    16
#define PAGE  4096ull
#define DATA  0x80000ull /* scratch buffers (stats, PFN lists) */
#define VER1  (1ull << 32)
#define STATS (1ull << VIRTIO_BALLOON_F_STATS_VQ)
#define POIS  (1ull << VIRTIO_BALLOON_F_PAGE_POISON)
#define REP   (1ull << VIRTIO_BALLOON_F_REPORTING)

struct tq {
	gpa_t desc, avail, used;
	uint16_t avail_idx, next, last_used;
};

struct tb {
	struct guest_mem mem;
	uint8_t *ram;
	struct pci_host h;
	struct virtio_balloon *b;
	struct tvdev v;
	struct tq q[5];
};

/* Queue i's rings at 0x1000 + i * 0x4000. */
static void tq_setup(struct tb *t, unsigned int i)
{
	struct tq *q = &t->q[i];
	gpa_t base = 0x1000 + 0x4000ull * i;

	*q = (struct tq){base, base + 0x1000, base + 0x2000, 0, 0, 0};
	mmio_wr(t->v.common + 0x16, i, 2);
	mmio_wr(t->v.common + 0x18, QS, 2);
	mmio_wr(t->v.common + 0x1a, i + 1, 2);
	mmio_wr(t->v.common + 0x20, (uint32_t)q->desc, 4);
	mmio_wr(t->v.common + 0x24, 0, 4);
	mmio_wr(t->v.common + 0x28, (uint32_t)q->avail, 4);
	mmio_wr(t->v.common + 0x2c, 0, 4);
	mmio_wr(t->v.common + 0x30, (uint32_t)q->used, 4);
	mmio_wr(t->v.common + 0x34, 0, 4);
	mmio_wr(t->v.common + 0x1c, 1, 2);
}

/* Post a chain of n (addr, len) buffers, device-writable when wr; kick. */
static void tq_post(struct tb *t, unsigned int i, const uint64_t (*seg)[2], unsigned int n, int wr)
{
	struct tq *q = &t->q[i];
	uint16_t head = q->next % QS;

	for (unsigned int k = 0; k < n; k++) {
		uint16_t idx = q->next++ % QS;
		struct virtq_desc d = {
		    seg[k][0], (uint32_t)seg[k][1],
		    (uint16_t)((wr ? VRING_DESC_F_WRITE : 0) | (k + 1 < n ? VRING_DESC_F_NEXT : 0)),
		    (uint16_t)(q->next % QS)};

		memcpy(t->ram + q->desc + 16u * idx, &d, sizeof(d));
	}
	memcpy(t->ram + q->avail + 4 + 2u * (q->avail_idx % QS), &head, 2);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	q->avail_idx++;
	memcpy(t->ram + q->avail + 2, &q->avail_idx, 2);
	tvdev_kick(&t->v, (uint16_t)i);
}

/* Wait up to ms for queue i's next used entry. */
static int tq_used(struct tb *t, unsigned int i, int ms)
{
	struct tq *q = &t->q[i];
	uint16_t idx;

	for (int k = 0; k < ms; k++) {
		idx = __atomic_load_n((uint16_t *)(void *)(t->ram + q->used + 2), __ATOMIC_ACQUIRE);
		if (idx != q->last_used) {
			q->last_used++;
			return 1;
		}
		usleep(1000);
	}
	return 0;
}

static struct virtio_balloon_counters counters(struct tb *t)
{
	struct virtio_balloon_counters c;

	virtio_balloon_read(t->b, &c);
	return c;
}

/* Map RAM, create the device (reporting offered or not), negotiate want,
 * set up queues 0..nq-1 and start. */
static void tb_start(struct tb *t, bool reporting, uint64_t want, unsigned int nq)
{
	struct virtio_balloon_params p = {.reporting = reporting, .stats_period_ms = 500};

	memset(t, 0, sizeof(*t));
	tbus_n = 0;
	t->ram = mmap(NULL, RAM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(t->ram != MAP_FAILED);
	t->mem = (struct guest_mem){.n = 1, .total = RAM, .page_size = PAGE};
	t->mem.r[0] = (struct guest_mem_region){0, RAM, t->ram};
	CHECK(thost_init(&t->h, &t->mem) == 0);
	CHECK(virtio_balloon_create(&t->b, &t->h, &p) == 0);
	CHECK(tvdev_probe(&t->v, 1) == 0);
	tvdev_msix(&t->v, 6);
	tvdev_negotiate(&t->v, want, NULL);
	mmio_wr(t->v.common + 0x10, 0, 2);
	for (unsigned int i = 0; i < nq; i++)
		tq_setup(t, i);
	mmio_wr(t->v.common + 0x14, 0x0f, 1);
	CHECK_EQ_U64(mmio_rd(t->v.common + 0x14, 1), 0x0f);
}

static void tb_stop(struct tb *t)
{
	virtio_balloon_destroy(t->b);
	pci_host_release(&t->h);
	munmap(t->ram, RAM);
}

static bool all(const uint8_t *p, uint64_t n, uint8_t v)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static unsigned int resident(struct tb *t, gpa_t gpa, uint64_t len)
{
	unsigned char vec[64];
	unsigned int n = 0;

	CHECK(len / PAGE <= sizeof(vec));
	CHECK(mincore(t->ram + gpa, len, vec) == 0);
	for (uint64_t i = 0; i < len / PAGE; i++)
		n += vec[i] & 1;
	return n;
}

static void test_offer(void)
{
	struct tb t;
	uint64_t offered;

	tb_start(&t, true, VER1, 0);
	CHECK_EQ_U64(ecam_rd(1, 0, 4), 0x10451af4); /* virtio device id 5 */
	tvdev_negotiate(&t.v, 0, &offered);
	CHECK_EQ_U64(offered & 0xff, STATS | POIS | REP);
	CHECK(offered & VER1);
	CHECK_EQ_U64(mmio_rd(t.v.device + 0, 4), 0); /* num_pages: never inflate */
	mmio_wr(t.v.device + 4, 77, 4);		     /* actual is the driver's */
	mmio_wr(t.v.device + 0, 5, 4);		     /* num_pages is not */
	CHECK_EQ_U64(mmio_rd(t.v.device + 4, 4), 77);
	CHECK_EQ_U64(mmio_rd(t.v.device + 0, 4), 0);
	tb_stop(&t);

	/* a high-performance VM: no reporting offered */
	tb_start(&t, false, VER1, 0);
	tvdev_negotiate(&t.v, 0, &offered);
	CHECK_EQ_U64(offered & 0xff, STATS | POIS);
	tb_stop(&t);
}

static void put_stat(uint8_t *p, uint16_t tag, uint64_t val)
{
	memcpy(p, &tag, 2);
	memcpy(p + 2, &val, 8);
}

static void test_stats(void)
{
	const uint64_t seg[1][2] = {{DATA, 40}};
	struct virtio_balloon_counters c;
	struct tb t;
	uint8_t *s;

	tb_start(&t, true, VER1 | STATS | REP, 4);
	s = t.ram + DATA;
	put_stat(s, VIRTIO_BALLOON_S_MEMFREE, 300ull << 20);
	put_stat(s + 10, VIRTIO_BALLOON_S_MEMTOT, 1ull << 30);
	put_stat(s + 20, 99, 5); /* a tag from the future: skipped */
	put_stat(s + 30, VIRTIO_BALLOON_S_AVAIL, 500ull << 20);
	tq_post(&t, 2, seg, 1, 0);
	for (int i = 0; i < 1000 && counters(&t).stats_updates < 1; i++)
		usleep(1000);
	c = counters(&t);
	CHECK_EQ_U64(c.stats_updates, 1);
	CHECK_EQ_U64(c.stat[VIRTIO_BALLOON_S_MEMFREE], 300ull << 20);
	CHECK_EQ_U64(c.stat[VIRTIO_BALLOON_S_MEMTOT], 1ull << 30);
	CHECK_EQ_U64(c.stat[VIRTIO_BALLOON_S_AVAIL], 500ull << 20);
	CHECK_EQ_U64(c.stats_valid, 1ull << VIRTIO_BALLOON_S_MEMFREE |
					1ull << VIRTIO_BALLOON_S_MEMTOT |
					1ull << VIRTIO_BALLOON_S_AVAIL);
	/* the buffer is held, then handed back after the period (500 ms) */
	CHECK(!tq_used(&t, 2, 1));
	CHECK(tq_used(&t, 2, 5000));
	put_stat(s, VIRTIO_BALLOON_S_MEMFREE, 200ull << 20);
	tq_post(&t, 2, seg, 1, 0);
	for (int i = 0; i < 1000 && counters(&t).stats_updates < 2; i++)
		usleep(1000);
	CHECK_EQ_U64(counters(&t).stat[VIRTIO_BALLOON_S_MEMFREE], 200ull << 20);
	tb_stop(&t);
}

/* Fill [0x100000, 0x200000) with a pattern, report segs on queue qi. */
static void report(struct tb *t, unsigned int qi, const uint64_t (*seg)[2], unsigned int n)
{
	memset(t->ram + 0x100000, 0xa5, 0x100000);
	tq_post(t, qi, seg, n, 1);
	CHECK(tq_used(t, qi, 2000));
}

static void test_reporting(void)
{
	const uint64_t two[2][2] = {{0x100000, 0x10000}, {0x140000, 0x20000}};
	struct tb t;

	tb_start(&t, true, VER1 | STATS | POIS | REP, 5);
	report(&t, 3, two, 2); /* Linux's numbering: reporting after statsq */
	/* (mincore first: reading maps the zero page) */
	CHECK_EQ_U64(resident(&t, 0x140000, 0x20000), 0);
	CHECK_EQ_U64(resident(&t, 0x160000, 0x20000), 0x20);
	CHECK(all(t.ram + 0x100000, 0x10000, 0));
	CHECK(all(t.ram + 0x110000, 0x30000, 0xa5)); /* between: untouched */
	CHECK(all(t.ram + 0x140000, 0x20000, 0));
	CHECK(all(t.ram + 0x160000, 0xa0000, 0xa5));
	CHECK_EQ_U64(counters(&t).reported_bytes, 0x30000);
	CHECK_EQ_U64(counters(&t).reports, 1);
	/* the spec's numbering: reporting_vq is queue 4 */
	const uint64_t one[1][2] = {{0x180000, 0x8000}};
	report(&t, 4, one, 1);
	CHECK(all(t.ram + 0x180000, 0x8000, 0));
	CHECK(all(t.ram + 0x188000, 0x78000, 0xa5));
	CHECK_EQ_U64(counters(&t).reported_bytes, 0x38000);
	/* a guest that poisons its free pages keeps them */
	mmio_wr(t.v.device + 12, 0xaaaaaaaa, 4);
	CHECK_EQ_U64(mmio_rd(t.v.device + 12, 4), 0xaaaaaaaa);
	report(&t, 3, one, 1);
	CHECK(all(t.ram + 0x100000, 0x100000, 0xa5));
	CHECK_EQ_U64(counters(&t).reports, 3);
	CHECK_EQ_U64(counters(&t).reported_bytes, 0x38000);
	tb_stop(&t);

	/* without STATS_VQ the reporting queue is the third */
	tb_start(&t, true, VER1 | REP, 3);
	report(&t, 2, one, 1);
	CHECK(all(t.ram + 0x180000, 0x8000, 0));
	CHECK_EQ_U64(counters(&t).reported_bytes, 0x8000);
	tb_stop(&t);
}

static void test_bad_reports(void)
{
	const uint64_t unaligned[1][2] = {{0x100800, 0x1000}};
	const uint64_t partial[2][2] = {{0x100000, 0x1000}, {0x120000, 0x800}};
	const uint64_t outside[1][2] = {{RAM - 0x1000, 0x2000}};
	const uint64_t huge[1][2] = {{0x100000, 0xfffff000u}};
	const uint64_t ok[1][2] = {{0x1c0000, 0x1000}};
	struct tb t;

	tb_start(&t, true, VER1 | STATS | REP, 4);
	memset(t.ram + RAM - 0x1000, 0x5a, 0x1000);
	report(&t, 3, unaligned, 1);
	report(&t, 3, partial, 2);
	report(&t, 3, outside, 1);
	report(&t, 3, huge, 1);
	/* each was acknowledged, nothing released, all refused */
	CHECK(all(t.ram + 0x100000, 0x100000, 0xa5));
	CHECK(all(t.ram + RAM - 0x1000, 0x1000, 0x5a));
	CHECK_EQ_U64(counters(&t).reported_bytes, 0);
	CHECK_EQ_U64(counters(&t).refused, 4);
	/* and the device still works */
	CHECK(!(mmio_rd(t.v.common + 0x14, 1) & VIRTIO_CONFIG_S_NEEDS_RESET));
	report(&t, 3, ok, 1);
	CHECK(all(t.ram + 0x1c0000, 0x1000, 0));
	CHECK(all(t.ram + 0x1c1000, 0x3f000, 0xa5));
	tb_stop(&t);
}

static void test_inflate_deflate(void)
{
	const uint64_t seg[1][2] = {{DATA, 12}};
	uint32_t pfns[3] = {0x100, 0x102, 0xffffffffu}; /* the last is far outside RAM */
	struct tb t;

	tb_start(&t, true, VER1 | STATS | REP, 4);
	memset(t.ram + 0x100000, 0xa5, 0x3000);
	memcpy(t.ram + DATA, pfns, sizeof(pfns));
	tq_post(&t, 0, seg, 1, 0);
	CHECK(tq_used(&t, 0, 2000));
	CHECK(all(t.ram + 0x100000, 0x1000, 0));
	CHECK(all(t.ram + 0x101000, 0x1000, 0xa5));
	CHECK(all(t.ram + 0x102000, 0x1000, 0));
	CHECK_EQ_U64(counters(&t).inflated_pages, 2);
	CHECK_EQ_U64(counters(&t).refused, 1);
	tq_post(&t, 1, seg, 1, 0);
	CHECK(tq_used(&t, 1, 2000));
	CHECK_EQ_U64(counters(&t).deflated_pages, 2);
	tb_stop(&t);
}

/* A hostile driver's random reports and inflates (a fixed seed): segments
 * inside or past RAM, aligned or not, whole pages or not. The device
 * releases exactly the pages of the valid ones (a model of every page of
 * [1 MiB, RAM) says which must read zero), never breaks, never needs a
 * reset. (Below 1 MiB are the rings: a guest that reports those only
 * hurts itself, but the test needs them.) */
static void test_random(void)
{
	static bool zero[RAM / PAGE];
	const uint64_t lo = 0x100000;
	uint64_t seed = 1127, seg[3][2];
	struct tb t;

	tb_start(&t, true, VER1 | STATS | REP, 4);
	memset(t.ram + lo, 0xa5, RAM - lo);
	memset(zero, 0, sizeof(zero));
	for (int it = 0; it < 400; it++) {
		unsigned int n = 1 + (unsigned int)(seed % 3);
		bool valid = true;

		for (unsigned int k = 0; k < n; k++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t r = seed >> 11;
			uint64_t addr = lo + (r % (RAM + 0x40000 - lo));
			uint64_t len = PAGE * (1 + (r >> 24) % 16);

			if (r >> 40 & 1) /* most are aligned */
				addr &= ~(PAGE - 1);
			if ((r >> 41 & 7) == 0)
				len -= 512;
			seg[k][0] = addr, seg[k][1] = len;
			valid = valid && addr % PAGE == 0 && len % PAGE == 0 && addr + len <= RAM;
		}
		if (it % 4 == 3) { /* an inflate of PFNs instead */
			uint32_t *pfn = (uint32_t *)(void *)(t.ram + DATA);
			const uint64_t b[1][2] = {{DATA, 4 * n}};

			for (unsigned int k = 0; k < n; k++) {
				pfn[k] = (uint32_t)(seg[k][0] / PAGE);
				if ((uint64_t)pfn[k] * PAGE + PAGE <= RAM)
					zero[pfn[k]] = true;
			}
			tq_post(&t, 0, b, 1, 0);
			CHECK(tq_used(&t, 0, 2000));
			continue;
		}
		tq_post(&t, 3, (const uint64_t(*)[2])seg, n, 1);
		CHECK(tq_used(&t, 3, 2000));
		for (unsigned int k = 0; valid && k < n; k++)
			for (uint64_t a = seg[k][0]; a < seg[k][0] + seg[k][1]; a += PAGE)
				zero[a / PAGE] = true;
	}
	for (uint64_t pg = lo / PAGE; pg < RAM / PAGE; pg++)
		if (!all(t.ram + pg * PAGE, PAGE, zero[pg] ? 0 : 0xa5)) {
			CHECK(!"page content differs from the model");
			printf("  page %#llx: want %s\n", (unsigned long long)pg,
			       zero[pg] ? "zeros" : "the pattern");
			break;
		}
	CHECK(!(mmio_rd(t.v.common + 0x14, 1) & VIRTIO_CONFIG_S_NEEDS_RESET));
	CHECK(counters(&t).refused > 0 && counters(&t).reported_bytes > 0);
	tb_stop(&t);
}

int main(void)
{
	TEST_RUN(test_offer);
	TEST_RUN(test_stats);
	TEST_RUN(test_reporting);
	TEST_RUN(test_bad_reports);
	TEST_RUN(test_inflate_deflate);
	TEST_RUN(test_random);
	return test_summary();
}
