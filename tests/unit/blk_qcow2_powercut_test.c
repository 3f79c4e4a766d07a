// SPDX-License-Identifier: MIT
/*
 * qcow2 writes cut by a host crash or power loss at every point. This
 * test interposes pwrite/pwritev/fdatasync/fsync and keeps a simulated
 * disk behind the page cache: what the last fdatasync() made durable
 * (writes to an O_DSYNC descriptor are durable as they return) and the
 * writes since, which the cache may have written back or not, in any
 * order and in part. Before every write and sync vmlet makes to the
 * image, and after every guest request, the power is cut several ways:
 * each unsynced write kept or dropped per 512-byte sector at random, per
 * write at random, all kept, none kept; a write that extends the file
 * may leave the new size with zeroes. Each such image must then
 *   - be consistent for an independent check (tests/lib/qcow2_check.h:
 *     leaks allowed; no pointer past the end of the file, no cluster
 *     referenced with refcount 0 or twice),
 *   - open, and read back every sector as what the guest had flushed
 *     (writethrough: had seen complete) or as one of the writes the
 *     guest issued to it since (never garbage, never older data),
 *   - every few points: take new writes after a reopen (new clusters
 *     allocated, flushed), stay consistent and keep every other sector
 *     as it read before (a cluster handed out twice would change one).
 * Cache modes writeback, none (O_DIRECT where the filesystem has it) and
 * writethrough; 512-byte clusters so that the workload allocates many L2
 * tables (more than the L2 cache holds: dirty tables are evicted) and
 * refcount blocks. Skips without qemu-img (it creates the image).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/lib/qcow2_check.h"
#include "tests/lib/test.h"
#include "vmm/disk/blk.h"

#define VSIZE  (1u << 20) /* guest disk */
#define NSEC   (VSIZE / 512)
#define MAXSEC 8  /* sectors per guest write */
#define TRIALS 4  /* power cuts per point */
#define REOPEN 11 /* every REOPEN-th point also takes writes after the cut */

static char dir[64], img[96], cut[96];
static ino_t img_ino;
static bool watching;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* The simulated disk: durable bytes, then the writes not yet synced. */
static struct {
	uint8_t *data;
	uint64_t size, cap;
} dur;
static struct pending {
	uint64_t off, len;
	uint8_t *data;
} * pend;
static unsigned int npend, cap_pend;

/* The guest's view: per sector, the tag it last flushed (0: zeroes), and
 * the (sector, tag) writes issued since its last flush. */
static uint32_t flushed[NSEC];
static struct {
	uint32_t sec, tag;
} * since;
static unsigned int nsince, cap_since;
static unsigned int points, images, reopened, leaky, bad_points;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void *grow(void *p, unsigned int *cap, unsigned int need, size_t elem)
{
	if (need <= *cap)
		return p;
	*cap = need * 2;
	p = realloc(p, *cap * elem);
	if (!p)
		abort();
	return p;
}

static void dur_apply(uint64_t off, const uint8_t *d, uint64_t len, uint64_t size_to)
{
	if (size_to > dur.cap) {
		dur.cap = size_to * 2;
		dur.data = realloc(dur.data, dur.cap);
		if (!dur.data)
			abort();
	}
	if (size_to > dur.size) {
		memset(dur.data + dur.size, 0, size_to - dur.size);
		dur.size = size_to;
	}
	memcpy(dur.data + off, d, len);
}

/* ---- the sector contents the guest writes --------------------------------- */

/* Word k of sector sec as write tag wrote it: word 0 names both. */
static uint64_t word(uint32_t tag, uint32_t sec, unsigned int k)
{
	return k ? (tag * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)sec << 20) ^ k
		 : (uint64_t)sec << 32 | tag;
}

static void fill(uint8_t *p, uint32_t sec, uint32_t tag)
{
	uint64_t w[64];

	for (unsigned int k = 0; k < 64; k++)
		w[k] = tag ? word(tag, sec, k) : 0;
	memcpy(p, w, 512);
}

/* The tag a sector holds: 0 for zeroes, ~0u for anything else. */
static uint32_t tag_of(const uint8_t *p, uint32_t sec)
{
	uint64_t w[64], any = 0;
	uint32_t tag;

	memcpy(w, p, 512);
	for (unsigned int k = 0; k < 64; k++)
		any |= w[k];
	if (!any)
		return 0;
	tag = (uint32_t)w[0];
	for (unsigned int k = 0; k < 64; k++)
		if (!tag || w[k] != word(tag, sec, k))
			return ~0u;
	return tag;
}

static bool acceptable(uint32_t sec, uint32_t tag)
{
	if (tag == flushed[sec])
		return true;
	for (unsigned int i = 0; i < nsince; i++)
		if (since[i].sec == sec && since[i].tag == tag)
			return true;
	return false;
}

/* The guest's FLUSH completed (writethrough: a write completed). */
static void guest_flushed(void)
{
	for (unsigned int i = 0; i < nsince; i++)
		flushed[since[i].sec] = since[i].tag;
	nsince = 0;
}

/* ---- power cuts ------------------------------------------------------------- */

/* The image a power cut now leaves, into the file cut. mode 0: each
 * unsynced write kept per 512-byte sector at random; 1: per write at
 * random; 2: all kept; 3: none. Modes 0 and 1 may also keep the size a
 * write gave the file without its data (zeroes). */
static int make_cut(unsigned int mode)
{
	uint64_t size = dur.size, max = dur.size;
	uint8_t *d;
	int fd, r = 0;

	for (unsigned int i = 0; i < npend; i++)
		if (pend[i].off + pend[i].len > max)
			max = pend[i].off + pend[i].len;
	d = calloc(1, max);
	if (!d)
		return -ENOMEM;
	memcpy(d, dur.data, dur.size);
	for (unsigned int i = 0; i < npend; i++) {
		const struct pending *w = &pend[i];
		uint64_t end = w->off + w->len;
		bool drop = mode == 3 || (mode == 1 && rnd() & 1);

		for (uint64_t s = w->off & ~511ull; !drop && s < end; s += 512) {
			uint64_t lo = s > w->off ? s : w->off, hi = s + 512 < end ? s + 512 : end;

			if (mode == 0 && rnd() & 1)
				continue;
			memcpy(d + lo, w->data + (lo - w->off), hi - lo);
			size = hi > size ? hi : size;
		}
		if (mode < 2 && rnd() % 4 == 0 && end > size)
			size = end;
	}
	fd = open(cut, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, d, size) != (ssize_t)size)
		r = -EIO;
	if (fd >= 0)
		close(fd);
	free(d);
	return r;
}

static int read_all(const char *path, uint8_t *buf)
{
	struct blk *b;
	int r = blk_open(&b, path, true, BLK_CACHE_WRITEBACK);

	if (r)
		return r;
	r = blk_preadv(b, &(struct iovec){buf, VSIZE}, 1, 0);
	blk_close(b);
	return r;
}

/* After the cut: new writes, flushed; the rest must stay as it read. */
static bool reopen_and_write(const uint8_t *before)
{
	uint32_t sec[6], tag = 0x7f000000u + reopened;
	uint8_t *after = malloc(VSIZE), data[512];
	struct blk *b;
	bool ok = after && blk_open(&b, cut, false, BLK_CACHE_WRITEBACK) == 0;

	reopened++;
	for (unsigned int i = 0; ok && i < 6; i++) {
		sec[i] = (uint32_t)(rnd() % NSEC);
		fill(data, sec[i], tag + i * 0x10000u);
		ok = blk_pwritev(b, &(struct iovec){data, 512}, 1, sec[i] * 512ull) == 0;
	}
	if (after && ok) {
		ok = blk_flush(b) == 0;
		blk_close(b);
	}
	if (ok && qcow2_check_file(cut) == 2)
		ok = false;
	if (ok)
		ok = read_all(cut, after) == 0;
	for (uint32_t s = 0; ok && s < NSEC; s++) {
		uint32_t want = ~0u;

		for (unsigned int i = 0; i < 6; i++)
			if (sec[i] == s)
				want = tag + i * 0x10000u;
		if (want != ~0u ? tag_of(after + s * 512ull, s) != want
				: memcmp(after + s * 512ull, before + s * 512ull, 512)) {
			printf("  after the cut, new writes changed sector %u\n", s);
			ok = false;
		}
	}
	free(after);
	return ok;
}

/* One cut image: consistent, readable, every sector acceptable. */
static bool check_cut(bool reopen)
{
	uint8_t *buf = malloc(VSIZE);
	int s = qcow2_check_file(cut);
	bool ok = buf && s != 2;

	leaky += s == 1;
	if (ok && read_all(cut, buf)) {
		printf("  the image does not read\n");
		ok = false;
	}
	for (uint32_t i = 0; ok && i < NSEC; i++) {
		uint32_t t = tag_of(buf + i * 512ull, i);

		if (!acceptable(i, t)) {
			printf("  sector %u holds %s %#x, flushed %#x\n", i,
			       t == ~0u ? "garbage" : "tag", t, flushed[i]);
			ok = false;
		}
	}
	if (ok && reopen)
		ok = reopen_and_write(buf);
	free(buf);
	return ok;
}

static void power_cut(void)
{
	bool bad = false;

	watching = false; /* the checks write files of their own */
	points++;
	for (unsigned int m = 0; m < TRIALS && !bad; m++) {
		images++;
		if (make_cut(m) || !check_cut(m == 0 && points % REOPEN == 0)) {
			printf("  power cut at point %u (%u unsynced writes, mode %u): bad image\n",
			       points, npend, m);
			bad = true;
		}
	}
	bad_points += bad;
	CHECK(!bad || bad_points > 3); /* the first few are reported */
	watching = true;
}

/* ---- the writes vmlet makes come here first ----------------------------------- */

static bool watched(int fd)
{
	struct stat st;

	return watching && !fstat(fd, &st) && st.st_ino == img_ino;
}

static void record(int fd, const struct iovec *iov, int n, uint64_t off, uint64_t done)
{
	uint8_t *d = malloc(done ? done : 1);
	uint64_t at = 0;

	if (!d)
		abort();
	for (int i = 0; i < n && at < done; i++) {
		uint64_t l = iov[i].iov_len < done - at ? iov[i].iov_len : done - at;

		memcpy(d + at, iov[i].iov_base, l);
		at += l;
	}
	if (fcntl(fd, F_GETFL) & O_DSYNC) {
		dur_apply(off, d, done, off + done > dur.size ? off + done : dur.size);
		free(d);
		return;
	}
	pend = grow(pend, &cap_pend, npend + 1, sizeof(*pend));
	pend[npend++] = (struct pending){off, done, d};
}

static void synced(void)
{
	for (unsigned int i = 0; i < npend; i++) {
		uint64_t end = pend[i].off + pend[i].len;

		dur_apply(pend[i].off, pend[i].data, pend[i].len, end > dur.size ? end : dur.size);
		free(pend[i].data);
	}
	npend = 0;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	bool w = watched(fd);
	ssize_t r;

	if (w)
		power_cut();
	r = syscall(SYS_pwrite64, fd, buf, len, off);
	if (w && r > 0)
		record(fd, &(struct iovec){(void *)(uintptr_t)buf, len}, 1, (uint64_t)off,
		       (uint64_t)r);
	return r;
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	bool w = watched(fd);
	ssize_t r;

	if (w)
		power_cut();
	r = syscall(SYS_pwritev, fd, iov, n, (unsigned long)off, 0ul);
	if (w && r > 0)
		record(fd, iov, n, (uint64_t)off, (uint64_t)r);
	return r;
}

static int sync_call(long nr, int fd)
{
	bool w = watched(fd);
	int r;

	if (w)
		power_cut();
	r = (int)syscall(nr, fd);
	if (w && !r)
		synced();
	return r;
}

int fdatasync(int fd)
{
	return sync_call(SYS_fdatasync, fd);
}

int fsync(int fd)
{
	return sync_call(SYS_fsync, fd);
}

/* ---- the workload ---------------------------------------------------------------- */

/* One guest write (or write-zeroes) of n sectors at sec, tag next. */
static int guest_write(struct blk *b, uint32_t sec, uint32_t n, uint32_t tag, bool zero)
{
	static uint8_t data[MAXSEC * 512];

	for (uint32_t j = 0; j < n; j++) {
		since = grow(since, &cap_since, nsince + 1, sizeof(*since));
		since[nsince].sec = sec + j;
		since[nsince++].tag = zero ? 0 : tag;
		fill(data + j * 512, sec + j, tag);
	}
	if (zero)
		return blk_write_zeroes(b, sec * 512ull, n * 512ull, false);
	return blk_pwritev(b, &(struct iovec){data, n * 512ull}, 1, sec * 512ull);
}

static void run_mode(enum blk_cache cache, unsigned int ops)
{
	unsigned int p0 = points, i0 = images, bad0 = bad_points;
	struct blk *b;
	struct stat st;
	uint32_t tag = 0;

	memset(flushed, 0, sizeof(flushed));
	nsince = npend = 0;
	dur.size = 0;
	CHECK(test_sh("rm -f %s && qemu-img create -q -f qcow2 -o cluster_size=512 %s %u", img, img,
		      VSIZE) == 0);
	CHECK(stat(img, &st) == 0);
	img_ino = st.st_ino;
	uint8_t *init = (uint8_t *)test_read_file(img, NULL);
	CHECK(init != NULL);
	dur_apply(0, init, (uint64_t)st.st_size, (uint64_t)st.st_size);
	free(init);
	CHECK(blk_open(&b, img, false, cache) == 0);
	watching = true;
	for (unsigned int i = 0; i < ops; i++) {
		uint64_t x = rnd() % 100;

		if (x < 10) {
			CHECK(blk_flush(b) == 0);
			guest_flushed();
		} else {
			uint32_t n = 1 + (uint32_t)(rnd() % MAXSEC);

			CHECK(guest_write(b, (uint32_t)(rnd() % (NSEC - n)), n, ++tag, x < 16) ==
			      0);
			if (cache == BLK_CACHE_WRITETHROUGH)
				guest_flushed();
		}
		power_cut();
	}
	blk_close(b); /* no FLUSH first: close writes the dirty L2 entries back */
	power_cut();
	watching = false;
	synced();
	CHECK(qcow2_check_file(img) == 0);
	CHECK(test_sh("qemu-img check -q %s", img) == 0);
	printf("  %s: %u power-cut points, %u images checked, %u bad\n",
	       cache == BLK_CACHE_WRITEBACK ? "writeback"
	       : cache == BLK_CACHE_NONE    ? "none"
					    : "writethrough",
	       points - p0, images - i0, bad_points - bad0);
}

static void test_power_cut_everywhere(void)
{
	snprintf(img, sizeof(img), "%s/p.qcow2", dir);
	snprintf(cut, sizeof(cut), "%s/cut.qcow2", dir);
	run_mode(BLK_CACHE_WRITEBACK, 160);
	run_mode(BLK_CACHE_NONE, 50);
	run_mode(BLK_CACHE_WRITETHROUGH, 50);
	printf("  %u points, %u images (%u with leaked clusters), %u reopened and written\n",
	       points, images, leaky, reopened);
	CHECK(bad_points == 0);
	CHECK(points > 1000);
	CHECK(reopened > 50);
}

int main(void)
{
	int r = qcow2_test_dir(dir, sizeof(dir), "qcut");

	if (r)
		return r;
	TEST_RUN(test_power_cut_everywhere);
	test_sh("rm -rf %s", dir);
	return test_summary();
}
