// SPDX-License-Identifier: MIT
/* A started virtio device through a snapshot (vmm/virtio/virtio_pci_snap.c,
 * vmm/dev/pci_snap.c): virtio-rng serves two requests, is frozen and
 * saved, destroyed, created anew and loaded; the driver's next request is
 * served at once, as the only new used entry (the device goes on from the
 * saved ring indices, nothing is served twice), on the MSI-X vector the
 * driver programmed. Saved state that does not fit the function (an MSI-X
 * vector it does not have, features it did not offer, a read-only config
 * byte changed) is refused. */
#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/virtio/virtio_rng.h"

struct rig {
	struct pci_host h;
	struct virtio_rng *rng;
};

static struct virtio_pci *rig_vp(struct rig *r)
{
	return virtio_pci_of(r->h.dev[1]);
}

static int rig_make(struct rig *r, struct tdrv *d)
{
	tbus_n = 0;
	if (thost_init(&r->h, &d->mem))
		return -1;
	return virtio_rng_create(&r->rng, &r->h, 0, 0);
}

static void rig_free(struct rig *r)
{
	virtio_rng_destroy(r->rng);
	pci_host_release(&r->h);
}

static int rig_load(struct rig *r, const struct snap_buf *b)
{
	struct snap_cur c = snap_cur_make(b->p, b->len);
	int ret = pci_dev_load(&r->h, r->h.dev[1], &c);

	if (!ret)
		ret = virtio_pci_load(rig_vp(r), &c);
	if (!ret && c.left)
		ret = -EBADMSG;
	if (!ret)
		pci_dev_resync(&r->h, r->h.dev[1]);
	if (!ret)
		ret = virtio_pci_start(rig_vp(r));
	return ret;
}

static void request(struct tdrv *d, struct tvdev *v, uint32_t len)
{
	struct tbuf b = {tdrv_alloc(d, len), len, 1};

	tdrv_post(d, &b, 1, 0);
	tvdev_kick(v, 0);
}

static void test_started_rng(void)
{
	struct snap_buf b = {0};
	struct tdrv d;
	struct tvdev v;
	struct rig a, n;
	uint32_t id = 0, len = 0;
	uint16_t *used_idx;
	int irqs;

	tdrv_init(&d, 1 << 20, 16);
	CHECK(rig_make(&a, &d) == 0);
	CHECK(tvdev_probe(&v, 1) == 0);
	tvdev_msix(&v, 2);
	CHECK_EQ_U64(tvdev_start(&v, &d, 1ull << 32, NULL), 0x0f);
	for (int i = 0; i < 2; i++) {
		request(&d, &v, 64);
		CHECK(tvdev_wait_used(&d, &id, &len, 2000));
		CHECK_EQ_U64(id, (uint64_t)i);
	}
	CHECK_EQ_U64(virtio_pci_freeze(rig_vp(&a)), 0);
	pci_dev_save(a.h.dev[1], &b);
	CHECK_EQ_U64(virtio_pci_save(rig_vp(&a), &b), 0);
	/* a request while frozen waits; thawed (--resume), it is served */
	request(&d, &v, 32); /* head 2 */
	CHECK(!tvdev_wait_used(&d, &id, &len, 100));
	virtio_pci_thaw(rig_vp(&a));
	CHECK(tvdev_wait_used(&d, &id, &len, 2000));
	CHECK_EQ_U64(id, 2);
	/* the saved device knew nothing of it: forget it on the driver's side
	 * too, as the restored guest's memory would not have it either */
	d.avail_idx--;
	d.last_used--;
	*(uint16_t *)tdrv_ptr(&d, TDRV_AVAIL + 2) = d.avail_idx;
	*(uint16_t *)tdrv_ptr(&d, TDRV_USED + 2) = 2;
	d.next_desc--;
	rig_free(&a);

	CHECK(rig_make(&n, &d) == 0);
	CHECK_EQ_U64(rig_load(&n, &b), 0);
	CHECK_EQ_U64(mmio_rd(v.common + 0x14, 1), 0x0f); /* still started */
	irqs = tirq_signals;
	request(&d, &v, 64); /* head 2 */
	CHECK(tvdev_wait_used(&d, &id, &len, 2000));
	CHECK_EQ_U64(id, 2);
	CHECK_EQ_U64(len, 64);
	used_idx = tdrv_ptr(&d, TDRV_USED + 2);
	CHECK_EQ_U64(*used_idx, 3); /* the two old ones were not served again */
	CHECK(tirq_wait(0x41, 2000) >= 1 || tirq_signals > irqs);
	rig_free(&n);
	snap_buf_release(&b);
	tdrv_release(&d);
}

/* Change one byte of a saved blob at off, expect the load refused. */
static void refuse_at(struct tdrv *d, const struct snap_buf *b, size_t off, uint8_t x)
{
	struct snap_buf bad = {0};
	struct rig r;

	snap_buf_put(&bad, b->p, b->len);
	bad.p[off] ^= x;
	CHECK(rig_make(&r, d) == 0);
	CHECK(rig_load(&r, &bad) != 0);
	CHECK_EQ_U64(mmio_rd(0, 1), mmio_rd(0, 1)); /* no crash, nothing mapped half */
	rig_free(&r);
	snap_buf_release(&bad);
}

static void test_refused(void)
{
	struct snap_buf b = {0};
	struct tdrv d;
	struct tvdev v;
	struct rig a;
	size_t cfg = 8, regs;

	tdrv_init(&d, 1 << 20, 16);
	CHECK(rig_make(&a, &d) == 0);
	CHECK(tvdev_probe(&v, 1) == 0);
	tvdev_msix(&v, 2);
	CHECK_EQ_U64(tvdev_start(&v, &d, 1ull << 32, NULL), 0x0f);
	CHECK_EQ_U64(virtio_pci_freeze(rig_vp(&a)), 0);
	pci_dev_save(a.h.dev[1], &b);
	regs = b.len + 8; /* the transport's first item: its u64 registers */
	CHECK_EQ_U64(virtio_pci_save(rig_vp(&a), &b), 0);
	rig_free(&a);
	refuse_at(&d, &b, cfg + 0, 0x01);	   /* vendor ID: read-only */
	refuse_at(&d, &b, cfg + 0x0e, 0x80);	   /* header type */
	refuse_at(&d, &b, regs + 4 * 8, 0x0f);	   /* config vector 0 -> 15 */
	refuse_at(&d, &b, regs + 7 * 8 + 5, 0x01); /* a feature never offered */
	refuse_at(&d, &b, regs + 8 * 8, 0x01);	   /* queue count */
	snap_buf_release(&b);
	tdrv_release(&d);
}

int main(void)
{
	TEST_RUN(test_started_rng);
	TEST_RUN(test_refused);
	return test_summary();
}
