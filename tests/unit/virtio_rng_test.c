// SPDX-License-Identifier: MIT
/* virtio-rng through the PCI transport: entropy arrives, differs between
 * requests, and the token bucket limits the rate. */
#include <time.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/virtio/virtio_rng.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_entropy_and_rate(void)
{
	struct pci_host h;
	struct tdrv d;
	struct virtio_rng *rng;
	struct tvdev v;
	uint32_t id = 0, len = 0, total = 0;
	gpa_t buf[6];

	tbus_n = 0;
	tdrv_init(&d, 1 << 20, 16);
	CHECK(thost_init(&h, &d.mem) == 0);
	/* 32 KiB/s with a 4 KiB bucket */
	CHECK(virtio_rng_create(&rng, &h, 32768, 4096) == 0);
	CHECK(tvdev_probe(&v, 1) == 0);
	CHECK_EQ_U64(ecam_rd(1, 0, 4), 0x10441af4);
	tvdev_msix(&v, 2);
	CHECK_EQ_U64(tvdev_start(&v, &d, 1ull << 32 | 1ull << 29 | 1ull << 28, NULL), 0x0f);

	double t0 = now_s();
	for (int i = 0; i < 6; i++) {
		buf[i] = tdrv_alloc(&d, 4096);
		struct tbuf b = {buf[i], 4096, 1};
		tdrv_post(&d, &b, 1, i & 1);
	}
	tvdev_kick(&v, 0);
	/* the first request drains the bucket at once */
	CHECK(tvdev_wait_used(&d, &id, &len, 2000));
	CHECK_EQ_U64(len, 4096);
	total += len;
	/* keep the queue full: each completion is reposted */
	while (total < 16384 && now_s() - t0 < 5) {
		if (!tvdev_wait_used(&d, &id, &len, 100))
			continue;
		total += len;
		CHECK(len > 0 && len <= 4096);
		struct tbuf b = {buf[5], 4096, 1};
		tdrv_post(&d, &b, 1, 0);
		tvdev_kick(&v, 0);
	}
	double dt = now_s() - t0;
	/* 4 KiB burst + 32 KiB/s: 16 KiB take >= ~0.35 s, and arrive */
	CHECK(total >= 16384);
	CHECK(dt > 0.3);
	CHECK(total <= 4096 + 32768 * dt + 4096);
	/* bytes are not all equal, and two buffers differ */
	uint8_t *a = tdrv_ptr(&d, buf[0]);
	int same = 0;
	for (int i = 1; i < 4096; i++)
		same += a[i] == a[0];
	CHECK(same < 200);
	CHECK(memcmp(a, tdrv_ptr(&d, buf[1]), 64) != 0);
	CHECK(tirq_wait(0x41, 10000) >= 1);
	virtio_rng_destroy(rng);
	pci_host_release(&h);
	tdrv_release(&d);
}

int main(void)
{
	TEST_RUN(test_entropy_and_rate);
	return test_summary();
}
