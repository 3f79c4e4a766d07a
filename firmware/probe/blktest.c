// SPDX-License-Identifier: MIT
/*
 * blktest.c - the probe's write test of one virtio-blk disk the host names
 * (vmlet.iotest=<bb:dd.f> on the command line; probe.h): patterns written,
 * flushed and read back, a write split over several descriptors, write
 * zeroes, discard, and a write to a read-only disk refused. CPL3, polled,
 * with the plain fw_virtio driver.
 */
#include "firmware/lib/virtio.h"
#include "firmware/probe/probe.h"

#define SPAN 65536u /* bytes at sector 0 the test works on */

struct req_hdr {
	uint32_t type, reserved;
	uint64_t sector;
};

static uint8_t wbuf[SPAN] FW_ALIGNED(4096), rbuf[SPAN] FW_ALIGNED(4096);

/* One request: header, then up to two data segments, then the status
 * byte. Returns the status (0xff when none came back). */
static int req(struct fw_virtio *v, uint32_t type, uint64_t sector, void *a, uint32_t alen, void *b,
	       uint32_t blen)
{
	static struct req_hdr hdr;
	static uint8_t status;
	struct fw_virtio_buf bufs[4] = {{&hdr, sizeof(hdr), false}};
	bool in = type == FW_VIRTIO_BLK_T_IN;
	int n = 1;

	hdr = (struct req_hdr){type, 0, sector};
	if (alen)
		bufs[n++] = (struct fw_virtio_buf){a, alen, in};
	if (blen)
		bufs[n++] = (struct fw_virtio_buf){b, blen, in};
	bufs[n++] = (struct fw_virtio_buf){&status, 1, true};
	status = 0xff;
	if (fw_virtio_submit(v, bufs, n) < 0)
		return 0xff;
	return status;
}

static void fill(uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed + (i >> 9));
}

static bool all_zero(const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The steps on a writable disk; NULL when all passed, else the step. */
static const char *writable(struct fw_virtio *v)
{
	struct {
		uint64_t sector;
		uint32_t num, flags;
	} rg;

	fill(wbuf, SPAN, 1);
	if (req(v, FW_VIRTIO_BLK_T_OUT, 0, wbuf, SPAN, NULL, 0))
		return "write";
	if ((v->features & FW_VIRTIO_BLK_F_FLUSH) &&
	    req(v, FW_VIRTIO_BLK_T_FLUSH, 0, NULL, 0, NULL, 0))
		return "flush";
	if (req(v, FW_VIRTIO_BLK_T_IN, 0, rbuf, SPAN, NULL, 0) || memcmp(wbuf, rbuf, SPAN))
		return "read-back";
	/* 3 KiB at sector 9 in two segments (1 KiB + 2 KiB) */
	fill(wbuf + 9 * 512, 3072, 77);
	if (req(v, FW_VIRTIO_BLK_T_OUT, 9, wbuf + 9 * 512, 1024, wbuf + 11 * 512, 2048))
		return "split-write";
	if (req(v, FW_VIRTIO_BLK_T_IN, 0, rbuf, 8192, rbuf + 8192, 8192) ||
	    memcmp(wbuf, rbuf, 16384))
		return "split-read-back";
	if (v->features & FW_VIRTIO_BLK_F_WRITE_ZEROES) {
		rg.sector = 32, rg.num = 8, rg.flags = 0;
		if (req(v, FW_VIRTIO_BLK_T_WRITE_ZEROES, 0, &rg, sizeof(rg), NULL, 0))
			return "write-zeroes";
		memset(wbuf + 32 * 512, 0, 4096);
		if (req(v, FW_VIRTIO_BLK_T_IN, 0, rbuf, SPAN, NULL, 0) ||
		    memcmp(wbuf, rbuf, SPAN) || !all_zero(rbuf + 32 * 512, 4096))
			return "zeroes-read-back";
	}
	if (v->features & FW_VIRTIO_BLK_F_DISCARD) { /* contents after it are unspecified */
		rg.sector = 64, rg.num = 8, rg.flags = 0;
		if (req(v, FW_VIRTIO_BLK_T_DISCARD, 0, &rg, sizeof(rg), NULL, 0))
			return "discard";
	}
	/* out of range: the device refuses, nothing else changes */
	if (req(v, FW_VIRTIO_BLK_T_IN, ~0ull >> 10, rbuf, 512, NULL, 0) != 1)
		return "out-of-range";
	if (req(v, FW_VIRTIO_BLK_T_IN, 0, rbuf, 4096, NULL, 0) || memcmp(wbuf, rbuf, 4096))
		return "read-after-out-of-range";
	return NULL;
}

/* A read-only disk: a write of sector 0's own bytes must fail with IOERR
 * (and would change nothing if a broken device took it). */
static const char *read_only(struct fw_virtio *v)
{
	if (req(v, FW_VIRTIO_BLK_T_IN, 0, rbuf, 512, NULL, 0))
		return "read";
	if (req(v, FW_VIRTIO_BLK_T_OUT, 0, rbuf, 512, NULL, 0) != 1)
		return "write-not-refused";
	return NULL;
}

void probe_blk_test(struct fw_buf *out, uint64_t ecam, const char *where)
{
	static struct fw_pci_fn fns[FW_PCI_MAX_FNS];
	uint64_t next = 0xd0000000ull;
	struct fw_virtio v;
	const char *fail = "no-such-disk";
	char at[16] = "-";
	bool found = false;
	int n = ecam ? fw_pci_scan(ecam, fns, FW_PCI_MAX_FNS) : 0, k = -1, nth = -1;

	if (where[0] == '#') /* the nth virtio-blk function in bus order */
		for (nth = 0, where++; *where >= '0' && *where <= '9' && nth < 1000; where++)
			nth = nth * 10 + (*where - '0');
	for (int i = 0; i < n; i++) {
		if (fns[i].vendor != FW_VIRTIO_VENDOR || fns[i].device != FW_VIRTIO_DEV_BLK)
			continue;
		k++;
		fw_snprintf(at, sizeof(at), "00:%02x.%x", fns[i].dev, fns[i].fn);
		if (nth >= 0 ? k != nth : strcmp(at, where) != 0)
			continue;
		found = true;
		if (fw_virtio_init(&v, &fns[i],
				   FW_VIRTIO_BLK_F_RO | FW_VIRTIO_BLK_F_FLUSH |
				       FW_VIRTIO_BLK_F_DISCARD | FW_VIRTIO_BLK_F_WRITE_ZEROES,
				   &next) ||
		    !v.device) {
			fail = "init";
			break;
		}
		if ((*(volatile uint32_t *)v.device |
		     (uint64_t) * (volatile uint32_t *)(v.device + 4) << 32) < SPAN / 512)
			fail = "too-small";
		else
			fail = v.features & FW_VIRTIO_BLK_F_RO ? read_only(&v) : writable(&v);
		fw_virtio_reset(&v);
		break;
	}
	fw_buf_printf(out, "ioTest=%s %s\n", found ? at : "-", fail ? fail : "ok");
}
