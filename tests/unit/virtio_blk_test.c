// SPDX-License-Identifier: MIT
/*
 * virtio-blk end to end without KVM: a raw image, the PCI host and the
 * virtio transport on a fake bus, and a mini driver that enumerates the
 * function through ECAM, negotiates, posts requests and checks data,
 * status bytes, interrupts and the image file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/disk/blk.h"
#include "vmm/virtio/virtio_blk.h"

#define F(b)	 (1ull << (b))
#define WANT	 (F(32) | F(29) | F(28) | F(1) | F(2) | F(5) | F(6) | F(9) | F(10) | F(13) | F(14))
#define IMG_SIZE (1u << 20)

struct env {
	struct pci_host h;
	struct tdrv d;
	struct virtio_blk *blk;
	struct tvdev v;
	char path[64];
	int fd;
};

static const char *img_dir = "/tmp";
static bool img_sparse;
static enum blk_cache img_cache = BLK_CACHE_WRITEBACK;
static enum virtio_blk_error_policy img_policy = VIRTIO_BLK_ERROR_REPORT;

static int env_up(struct env *e, bool ro, const char *serial)
{
	struct virtio_blk_params p = {.name = "disk0",
				      .serial = serial,
				      .physical_block_size = 4096,
				      .error_policy = img_policy};
	struct blk *be;
	uint8_t *buf = malloc(IMG_SIZE);

	memset(e, 0, sizeof(*e));
	tbus_n = 0;
	snprintf(e->path, sizeof(e->path), "%s/vmlet-blk-test.XXXXXX", img_dir);
	e->fd = mkstemp(e->path);
	for (unsigned int i = 0; i < IMG_SIZE; i++)
		buf[i] = (uint8_t)(i * 7 + i / 512);
	if (e->fd < 0 || (img_sparse ? ftruncate(e->fd, IMG_SIZE) != 0
				     : pwrite(e->fd, buf, IMG_SIZE, 0) != IMG_SIZE)) {
		free(buf);
		return -1;
	}
	free(buf);
	tdrv_init(&e->d, 4 << 20, 64);
	if (thost_init(&e->h, &e->d.mem) || blk_open(&be, e->path, ro, img_cache) ||
	    virtio_blk_create(&e->blk, &e->h, be, &p) || tvdev_probe(&e->v, 1))
		return -1;
	tvdev_msix(&e->v, 2);
	return 0;
}

static void env_down(struct env *e)
{
	virtio_blk_destroy(e->blk);
	pci_host_release(&e->h);
	tdrv_release(&e->d);
	close(e->fd);
	unlink(e->path);
}

/* One request: header + optional out data + in data + status. */
static uint8_t do_req(struct env *e, uint32_t type, uint64_t sector, const void *out,
		      uint32_t out_len, void *in, uint32_t in_len, uint32_t *used_len)
{
	struct tdrv *d = &e->d;
	gpa_t h = tdrv_alloc(d, 16), o = tdrv_alloc(d, out_len + 1), i = tdrv_alloc(d, in_len + 1);
	gpa_t s = tdrv_alloc(d, 1);
	struct tbuf b[4];
	unsigned int n = 0;
	uint32_t id, len;
	uint8_t *st = tdrv_ptr(d, s);

	memcpy(tdrv_ptr(d, h), &type, 4);
	memset(tdrv_ptr(d, h + 4), 0, 4);
	memcpy(tdrv_ptr(d, h + 8), &sector, 8);
	b[n++] = (struct tbuf){h, 16, 0};
	if (out_len) {
		memcpy(tdrv_ptr(d, o), out, out_len);
		b[n++] = (struct tbuf){o, out_len, 0};
	}
	if (in_len)
		b[n++] = (struct tbuf){i, in_len, 1};
	b[n++] = (struct tbuf){s, 1, 1};
	*st = 0xee;
	uint16_t head = tdrv_post(d, b, n, (int)(sector & 1));
	tvdev_kick(&e->v, 0);
	if (!tvdev_wait_used(d, &id, &len, 5000) || id != head)
		return 0xff;
	if (used_len)
		*used_len = len;
	if (in_len)
		memcpy(in, tdrv_ptr(d, i), in_len);
	d->data_next = TDRV_DATA; /* recycle the data area */
	return *st;
}

static void test_enumerate_and_config(void)
{
	struct env e;
	uint64_t offered = 0;

	if (env_up(&e, false, "SER-123"))
		SKIP("cannot set up the image or device");
	/* 00:00.0 host bridge, 00:01.0 virtio-blk, nothing else */
	CHECK_EQ_U64(ecam_rd(0, 0, 4), 0x00081b36);
	CHECK_EQ_U64(ecam_rd(0, 0x08, 4) >> 8, 0x060000);
	CHECK_EQ_U64(ecam_rd(1, 0, 4), 0x10421af4);
	CHECK_EQ_U64(ecam_rd(1, 0x08, 4), 0x01000001);
	CHECK_EQ_U64(ecam_rd(2, 0, 4), 0xffffffff);
	CHECK_EQ_U64(ecam_rd(1, 0x100, 4), 0xffffffff); /* conventional: no extended space */
	/* BAR sizing: write ~0, read back the size mask */
	uint32_t bar = ecam_rd(1, PCI_BASE_ADDRESS_0, 4);
	CHECK(bar >= ARCH_PCI_MMIO32_START && bar < ARCH_PCI_MMIO32_START + ARCH_PCI_MMIO32_SIZE);
	ecam_wr(1, PCI_BASE_ADDRESS_0, 0xffffffff, 4);
	CHECK_EQ_U64(ecam_rd(1, PCI_BASE_ADDRESS_0, 4), ~(VIRTIO_PCI_BAR_SIZE - 1));
	ecam_wr(1, PCI_BASE_ADDRESS_0, bar, 4);
	CHECK_EQ_U64(ecam_rd(1, PCI_BASE_ADDRESS_0, 4), bar);
	CHECK(e.v.device && e.v.msix_cap && e.v.ncaps == 6);
	CHECK_EQ_U64(e.v.notify_mult, 4);
	CHECK_EQ_U64(mmio_rd(e.v.device, 4), IMG_SIZE / 512); /* capacity */
	CHECK_EQ_U64(mmio_rd(e.v.device + 20, 4), 512);	      /* blk_size */
	CHECK_EQ_U64(mmio_rd(e.v.device + 24, 1), 3);	      /* 4096/512 */
	CHECK_EQ_U64(mmio_rd(e.v.common + 0x12, 2), 1);	      /* num_queues */
	/* a driver that refuses VERSION_1 does not get FEATURES_OK */
	CHECK(!(tvdev_start(&e.v, &e.d, WANT & ~F(32), &offered) & VIRTIO_CONFIG_S_FEATURES_OK));
	CHECK((offered & (F(32) | F(1) | F(2) | F(6) | F(9) | F(10) | F(13) | F(14))) ==
	      (F(32) | F(1) | F(2) | F(6) | F(9) | F(10) | F(13) | F(14)));
	CHECK(!(offered & F(5)));
	CHECK_EQ_U64(tvdev_start(&e.v, &e.d, WANT, NULL), 0x0f);
	/* the same register through the VIRTIO_PCI_CAP_PCI_CFG window */
	int c = e.v.msix_cap;
	while ((c = (int)ecam_rd(1, (uint32_t)c + 1, 1)) && ecam_rd(1, (uint32_t)c + 3, 1) != 5)
		;
	CHECK(c);
	ecam_wr(1, (uint32_t)c + 4, 0, 1);
	ecam_wr(1, (uint32_t)c + 8, VIRTIO_PCI_DEVICE_OFF, 4);
	ecam_wr(1, (uint32_t)c + 12, 4, 4);
	CHECK_EQ_U64(ecam_rd(1, (uint32_t)c + 16, 4), IMG_SIZE / 512);
	env_down(&e);
}

static void test_read_write_flush(void)
{
	struct env e;
	uint8_t buf[4096], want[4096], pat[2048];
	uint32_t used = 0;

	if (env_up(&e, false, "SER-123"))
		SKIP("cannot set up the image or device");
	CHECK_EQ_U64(tvdev_start(&e.v, &e.d, WANT, NULL), 0x0f);
	CHECK_EQ_U64(do_req(&e, 0, 3, NULL, 0, buf, 4096, &used), 0);
	CHECK_EQ_U64(used, 4097);
	CHECK(pread(e.fd, want, 4096, 3 * 512) == 4096);
	CHECK(!memcmp(buf, want, 4096));
	CHECK(tirq_wait(0x41, 10000) >= 1); /* queue 0 -> vector 1 */

	for (unsigned int i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i ^ 0x5a);
	CHECK_EQ_U64(do_req(&e, 1, 10, pat, 2048, NULL, 0, &used), 0);
	CHECK_EQ_U64(used, 1);
	CHECK_EQ_U64(do_req(&e, 4, 0, NULL, 0, NULL, 0, NULL), 0);
	CHECK(pread(e.fd, want, 2048, 10 * 512) == 2048);
	CHECK(!memcmp(pat, want, 2048));
	CHECK_EQ_U64(do_req(&e, 0, 10, NULL, 0, buf, 2048, NULL), 0);
	CHECK(!memcmp(pat, buf, 2048));

	/* serial */
	memset(buf, 0xaa, 20);
	CHECK_EQ_U64(do_req(&e, 8, 0, NULL, 0, buf, 20, &used), 0);
	CHECK(!memcmp(buf, "SER-123\0\0\0", 10));
	/* out of range, unaligned, unknown type */
	CHECK_EQ_U64(do_req(&e, 0, IMG_SIZE / 512 - 1, NULL, 0, buf, 1024, NULL), 1);
	CHECK_EQ_U64(do_req(&e, 0, ~0ull >> 1, NULL, 0, buf, 512, NULL), 1);
	CHECK_EQ_U64(do_req(&e, 0, 0, NULL, 0, buf, 100, NULL), 1);
	CHECK_EQ_U64(do_req(&e, 99, 0, NULL, 0, buf, 512, NULL), 2);

	/* write zeroes and discard over 8 sectors from 100 */
	struct {
		uint64_t sector;
		uint32_t n, flags;
	} rg = {100, 8, 0};
	CHECK_EQ_U64(do_req(&e, 13, 0, &rg, 16, NULL, 0, NULL), 0);
	CHECK(pread(e.fd, want, 4096, 100 * 512) == 4096);
	memset(buf, 0, 4096);
	CHECK(!memcmp(buf, want, 4096));
	rg.sector = 200;
	CHECK_EQ_U64(do_req(&e, 11, 0, &rg, 16, NULL, 0, NULL), 0);
	CHECK(pread(e.fd, want, 4096, 200 * 512) == 4096);
	CHECK(!memcmp(buf, want, 4096)); /* punched: zeroes on any local fs */
	rg.flags = 1;			 /* unmap flag is not for discard */
	CHECK_EQ_U64(do_req(&e, 11, 0, &rg, 16, NULL, 0, NULL), 2);
	env_down(&e);
}

static void test_malformed_and_broken(void)
{
	struct env e;
	uint32_t id, len;
	uint8_t buf[512];

	if (env_up(&e, false, NULL))
		SKIP("cannot set up the image or device");
	CHECK_EQ_U64(tvdev_start(&e.v, &e.d, WANT, NULL), 0x0f);
	/* no writable status byte: completed with length 0 */
	struct tbuf only_hdr[] = {{TDRV_DATA, 16, 0}};
	uint16_t head = tdrv_post(&e.d, only_hdr, 1, 0);
	tvdev_kick(&e.v, 0);
	CHECK(tvdev_wait_used(&e.d, &id, &len, 5000) && id == head && len == 0);
	/* a buffer outside guest RAM */
	struct tbuf outside[] = {{TDRV_DATA, 16, 0}, {1ull << 40, 512, 1}, {TDRV_DATA + 16, 1, 1}};
	head = tdrv_post(&e.d, outside, 3, 0);
	tvdev_kick(&e.v, 0);
	CHECK(tvdev_wait_used(&e.d, &id, &len, 5000) && id == head && len == 0);
	CHECK_EQ_U64(do_req(&e, 0, 0, NULL, 0, buf, 512, NULL), 0);
	/* a looping chain: the device needs a reset and says so */
	*tdrv_desc(&e.d, 5) = (struct virtq_desc){TDRV_DATA, 16, VRING_DESC_F_NEXT, 5};
	tdrv_publish(&e.d, 5);
	tvdev_kick(&e.v, 0);
	CHECK(tirq_wait(0x40, 10000) >= 1); /* config change on vector 0 */
	CHECK(mmio_rd(e.v.common + 0x14, 1) & VIRTIO_CONFIG_S_NEEDS_RESET);
	/* after a reset the device works again */
	tdrv_release(&e.d);
	tdrv_init(&e.d, 4 << 20, 64);
	CHECK_EQ_U64(tvdev_start(&e.v, &e.d, WANT, NULL), 0x0f);
	CHECK_EQ_U64(do_req(&e, 0, 0, NULL, 0, buf, 512, NULL), 0);
	env_down(&e);
}

static void test_read_only(void)
{
	struct env e;
	uint64_t offered = 0;
	uint8_t pat[512], now[512], before[512];
	struct {
		uint64_t sector;
		uint32_t n, flags;
	} rg = {0, 1, 0};

	if (env_up(&e, true, NULL))
		SKIP("cannot set up the image or device");
	CHECK_EQ_U64(tvdev_start(&e.v, &e.d, WANT, &offered), 0x0f);
	CHECK(offered & F(5));
	CHECK(!(offered & (F(13) | F(14))));
	CHECK(pread(e.fd, before, 512, 0) == 512);
	memset(pat, 0x11, sizeof(pat));
	CHECK_EQ_U64(do_req(&e, 1, 0, pat, 512, NULL, 0, NULL), 1);
	CHECK_EQ_U64(do_req(&e, 13, 0, &rg, 16, NULL, 0, NULL), 1);
	CHECK(pread(e.fd, now, 512, 0) == 512);
	CHECK(!memcmp(before, now, 512));
	env_down(&e);
}

static void tmpfs_env_done(const char *mnt)
{
	img_dir = "/tmp";
	img_sparse = false;
	img_policy = VIRTIO_BLK_ERROR_REPORT;
	umount(mnt);
	rmdir(mnt);
}

/* The device, started, on a sparse image in a fresh 64 KiB tmpfs at mnt
 * (root only) under policy: 1 ready, 0 no tmpfs here (skip), -1 setup
 * failed (undone). tmpfs_env_done() after env_down(). */
static int tmpfs_env_up(struct env *e, char *mnt, enum virtio_blk_error_policy policy)
{
	if (geteuid() != 0 || !mkdtemp(mnt))
		return 0;
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k")) {
		rmdir(mnt);
		return 0;
	}
	img_dir = mnt;
	img_sparse = true;
	img_policy = policy;
	if (env_up(e, false, NULL)) {
		tmpfs_env_done(mnt);
		return -1;
	}
	CHECK_EQ_U64(tvdev_start(&e->v, &e->d, WANT, NULL), 0x0f);
	return 1;
}

/* A full host filesystem under errorPolicy report: the write fails with
 * IOERR, vmlet and the next requests are fine. */
static void test_host_enospc(void)
{
	char mnt[] = "/tmp/vmlet-enospc.XXXXXX";
	static uint8_t big[256 << 10], small[512], back[512];
	struct env e;
	int up = tmpfs_env_up(&e, mnt, VIRTIO_BLK_ERROR_REPORT);

	if (!up)
		SKIP("needs root to mount a small tmpfs");
	if (up < 0) {
		test_fail(__FILE__, __LINE__, "setup on tmpfs");
		return;
	}
	memset(small, 0x3c, sizeof(small));
	memset(big, 0x5a, sizeof(big));
	CHECK_EQ_U64(do_req(&e, 1, 0, small, 512, NULL, 0, NULL), 0);
	CHECK_EQ_U64(do_req(&e, 1, 512, big, sizeof(big), NULL, 0, NULL), 1); /* ENOSPC */
	CHECK_EQ_U64(do_req(&e, 4, 0, NULL, 0, NULL, 0, NULL), 0);
	CHECK_EQ_U64(do_req(&e, 0, 0, NULL, 0, back, 512, NULL), 0);
	CHECK(!memcmp(back, small, 512));
	CHECK(!(mmio_rd(e.v.common + 0x14, 1) & VIRTIO_CONFIG_S_NEEDS_RESET));
	env_down(&e);
	tmpfs_env_done(mnt);
}

/* The write that hits the full filesystem, posted without waiting. */
static uint16_t post_big_write(struct env *e, const uint8_t *big, size_t len, gpa_t *status)
{
	uint64_t hdr[2] = {1 /* OUT */, 512};
	gpa_t h = tdrv_alloc(&e->d, 16), o = tdrv_alloc(&e->d, len);
	struct tbuf b[3];
	uint16_t head;

	*status = tdrv_alloc(&e->d, 1);
	memcpy(tdrv_ptr(&e->d, h), hdr, 16);
	memcpy(tdrv_ptr(&e->d, o), big, len);
	*(uint8_t *)tdrv_ptr(&e->d, *status) = 0xee;
	b[0] = (struct tbuf){h, 16, 0};
	b[1] = (struct tbuf){o, len, 0};
	b[2] = (struct tbuf){*status, 1, 1};
	head = tdrv_post(&e->d, b, 3, 0);
	tvdev_kick(&e->v, 0);
	return head;
}

/* errorPolicy stop (and enospace on ENOSPC): the write that hits a full
 * filesystem is held, not failed; the VM is asked to pause with a message
 * naming the disk and the error; once space is freed and the VM resumed,
 * the same request completes OK and its data is in the image. ignore:
 * the failed write completes OK (and its data is lost). */
static void enospc_hold(enum virtio_blk_error_policy policy)
{
	char mnt[] = "/tmp/vmlet-enospc.XXXXXX";
	static uint8_t big[256 << 10], back[512];
	unsigned int pauses = tvm_pauses;
	uint32_t id, len;
	struct env e;
	gpa_t s;
	int up = tmpfs_env_up(&e, mnt, policy);

	if (!up)
		SKIP("needs root to mount a small tmpfs");
	if (up < 0) {
		test_fail(__FILE__, __LINE__, "setup on tmpfs");
		return;
	}
	memset(big, 0x6b, sizeof(big));
	if (policy == VIRTIO_BLK_ERROR_IGNORE) {
		CHECK_EQ_U64(do_req(&e, 1, 512, big, sizeof(big), NULL, 0, NULL), 0);
		CHECK_EQ_U64(tvm_pauses, pauses);
	} else {
		uint16_t head = post_big_write(&e, big, sizeof(big), &s);

		for (int i = 0;
		     i < 5000 && __atomic_load_n(&tvm_pauses, __ATOMIC_SEQ_CST) == pauses; i++)
			usleep(1000);
		CHECK_EQ_U64(tvm_pauses, pauses + 1);
		CHECK(strstr(tvm_pause_msg,
			     "disk 'disk0': write at sector 512 failed: No space left"));
		CHECK(!tvdev_wait_used(&e.d, &id, &len, 300)); /* held, not failed */
		CHECK(!mount("tmpfs", mnt, "tmpfs", MS_REMOUNT, "size=4m"));
		__atomic_add_fetch(&tvm_resumes, 1, __ATOMIC_SEQ_CST);
		CHECK(tvdev_wait_used(&e.d, &id, &len, 5000) && id == head);
		CHECK_EQ_U64(*(uint8_t *)tdrv_ptr(&e.d, s), 0);
		CHECK(pread(e.fd, back, sizeof(back), 512 * 512 + sizeof(big) - sizeof(back)) ==
		      sizeof(back));
		CHECK(!memcmp(back, big, sizeof(back)));
		e.d.data_next = TDRV_DATA;
	}
	env_down(&e);
	tmpfs_env_done(mnt);
}

static void test_enospc_stop(void)
{
	enospc_hold(VIRTIO_BLK_ERROR_STOP);
}

static void test_enospc_enospace(void)
{
	enospc_hold(VIRTIO_BLK_ERROR_ENOSPACE);
}

static void test_enospc_ignore(void)
{
	enospc_hold(VIRTIO_BLK_ERROR_IGNORE);
}

/* cache=none: O_DIRECT where the filesystem has it, with guest buffers
 * that are not sector-aligned going through bounce buffers. */
static void test_cache_none_unaligned(void)
{
	struct env e;
	uint8_t buf[1024], want[1024];

	img_cache = BLK_CACHE_NONE;
	img_dir = "/var/tmp"; /* usually not tmpfs */
	if (env_up(&e, false, NULL)) {
		img_cache = BLK_CACHE_WRITEBACK;
		img_dir = "/tmp";
		SKIP("cannot set up the image or device");
	}
	CHECK_EQ_U64(tvdev_start(&e.v, &e.d, WANT, NULL), 0x0f);
	/* do_req places data 16 bytes after a 512-aligned header: misaligned
	 * only when the data buffer is allocated right after it; force it */
	e.d.data_next = TDRV_DATA + 8;
	CHECK_EQ_U64(do_req(&e, 0, 7, NULL, 0, buf, 1024, NULL), 0);
	CHECK(pread(e.fd, want, 1024, 7 * 512) == 1024);
	CHECK(!memcmp(buf, want, 1024));
	for (unsigned int i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(255 - i);
	e.d.data_next = TDRV_DATA + 24;
	CHECK_EQ_U64(do_req(&e, 1, 9, buf, 1024, NULL, 0, NULL), 0);
	CHECK(pread(e.fd, want, 1024, 9 * 512) == 1024);
	CHECK(!memcmp(buf, want, 1024));
	env_down(&e);
	img_cache = BLK_CACHE_WRITEBACK;
	img_dir = "/tmp";
}

int main(void)
{
	TEST_RUN(test_enumerate_and_config);
	TEST_RUN(test_read_write_flush);
	TEST_RUN(test_malformed_and_broken);
	TEST_RUN(test_read_only);
	TEST_RUN(test_host_enospc);
	TEST_RUN(test_enospc_stop);
	TEST_RUN(test_enospc_enospace);
	TEST_RUN(test_enospc_ignore);
	TEST_RUN(test_cache_none_unaligned);
	return test_summary();
}
