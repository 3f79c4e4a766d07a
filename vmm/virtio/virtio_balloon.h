/* SPDX-License-Identifier: MIT */
/*
 * virtio_balloon.h - the memory balloon KubeVirt attaches to every VM
 * unless autoattachMemBalloon is false (virtio 1.2 §5.5, device id 5).
 *
 * What it offers, as libvirt's <memballoon model='virtio-non-transitional'>
 * with <stats period='10'/> and freePageReporting does under KubeVirt:
 *  - VIRTIO_BALLOON_F_STATS_VQ: the driver sends its memory statistics;
 *    the device keeps the newest and hands the buffer back every period
 *    (10 s, KubeVirt's DefaultMemBalloonStatsPeriod) for fresh ones;
 *  - VIRTIO_BALLOON_F_REPORTING (when asked for): every buffer on the
 *    reporting queue is free guest memory, released to the host with
 *    madvise(MADV_DONTNEED) (guest RAM is private anonymous memory, so
 *    the guest reads zeros there next time), then handed back;
 *  - VIRTIO_BALLOON_F_PAGE_POISON (as QEMU): a guest that poisons or
 *    zeroes its free pages still reports them; with a non-zero
 *    poison_val nothing is released (the guest would find its poison
 *    gone).
 * The target (num_pages) stays 0: vmlet never asks the guest to inflate.
 * PFNs a guest inflates anyway are checked against guest RAM and
 * released; deflates are acknowledged. Not offered: MUST_TELL_HOST,
 * DEFLATE_ON_OOM (KubeVirt sets no autodeflate), FREE_PAGE_HINT.
 *
 * Queues: 0 inflateq, 1 deflateq, 2 statsq (exists with STATS_VQ),
 * then reporting_vq. The spec numbers free_page_vq 3 and reporting_vq 4;
 * Linux drivers number the queues that exist consecutively (reporting
 * at 3, or at 2 without STATS_VQ). With reporting the device has five
 * queues and serves the reporting role at 4 and at the consecutive
 * index, so both conventions work (free_page_vq is never negotiated).
 *
 * Every buffer address comes from virtq_pop() or guest_mem_ptr(): nothing
 * outside guest RAM is read or released; a report whose segments are not
 * page-aligned, whole pages, is refused (acknowledged, nothing released).
 * The worker runs in the block I/O role: poll, read/write on eventfds and
 * madvise(MADV_DONTNEED), which every role may issue.
 */
#ifndef VMLET_VIRTIO_BALLOON_H
#define VMLET_VIRTIO_BALLOON_H

#include <stdbool.h>
#include <stdint.h>

/* feature bits VIRTIO_BALLOON_F_*, statistic tags VIRTIO_BALLOON_S_*
 * (virtio 1.2 §5.5.3, §5.5.6.3) */
#include <linux/virtio_balloon.h>

struct pci_host;
struct virtio_balloon;
struct virtio_pci;

/* Statistics are kept by tag (stat[] is indexed by VIRTIO_BALLOON_S_*:
 * SWAP_IN, SWAP_OUT, MEMFREE, MEMTOT, AVAIL and CACHES in bytes, the
 * others counts); tags from here on are ignored (Linux sends up to 15). */
#define VIRTIO_BALLOON_STATS_KEPT 16

#define VIRTIO_BALLOON_STATS_PERIOD_MS 10000u

struct virtio_balloon_params {
	bool reporting;		      /* offer VIRTIO_BALLOON_F_REPORTING */
	unsigned int stats_period_ms; /* 0: VIRTIO_BALLOON_STATS_PERIOD_MS */
};

/* What the device saw, for metrics and tests (a snapshot of atomics). */
struct virtio_balloon_counters {
	uint64_t stats_updates; /* statistics buffers received */
	uint64_t stats_valid;	/* bit t: the guest sent tag t */
	uint64_t stat[VIRTIO_BALLOON_STATS_KEPT];
	uint64_t reports;	 /* reporting buffers handled */
	uint64_t reported_bytes; /* of them released to the host */
	uint64_t inflated_pages, deflated_pages;
	uint64_t refused; /* buffers or PFNs refused (outside RAM, unaligned) */
};

int virtio_balloon_create(struct virtio_balloon **out, struct pci_host *host,
			  const struct virtio_balloon_params *p);
void virtio_balloon_destroy(struct virtio_balloon *b);
struct virtio_pci *virtio_balloon_pci(struct virtio_balloon *b);
/* Any thread. */
void virtio_balloon_read(struct virtio_balloon *b, struct virtio_balloon_counters *c);

#endif /* VMLET_VIRTIO_BALLOON_H */
