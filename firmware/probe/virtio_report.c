// SPDX-License-Identifier: MIT
/*
 * virtio_report.c - the probe's report on the PCI functions it finds
 * (probe_virtio_report(), probe.h): pci=, pciCf8=, disk=, rng= and nic=
 * lines, and with vmlet.hostile the attacks on virtio-blk rings. Built on
 * the shared polled driver of firmware/lib/virtio.h.
 */
#include "firmware/lib/io.h"
#include "firmware/lib/virtio.h"
#include "firmware/probe/probe.h"
#include "firmware/probe/virtio_net.h"

#define POLL_SPINS 2000000000ull

static uint8_t io_buf[65536] FW_ALIGNED(4096);

/* the device status register (common configuration offset 0x14) */
static uint8_t dev_status(struct fw_virtio *v)
{
	return *(volatile uint8_t *)(v->common + 0x14);
}

static void hex(char *out, const uint8_t *p, int n)
{
	static const char d[] = "0123456789abcdef";

	for (int i = 0; i < n; i++) {
		out[2 * i] = d[p[i] >> 4];
		out[2 * i + 1] = d[p[i] & 15];
	}
	out[2 * n] = 0;
}

/* 0, the device's status byte (1 IOERR, 2 UNSUPP, 0xff none written), or
 * -1 with no completion or a wrong used length. */
static int blk_read(struct fw_virtio *v, uint64_t sector, uint32_t len)
{
	struct {
		uint32_t type, reserved;
		uint64_t sector;
	} hdr = {0, 0, sector};
	static uint8_t status;
	struct fw_virtio_buf b[3] = {{&hdr, 16, false}, {io_buf, len, true}, {&status, 1, true}};
	int64_t used;

	status = 0xff;
	used = fw_virtio_submit(v, b, 3);
	if (used < 0)
		return -1;
	if (status)
		return status;
	return used == (int64_t)len + 1 ? 0 : -1;
}

static void report_blk(struct fw_buf *out, const struct fw_pci_fn *f, uint64_t *next)
{
	struct fw_virtio v;
	struct fw_sha256 sha;
	uint64_t cap, done = 0, total;
	bool failed = false;
	uint8_t digest[32];
	char serial[21] = {0}, dh[65];
	struct {
		uint32_t type, reserved;
		uint64_t sector;
	} hdr = {8, 0, 0};
	static uint8_t status;
	struct fw_virtio_buf id[3] = {{&hdr, 16, false}, {serial, 20, true}, {&status, 1, true}};

	if (fw_virtio_init(&v, f, FW_VIRTIO_BLK_F_RO, next) || !v.device) {
		fw_buf_printf(out, "error=virtio-blk %02x: cannot initialize\n", f->dev);
		return;
	}
	cap = *(volatile uint32_t *)v.device | (uint64_t) * (volatile uint32_t *)(v.device + 4)
						   << 32;
	if (fw_virtio_submit(&v, id, 3) < 0 || status != 0)
		serial[0] = 0;
	for (int i = 0; serial[i]; i++)
		if (serial[i] <= ' ' || serial[i] > '~')
			serial[i] = '_';
	total = cap * 512 < (1u << 20) ? cap * 512 : (1u << 20);
	fw_sha256_init(&sha);
	/* a failed chunk is reported and skipped: the next ones must work */
	for (int r, errors = 0; done < total && errors < 4; done += sizeof(io_buf)) {
		uint32_t n =
		    total - done < sizeof(io_buf) ? (uint32_t)(total - done) : sizeof(io_buf);

		r = blk_read(&v, done / 512, n);
		if (r) {
			fw_buf_printf(
			    out, "error=virtio-blk %02x: read failed at sector %llu (status %d)\n",
			    f->dev, (unsigned long long)(done / 512), r);
			errors++;
			failed = true;
			if (r < 0) /* nothing came back: the ring is not ours to reuse */
				break;
			continue;
		}
		fw_sha256_update(&sha, io_buf, n);
	}
	fw_sha256_final(&sha, digest);
	hex(dh, digest, 32);
	fw_buf_printf(out, "disk=00:%02x.%x %llu %d %s %s\n", f->dev, f->fn,
		      (unsigned long long)(cap * 512), (v.features & FW_VIRTIO_BLK_F_RO) ? 1 : 0,
		      done >= total && !failed ? dh : "-", serial[0] ? serial : "-");
	fw_virtio_reset(&v);
}

static void report_rng(struct fw_buf *out, const struct fw_pci_fn *f, uint64_t *next)
{
	struct fw_virtio v;
	static uint8_t a[64], b[64];
	struct fw_virtio_buf ba = {a, sizeof(a), true}, bb = {b, sizeof(b), true};
	int64_t la, lb;

	if (fw_virtio_init(&v, f, 0, next)) {
		fw_buf_printf(out, "error=virtio-rng %02x: cannot initialize\n", f->dev);
		return;
	}
	la = fw_virtio_submit(&v, &ba, 1);
	lb = fw_virtio_submit(&v, &bb, 1);
	fw_buf_printf(out, "rng=00:%02x.%x %lld %s\n", f->dev, f->fn, (long long)(la + lb),
		      la > 0 && lb > 0 && memcmp(a, b, 8) ? "ok" : "bad");
	fw_virtio_reset(&v);
}

/* A chain header (device-readable) + one data buffer + status. */
static int64_t hostile_chain(struct fw_virtio *v, uint64_t data_addr, uint32_t data_len)
{
	struct fw_vq *vq = v->vq;
	static struct {
		uint32_t type, reserved;
		uint64_t sector;
	} hdr;
	static uint8_t status;

	hdr.type = 0;
	hdr.sector = 0;
	vq->desc[0].addr = (uint64_t)(uintptr_t)&hdr;
	vq->desc[0].len = 16;
	vq->desc[0].flags = 1;
	vq->desc[0].next = 1;
	vq->desc[1].addr = data_addr;
	vq->desc[1].len = data_len;
	vq->desc[1].flags = 1 | 2;
	vq->desc[1].next = 2;
	vq->desc[2].addr = (uint64_t)(uintptr_t)&status;
	vq->desc[2].len = 1;
	vq->desc[2].flags = 2;
	vq->avail.ring[v->avail_idx % v->qsize] = 0;
	fw_barrier();
	*(volatile uint16_t *)&vq->avail.idx = ++v->avail_idx;
	fw_barrier();
	*(volatile uint16_t *)v->notify = 0;
	for (uint64_t spin = 0; spin < POLL_SPINS / 16; spin++) {
		if (*(volatile uint16_t *)&vq->used.idx != v->last_used) {
			fw_barrier();
			return vq->used.ring[v->last_used++ % v->qsize].len;
		}
		if (dev_status(v) & 0x40)
			return -2; /* NEEDS_RESET */
		__asm__ volatile("pause");
	}
	return -1;
}

/* Wait for NEEDS_RESET after a ring-level attack. */
static bool needs_reset(struct fw_virtio *v)
{
	for (uint64_t spin = 0; spin < POLL_SPINS / 16; spin++) {
		if (dev_status(v) & 0x40)
			return true;
		__asm__ volatile("pause");
	}
	return false;
}

static const char *hostile_blk(const struct fw_pci_fn *f, uint64_t *next)
{
	struct fw_virtio v;
	struct fw_vq *vq;

	if (fw_virtio_init(&v, f, 0, next))
		return "init";
	vq = v.vq; /* the shared queue fw_virtio_init uses, each time */
	/* request-level: a buffer outside RAM, then an absurd length: the
	 * device completes them with nothing written */
	if (hostile_chain(&v, 0xfffffff000000000ull, 512) != 0)
		return "outside-ram";
	if (blk_read(&v, 0, 4096))
		return "read-after-outside-ram";
	if (hostile_chain(&v, (uint64_t)(uintptr_t)io_buf, 0xfffffe00u) != 0)
		return "huge-length";
	if (blk_read(&v, 1, 4096))
		return "read-after-huge-length";
	/* ring-level: a loop, then an avail index far ahead: NEEDS_RESET */
	vq->desc[0] = (typeof(vq->desc[0])){(uint64_t)(uintptr_t)io_buf, 16, 1, 1};
	vq->desc[1] = (typeof(vq->desc[1])){(uint64_t)(uintptr_t)io_buf, 16, 1, 0};
	vq->avail.ring[v.avail_idx % v.qsize] = 0;
	fw_barrier();
	*(volatile uint16_t *)&vq->avail.idx = ++v.avail_idx;
	*(volatile uint16_t *)v.notify = 0;
	if (!needs_reset(&v))
		return "loop-not-reported";
	if (fw_virtio_init(&v, f, 0, next) || blk_read(&v, 2, 4096))
		return "read-after-loop";
	*(volatile uint16_t *)&vq->avail.idx = (uint16_t)(v.avail_idx + 1000);
	*(volatile uint16_t *)v.notify = 0;
	if (!needs_reset(&v))
		return "avail-idx-not-reported";
	if (fw_virtio_init(&v, f, 0, next) || blk_read(&v, 3, 4096))
		return "read-after-avail-idx";
	fw_virtio_reset(&v);
	return "ok";
}

/* The IDs and class of every function again through ports 0xcf8/0xcfc
 * (needs them granted at CPL3): pciCf8=<functions that match ECAM>. */
static void report_cf8(struct fw_buf *out, const struct fw_pci_fn *fns, int n)
{
	int same = 0;

	for (int i = 0; i < n; i++) {
		uint32_t a = 0x80000000u | (uint32_t)fns[i].dev << 11 | (uint32_t)fns[i].fn << 8;
		uint32_t id, cls;

		outl(0xcf8, a);
		id = inl(0xcfc);
		outl(0xcf8, a | 8);
		cls = inl(0xcfc) >> 8;
		if (id == fw_pci_read32(&fns[i], 0) && cls == fns[i].class_code)
			same++;
		else
			fw_buf_printf(out, "error=pci 00:%02x.%x: 0xcf8 reads %08x %06x\n",
				      fns[i].dev, fns[i].fn, id, cls);
	}
	outl(0xcf8, 0);
	fw_buf_printf(out, "pciCf8=%d\n", same);
}

void probe_virtio_report(struct fw_buf *out, uint64_t ecam, bool hostile)
{
	static struct fw_pci_fn fns[FW_PCI_MAX_FNS];
	uint64_t next = 0xd0000000ull; /* upper half of the 32-bit window */
	int n = fw_pci_scan(ecam, fns, FW_PCI_MAX_FNS);

	if (!ecam)
		return;
	fw_buf_printf(out, "pciFunctions=%d\n", n);
	for (int i = 0; i < n; i++)
		fw_buf_printf(out, "pci=00:%02x.%x %04x:%04x %06x\n", fns[i].dev, fns[i].fn,
			      fns[i].vendor, fns[i].device, fns[i].class_code);
	report_cf8(out, fns, n);
	for (int i = 0; i < n; i++) {
		if (fns[i].vendor != FW_VIRTIO_VENDOR)
			continue;
		if (fns[i].device == FW_VIRTIO_DEV_BLK && hostile)
			fw_buf_printf(out, "hostile=00:%02x.%x %s\n", fns[i].dev, fns[i].fn,
				      hostile_blk(&fns[i], &next));
		if (fns[i].device == FW_VIRTIO_DEV_BLK)
			report_blk(out, &fns[i], &next);
		else if (fns[i].device == FW_VIRTIO_DEV_RNG)
			report_rng(out, &fns[i], &next);
		if (fns[i].device == FW_VIRTIO_DEV_NET && hostile)
			fw_virtio_net_hostile(out, &fns[i], &next);
		if (fns[i].device == FW_VIRTIO_DEV_NET)
			fw_virtio_net_report(out, &fns[i], &next);
	}
}
