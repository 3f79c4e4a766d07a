// SPDX-License-Identifier: MIT
/* Split virtqueue parsing, completion and notification suppression, with
 * well-formed and hostile rings. */
#include <errno.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_driver.h"
#include "vmm/util/iov.h"

#define QS 16

struct pop_ctx {
	struct iovec out[8], in[8];
	struct virtq_elem e;
};

static void ctx_init(struct pop_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->e.out = c->out;
	c->e.in = c->in;
	c->e.cap_out = c->e.cap_in = 8;
}

static void test_init_checks(void)
{
	struct tdrv d;
	struct virtq q;

	tdrv_init(&d, 1 << 20, QS);
	CHECK(virtq_init(&q, &d.mem, 16, TDRV_DESC, TDRV_AVAIL, TDRV_USED, 0, 0) == 0);
	CHECK(virtq_init(&q, &d.mem, 0, TDRV_DESC, TDRV_AVAIL, TDRV_USED, 0, 0) == -EINVAL);
	CHECK(virtq_init(&q, &d.mem, 24, TDRV_DESC, TDRV_AVAIL, TDRV_USED, 0, 0) == -EINVAL);
	CHECK(virtq_init(&q, &d.mem, 2048, TDRV_DESC, TDRV_AVAIL, TDRV_USED, 0, 0) == -EINVAL);
	CHECK(virtq_init(&q, &d.mem, 16, TDRV_DESC + 8, TDRV_AVAIL, TDRV_USED, 0, 0) == -EINVAL);
	CHECK(virtq_init(&q, &d.mem, 16, TDRV_DESC, TDRV_AVAIL + 1, TDRV_USED, 0, 0) == -EINVAL);
	CHECK(virtq_init(&q, &d.mem, 16, TDRV_DESC, TDRV_AVAIL, TDRV_USED + 2, 0, 0) == -EINVAL);
	/* used ring running off the end of RAM */
	CHECK(virtq_init(&q, &d.mem, 16, TDRV_DESC, TDRV_AVAIL, (1 << 20) - 64, 0, 0) == -EINVAL);
	CHECK(virtq_init(&q, &d.mem, 16, ~0ull & ~15ull, TDRV_AVAIL, TDRV_USED, 0, 0) == -EINVAL);
	CHECK(virtq_pop(&q, NULL) == -EIO); /* failed init leaves q unusable */
	tdrv_release(&d);
}

static void test_direct_chain(void)
{
	struct tdrv d;
	struct virtq q;
	struct pop_ctx c;
	uint32_t id = 0, len = 0;

	tdrv_init(&d, 1 << 20, QS);
	CHECK(tdrv_virtq(&d, &q, 0) == 0);
	ctx_init(&c);
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_EMPTY);
	gpa_t a = tdrv_alloc(&d, 16), b = tdrv_alloc(&d, 100), s = tdrv_alloc(&d, 1);
	memcpy(tdrv_ptr(&d, a), "hello, device!!", 16);
	struct tbuf bufs[] = {{a, 16, 0}, {b, 100, 1}, {s, 1, 1}};
	uint16_t head = tdrv_post(&d, bufs, 3, 0);
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_OK);
	CHECK_EQ_U64(c.e.head, head);
	CHECK_EQ_U64(c.e.n_out, 1);
	CHECK_EQ_U64(c.e.n_in, 2);
	CHECK_EQ_U64(c.e.out_bytes, 16);
	CHECK_EQ_U64(c.e.in_bytes, 101);
	CHECK(c.e.out[0].iov_base == tdrv_ptr(&d, a));
	CHECK(c.e.in[1].iov_base == tdrv_ptr(&d, s));
	char tmp[16];
	CHECK_EQ_U64(iov_to_buf(c.e.out, c.e.n_out, 7, tmp, 16), 9);
	CHECK(!memcmp(tmp, "device!!", 9));
	CHECK_EQ_U64(iov_from_buf(c.e.in, c.e.n_in, 98, "xyz", 3), 3);
	CHECK(!memcmp(tdrv_ptr(&d, b + 98), "xy", 2));
	CHECK(*(char *)tdrv_ptr(&d, s) == 'z');
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_EMPTY);
	CHECK(tdrv_used(&d, &id, &len) == 0);
	CHECK(virtq_push(&q, c.e.head, 101) == 0);
	CHECK(tdrv_used(&d, &id, &len) == 1);
	CHECK_EQ_U64(id, head);
	CHECK_EQ_U64(len, 101);
	tdrv_release(&d);
}

static void test_indirect_chain(void)
{
	struct tdrv d;
	struct virtq q;
	struct pop_ctx c;

	tdrv_init(&d, 1 << 20, QS);
	CHECK(tdrv_virtq(&d, &q, 0) == 0);
	ctx_init(&c);
	struct tbuf bufs[] = {{tdrv_alloc(&d, 16), 16, 0},
			      {tdrv_alloc(&d, 512), 512, 1},
			      {tdrv_alloc(&d, 512), 512, 1},
			      {tdrv_alloc(&d, 1), 1, 1}};
	uint16_t head = tdrv_post(&d, bufs, 4, 1);
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_OK);
	CHECK_EQ_U64(c.e.head, head);
	CHECK_EQ_U64(c.e.n_out, 1);
	CHECK_EQ_U64(c.e.n_in, 3);
	CHECK_EQ_U64(c.e.in_bytes, 1025);
	/* without the feature, an indirect descriptor breaks the ring */
	CHECK(virtq_init(&q, &d.mem, QS, TDRV_DESC, TDRV_AVAIL, TDRV_USED, 0, false) == 0);
	CHECK(virtq_pop(&q, &c.e) == -EIO);
	CHECK(q.broken);
	tdrv_release(&d);
}

/* A bad request: the head comes back to the device, the ring survives. */
static void test_bad_requests(void)
{
	struct tdrv d;
	struct virtq q;
	struct pop_ctx c;

	tdrv_init(&d, 1 << 20, QS);
	CHECK(tdrv_virtq(&d, &q, 0) == 0);
	ctx_init(&c);
	struct tbuf outside[] = {{0x10000, 16, 0}, {(1 << 20) - 8, 16, 1}};
	uint16_t h1 = tdrv_post(&d, outside, 2, 0);
	struct tbuf wrap[] = {{~0ull - 4, 16, 1}};
	uint16_t h2 = tdrv_post(&d, wrap, 1, 0);
	struct tbuf huge[] = {{0, 0xffffffffu, 1}};
	uint16_t h3 = tdrv_post(&d, huge, 1, 0);
	struct tbuf many[9];
	for (int i = 0; i < 9; i++)
		many[i] = (struct tbuf){0x10000, 8, 0};
	uint16_t h4 = tdrv_post(&d, many, 9, 1); /* 9 > cap_out */
	struct tbuf good[] = {{0x10000, 16, 0}};
	uint16_t h5 = tdrv_post(&d, good, 1, 0);

	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_BAD);
	CHECK_EQ_U64(c.e.head, h1);
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_BAD);
	CHECK_EQ_U64(c.e.head, h2);
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_BAD);
	CHECK_EQ_U64(c.e.head, h3);
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_BAD);
	CHECK_EQ_U64(c.e.head, h4);
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_OK);
	CHECK_EQ_U64(c.e.head, h5);
	CHECK(!q.broken);
	tdrv_release(&d);
}

/* Post one hand-made descriptor table entry set and expect -EIO. */
static void expect_broken(struct tdrv *d, const char *what)
{
	struct virtq q;
	struct pop_ctx c;
	int r;

	ctx_init(&c);
	CHECK(tdrv_virtq(d, &q, 0) == 0);
	r = virtq_pop(&q, &c.e);
	if (r != -EIO || !q.broken)
		test_fail(__FILE__, __LINE__, "%s: pop returned %d", what, r);
	CHECK(virtq_pop(&q, &c.e) == -EIO); /* sticky */
	CHECK(virtq_push(&q, 0, 0) == -EIO);
	CHECK(!virtq_enable_notify(&q));
	virtq_reset(&q);
	CHECK(!q.broken);
	tdrv_release(d);
}

static void test_broken_rings(void)
{
	struct tdrv d;

	tdrv_init(&d, 1 << 20, QS);
	/* a two-descriptor loop */
	*tdrv_desc(&d, 0) = (struct virtq_desc){0x10000, 8, VRING_DESC_F_NEXT, 1};
	*tdrv_desc(&d, 1) = (struct virtq_desc){0x10000, 8, VRING_DESC_F_NEXT, 0};
	tdrv_publish(&d, 0);
	expect_broken(&d, "loop");

	/* self loop with zero-length descriptors */
	tdrv_init(&d, 1 << 20, QS);
	*tdrv_desc(&d, 3) = (struct virtq_desc){0, 0, VRING_DESC_F_NEXT, 3};
	tdrv_publish(&d, 3);
	expect_broken(&d, "self loop");

	tdrv_init(&d, 1 << 20, QS);
	*tdrv_desc(&d, 0) = (struct virtq_desc){0x10000, 8, VRING_DESC_F_NEXT, QS};
	tdrv_publish(&d, 0);
	expect_broken(&d, "next out of range");

	tdrv_init(&d, 1 << 20, QS);
	tdrv_publish(&d, QS + 3);
	expect_broken(&d, "head out of range");

	tdrv_init(&d, 1 << 20, QS);
	*tdrv_avail16(&d, 1) = QS + 1;
	expect_broken(&d, "avail idx too far ahead");

	tdrv_init(&d, 1 << 20, QS);
	*tdrv_desc(&d, 0) =
	    (struct virtq_desc){0x10000, 8, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1};
	*tdrv_desc(&d, 1) = (struct virtq_desc){0x10000, 8, 0, 0};
	tdrv_publish(&d, 0);
	expect_broken(&d, "readable after writable");

	/* indirect: NEXT set too, bad length, outside RAM, nested, loop */
	static const struct {
		uint64_t addr;
		uint32_t len;
		uint16_t flags;
	} ind[] = {
	    {TDRV_INDIRECT, 32, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT},
	    {TDRV_INDIRECT, 24, VRING_DESC_F_INDIRECT},
	    {TDRV_INDIRECT, 0, VRING_DESC_F_INDIRECT},
	    {TDRV_INDIRECT, 16u * 4096, VRING_DESC_F_INDIRECT},
	    {(1 << 20) - 16, 32, VRING_DESC_F_INDIRECT},
	};
	for (unsigned int i = 0; i < sizeof(ind) / sizeof(ind[0]); i++) {
		tdrv_init(&d, 1 << 20, QS);
		*tdrv_desc(&d, 0) = (struct virtq_desc){ind[i].addr, ind[i].len, ind[i].flags, 1};
		tdrv_publish(&d, 0);
		expect_broken(&d, "bad indirect");
	}
	tdrv_init(&d, 1 << 20, QS);
	struct virtq_desc *t = tdrv_ptr(&d, TDRV_INDIRECT);
	t[0] = (struct virtq_desc){TDRV_INDIRECT, 32, VRING_DESC_F_INDIRECT, 0};
	*tdrv_desc(&d, 0) = (struct virtq_desc){TDRV_INDIRECT, 32, VRING_DESC_F_INDIRECT, 0};
	tdrv_publish(&d, 0);
	expect_broken(&d, "nested indirect");

	tdrv_init(&d, 1 << 20, QS);
	t = tdrv_ptr(&d, TDRV_INDIRECT);
	t[0] = (struct virtq_desc){0x10000, 8, VRING_DESC_F_NEXT, 1};
	t[1] = (struct virtq_desc){0x10000, 8, VRING_DESC_F_NEXT, 0};
	*tdrv_desc(&d, 0) = (struct virtq_desc){TDRV_INDIRECT, 32, VRING_DESC_F_INDIRECT, 0};
	tdrv_publish(&d, 0);
	expect_broken(&d, "indirect loop");

	tdrv_init(&d, 1 << 20, QS);
	t = tdrv_ptr(&d, TDRV_INDIRECT);
	t[0] = (struct virtq_desc){0x10000, 8, VRING_DESC_F_NEXT, 2};
	*tdrv_desc(&d, 0) = (struct virtq_desc){TDRV_INDIRECT, 32, VRING_DESC_F_INDIRECT, 0};
	tdrv_publish(&d, 0);
	expect_broken(&d, "indirect next beyond table");
}

/* A full ring of QS-long chains wraps the 16-bit indices correctly. */
static void test_wraparound(void)
{
	struct tdrv d;
	struct virtq q;
	struct pop_ctx c;
	uint32_t id = 0, len = 0;
	unsigned int n = 0;

	tdrv_init(&d, 1 << 20, QS);
	CHECK(tdrv_virtq(&d, &q, 0) == 0);
	ctx_init(&c);
	for (unsigned int round = 0; round < 70000; round++) {
		struct tbuf b[] = {{0x10000 + round % 64, 4, 0}, {0x20000, 1, 1}};
		uint16_t head = tdrv_post(&d, b, 2, (int)(round & 1));

		if (virtq_pop(&q, &c.e) != VIRTQ_POP_OK || c.e.head != head)
			break;
		virtq_push(&q, c.e.head, 1);
		if (tdrv_used(&d, &id, &len) != 1 || id != head || len != 1)
			break;
		n++;
	}
	CHECK_EQ_U64(n, 70000);
	CHECK(!q.broken);
	tdrv_release(&d);
}

/* Filled elements stay invisible until one flush publishes them together,
 * also across the ring's wrap; out-of-range requests are refused. */
static void test_fill_flush(void)
{
	struct tdrv d;
	struct virtq q;
	struct pop_ctx c;
	struct tbuf b[] = {{0x10000, 8, 1}};
	uint16_t heads[QS];
	uint32_t id = 0, len = 0;
	unsigned int i, round;

	tdrv_init(&d, 1 << 20, QS);
	CHECK(tdrv_virtq(&d, &q, 0) == 0);
	ctx_init(&c);
	for (round = 0; round < 5; round++) { /* 5 x 5 elements: wraps 16 */
		for (i = 0; i < 5; i++) {
			tdrv_post(&d, b, 1, 0);
			CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_OK);
			heads[i] = c.e.head;
			CHECK(virtq_fill(&q, i, heads[i], 100 + i) == 0);
		}
		CHECK(tdrv_used(&d, &id, &len) == 0); /* nothing published yet */
		CHECK(virtq_flush(&q, 5) == 0);
		for (i = 0; i < 5; i++) {
			CHECK(tdrv_used(&d, &id, &len) == 1);
			CHECK_EQ_U64(id, heads[i]);
			CHECK_EQ_U64(len, 100 + i);
		}
		CHECK(tdrv_used(&d, &id, &len) == 0);
	}
	CHECK(virtq_fill(&q, QS, 0, 0) == -EIO);
	CHECK(virtq_flush(&q, QS + 1) == -EIO);
	CHECK(!q.broken);
	tdrv_release(&d);
}

static void test_notify_suppression(void)
{
	struct tdrv d;
	struct virtq q;
	struct pop_ctx c;
	struct tbuf b[] = {{0x10000, 4, 1}};
	uint16_t *used_event, *avail_event;

	CHECK(virtq_need_event(0, 1, 0));
	CHECK(!virtq_need_event(1, 1, 0));
	CHECK(virtq_need_event(5, 7, 4));
	CHECK(!virtq_need_event(7, 7, 4));
	CHECK(virtq_need_event(0xffff, 0, 0xfffe)); /* wraps */

	/* flags mode */
	tdrv_init(&d, 1 << 20, QS);
	CHECK(tdrv_virtq(&d, &q, 0) == 0);
	ctx_init(&c);
	tdrv_post(&d, b, 1, 0);
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_OK);
	virtq_push(&q, c.e.head, 4);
	CHECK(virtq_should_notify(&q));
	*tdrv_avail16(&d, 0) = VRING_AVAIL_F_NO_INTERRUPT;
	CHECK(!virtq_should_notify(&q));
	virtq_disable_notify(&q);
	CHECK_EQ_U64(*(uint16_t *)tdrv_ptr(&d, TDRV_USED), VRING_USED_F_NO_NOTIFY);
	CHECK(!virtq_enable_notify(&q));
	CHECK_EQ_U64(*(uint16_t *)tdrv_ptr(&d, TDRV_USED), 0);
	tdrv_post(&d, b, 1, 0);
	CHECK(virtq_enable_notify(&q)); /* raced: work is pending */
	tdrv_release(&d);

	/* event idx mode */
	tdrv_init(&d, 1 << 20, QS);
	CHECK(tdrv_virtq(&d, &q, 1) == 0);
	used_event = tdrv_avail16(&d, 2 + QS);
	avail_event = tdrv_ptr(&d, TDRV_USED + 4 + 8 * QS);
	for (int i = 0; i < 3; i++)
		tdrv_post(&d, b, 1, 0);
	*used_event = 1; /* interrupt me when used idx passes 1 */
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_OK);
	virtq_push(&q, c.e.head, 4);
	CHECK(virtq_should_notify(&q)); /* first decision always signals */
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_OK);
	virtq_push(&q, c.e.head, 4); /* used idx 1 -> 2: crosses event 1 */
	CHECK(virtq_should_notify(&q));
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_OK);
	virtq_push(&q, c.e.head, 4); /* 2 -> 3: event 1 already passed */
	CHECK(!virtq_should_notify(&q));
	*used_event = 5;
	CHECK(!virtq_enable_notify(&q));
	CHECK_EQ_U64(*avail_event, 3);
	tdrv_post(&d, b, 1, 0);
	CHECK(virtq_enable_notify(&q));
	tdrv_release(&d);
}

/* Live migration's marks (guest_mem.h): while tracking, a pop marks the
 * chain's buffers (translated then) and a push marks the used ring, which
 * was translated once at virtq_init(), before tracking began. */
static void test_migration_marks(void)
{
	struct tdrv d;
	struct virtq q;
	struct pop_ctx c;
	uint64_t map[(1 << 20) / 4096 / 64] = {0};

	tdrv_init(&d, 1 << 20, QS);
	d.mem.dev_dirty[0] = map;
	CHECK(tdrv_virtq(&d, &q, 0) == 0);
	guest_mem_track(&d.mem, true);
	ctx_init(&c);
	gpa_t b = tdrv_alloc(&d, 4096 * 2);
	struct tbuf bufs[] = {{b, 4096 * 2, 1}};
	uint16_t head = tdrv_post(&d, bufs, 1, 0);
	CHECK(virtq_pop(&q, &c.e) == VIRTQ_POP_OK);
	CHECK(map[(b / 4096) / 64] & (1ull << ((b / 4096) % 64)));
	CHECK(map[(b / 4096 + 1) / 64] & (1ull << ((b / 4096 + 1) % 64)));
	CHECK(!(map[0] & (1ull << (TDRV_USED / 4096)))); /* not written yet */
	CHECK(virtq_push(&q, head, 10) == 0);
	CHECK(map[0] & (1ull << (TDRV_USED / 4096)));
	guest_mem_track(&d.mem, false);
	d.mem.dev_dirty[0] = NULL;
	tdrv_release(&d);
}

int main(void)
{
	TEST_RUN(test_init_checks);
	TEST_RUN(test_direct_chain);
	TEST_RUN(test_indirect_chain);
	TEST_RUN(test_bad_requests);
	TEST_RUN(test_broken_rings);
	TEST_RUN(test_wraparound);
	TEST_RUN(test_fill_flush);
	TEST_RUN(test_notify_suppression);
	TEST_RUN(test_migration_marks);
	return test_summary();
}
