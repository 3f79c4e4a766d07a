// SPDX-License-Identifier: MIT
/* virtio-vsock (virtio_vsock_env.h) in a snapshot
 * (vmm/virtio/virtio_vsock_snap.c): a snapshot with --resume keeps a
 * connection, a restore sends TRANSPORT_RESET on the event queue and takes
 * new host connections, and refuses a snapshot of another CID. */
#include "tests/unit/virtio_vsock_env.h"
#include "vmm/snapshot/snap_buf.h"

#define EVB 0x800000ull /* event buffers: 16 bytes each, by descriptor */

/* A host client's connection to guest port 80, accepted by the guest:
 * the client's fd, the host port in *hp. */
static int host_connect(struct tc *t, uint32_t *hp)
{
	struct virtio_vsock_hdr h;
	char want[32], got[32] = {0};
	int fd = connect_to(t->path, 0);

	CHECK_EQ_U64(write(fd, "CONNECT 80\n", 11), 11);
	CHECK(recv_pkt(t, &h, NULL, 0, 2000));
	CHECK(h.op == VIRTIO_VSOCK_OP_REQUEST && h.dst_port == 80);
	*hp = h.src_port;
	send_pkt(t, hdr(80, *hp, VIRTIO_VSOCK_OP_RESPONSE), NULL, 0, 0);
	snprintf(want, sizeof(want), "OK %u\n", *hp);
	CHECK_EQ_U64(read_n(fd, got, strlen(want)), strlen(want));
	CHECK_STR(got, want);
	return fd;
}

static void snap_save(struct tc *t, struct snap_buf *s)
{
	struct virtio_pci *vp = virtio_vsock_pci(t->v);

	memset(s, 0, sizeof(*s));
	CHECK_EQ_U64(virtio_pci_freeze(vp), 0);
	pci_dev_save(&vp->pci, s);
	CHECK_EQ_U64(virtio_pci_save(vp, s), 0);
}

/* A snapshot with --resume (twice in a row, as a migration's source
 * does): the device is held (nothing reaches the guest), then goes on
 * with its connection; a driver reset afterwards still drops it. */
static void test_snapshot_resume(void)
{
	struct virtio_vsock_hdr h;
	struct snap_buf s;
	struct tc t;
	char buf[16];
	uint32_t hp;
	int fd;

	tc_start(&t, 1);
	rx_give(&t, 16);
	fd = host_connect(&t, &hp);
	/* a migration's source holds, lets go and holds again at once */
	snap_save(&t, &s);
	virtio_pci_thaw(virtio_vsock_pci(t.v));
	snap_buf_release(&s);
	snap_save(&t, &s);
	CHECK_EQ_U64(write(fd, "abc", 3), 3);
	CHECK(!recv_pkt(&t, &h, buf, sizeof(buf), 200)); /* held */
	virtio_pci_thaw(virtio_vsock_pci(t.v));
	CHECK(recv_pkt(&t, &h, buf, sizeof(buf), 2000));
	CHECK(h.op == VIRTIO_VSOCK_OP_RW && h.len == 3 && !memcmp(buf, "abc", 3));
	send_pkt(&t, hdr(80, hp, VIRTIO_VSOCK_OP_RW), "xyz", 3, 0);
	CHECK_EQ_U64(read_n(fd, buf, 3), 3);
	CHECK(!memcmp(buf, "xyz", 3));
	/* the driver's reset (not a snapshot's) drops the connection */
	mmio_wr(t.d.common + 0x14, 0, 1);
	{
		struct pollfd pf = {fd, POLLIN, 0};

		CHECK(poll(&pf, 1, 2000) == 1 && read(fd, buf, 1) == 0); /* the end, not a wait */
	}
	close(fd);
	snap_buf_release(&s);
	tc_stop(&t);
}

/* The device of a saved tc made anew (a restore): the same guest memory
 * and driver state, a device for cid loaded from s. 0 or the error. */
static int snap_restore(struct tc *b, const struct tc *a, const struct snap_buf *s, uint64_t cid)
{
	struct snap_cur c = snap_cur_make(s->p, s->len);
	struct virtio_pci *vp;
	int r;

	*b = *a;
	tbus_n = 0;
	CHECK(thost_init(&b->h, &b->mem) == 0);
	CHECK(virtio_vsock_create(&b->v, &b->h, cid, b->path) == 0);
	vp = virtio_vsock_pci(b->v);
	r = pci_dev_load(&b->h, &vp->pci, &c);
	if (!r)
		r = virtio_pci_load(vp, &c);
	if (!r && c.left)
		r = -EBADMSG;
	if (!r)
		pci_dev_resync(&b->h, &vp->pci);
	if (!r)
		r = virtio_pci_start(vp);
	CHECK(tvdev_probe(&b->d, 1) == 0);
	return r;
}

/* Restored, the device tells the driver its connections are gone (a
 * TRANSPORT_RESET event in the first event buffer, as vhost-vsock after
 * a migration) and host clients connect anew; a snapshot of another CID
 * is refused. */
static void test_snapshot_restore(void)
{
	struct virtio_vsock_event ev;
	struct snap_buf s;
	struct tc a, b;
	uint32_t hp, id, len;
	int fd;

	tc_start(&a, 1);
	rx_give(&a, 16);
	for (int i = 0; i < 4; i++) /* Linux posts its event buffers at probe */
		tq_post(&a, 2, EVB, 16, 16, 1, 0);
	fd = host_connect(&a, &hp);
	snap_save(&a, &s);
	virtio_vsock_destroy(a.v); /* the source vmlet ends */
	pci_host_release(&a.h);
	{
		struct pollfd pf = {fd, POLLIN, 0};

		CHECK(poll(&pf, 1, 2000) == 1 &&
		      read(fd, &id, 1) == 0); /* its client sees the end */
	}
	close(fd);
	CHECK(snap_restore(&b, &a, &s, CID + 1) < 0);
	virtio_vsock_destroy(b.v);
	pci_host_release(&b.h);
	CHECK_EQ_U64(snap_restore(&b, &a, &s, CID), 0);
	CHECK(tq_used(&b, 2, &id, &len, 2000));
	CHECK_EQ_U64(id, 0);
	CHECK_EQ_U64(len, sizeof(ev));
	memcpy(&ev, b.ram + EVB, sizeof(ev));
	CHECK_EQ_U64(ev.id, VIRTIO_VSOCK_EVENT_TRANSPORT_RESET);
	CHECK(!tq_used(&b, 2, &id, &len, 100)); /* one event */
	fd = host_connect(&b, &hp);
	close(fd);
	snap_buf_release(&s);
	tc_stop(&b);
}

int main(void)
{
	TEST_RUN(test_snapshot_resume);
	TEST_RUN(test_snapshot_restore);
	return test_summary();
}
