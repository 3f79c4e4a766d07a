/* SPDX-License-Identifier: MIT */
/*
 * e1000e_fuzz.c - libFuzzer target for the e1000e's registers and rings
 * (vmm/nic/e1000e*.c): TX descriptors, offload contexts and TCP
 * segmentation, RX descriptors, the interrupt registers, as a hostile
 * guest and a hostile network drive them.
 *
 * The device is the real one on the fake PCI bus of virtio_fuzz.h, with no
 * thread: the fuzzer turns e1000e_io_turn() by hand, so a run is
 * deterministic. Guest RAM is one exact-size allocation (ASan sees every
 * byte the device touches outside it); the rings start set up (TX ring at
 * 0, RX ring at 0x400, 64 descriptors each, both enabled) so that short
 * inputs reach the descriptor paths.
 *
 * Input: 1 byte of setup (bit 0: extended RX descriptors, bit 1: MSI-X on,
 * bit 2: IVAR/EIAC/IAM as Linux sets them, bit 3: packet-split RX), 2 bytes (little-endian) n, n
 * bytes of guest RAM from gpa 0, then events until the input ends: 'w'
 * reg16 val32 (the guest writes register 4 * reg16), 'r' reg16 (reads it),
 * 'f' len16 bytes (a frame, vnet header first, arrives from the network),
 * 'm' off16 len8 bytes (the guest writes RAM), 't' (the I/O thread turns),
 * 's' len16 bytes (a snapshot, vmm/nic/e1000e_snap.c: the device's own
 * state is saved, loaded back and must save to the same bytes; then the
 * bytes given are loaded as a hostile snapshot, taken or refused, and the
 * events go on from whatever the device holds).
 * Frames the device sends must be whole: a vnet header and an Ethernet
 * header at least, E1000E_TX_MAX bytes at most.
 *
 * FUZZ_ARGS: -close_fd_mask=2
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/virtio_fuzz.h"
#include "vmm/nic/e1000e_int.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/util/log.h"

#define FRAMES_MAX 8u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fbe {
	struct net_backend be;
	const uint8_t *frame[FRAMES_MAX]; /* into the input */
	size_t len[FRAMES_MAX];
	unsigned int head, n;
};

static void fbe_ready(struct fbe *f)
{
	uint64_t v = 1;

	if (f->n) {
		if (write(f->be.fd, &v, sizeof(v)) < 0)
			abort();
	} else if (read(f->be.fd, &v, sizeof(v)) < 0 && errno != EAGAIN) {
		abort();
	}
}

static ssize_t fbe_recv(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	struct fbe *f = (struct fbe *)be;
	size_t l, done = 0;
	const uint8_t *p;

	if (!f->n)
		return -EAGAIN;
	p = f->frame[f->head];
	l = f->len[f->head];
	f->head = (f->head + 1) % FRAMES_MAX;
	f->n--;
	for (int i = 0; i < iovcnt && done < l; i++) {
		size_t c = iov[i].iov_len < l - done ? iov[i].iov_len : l - done;

		memcpy(iov[i].iov_base, p + done, c);
		done += c;
	}
	fbe_ready(f);
	return (ssize_t)l; /* the whole length, even when truncated (a tap's) */
}

static int fbe_send(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	volatile uint8_t x = 0;
	size_t len = 0;

	(void)be;
	for (int i = 0; i < iovcnt; i++) {
		len += iov[i].iov_len;
		for (size_t j = 0; j < iov[i].iov_len; j += 61)
			x ^= ((const uint8_t *)iov[i].iov_base)[j];
		if (iov[i].iov_len)
			x ^= ((const uint8_t *)iov[i].iov_base)[iov[i].iov_len - 1];
	}
	if (len < NET_VNET_HDR_LEN + 14 || len > NET_VNET_HDR_LEN + E1000E_TX_MAX)
		__builtin_trap();   /* not a frame */
	return x & 1 ? 0 : -EAGAIN; /* some sends fail, as a full tap's do */
}

static void fbe_destroy(struct net_backend *be)
{
	close(be->fd);
	free(be);
}

static const struct net_backend_ops fbe_ops = {
    .recv = fbe_recv, .send = fbe_send, .destroy = fbe_destroy};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "fuzz", NULL);
	return 0;
}

static void reg_wr(uint64_t bar0, uint32_t off, uint32_t v)
{
	mmio_wr(bar0 + off, v, 4);
}

/* the rings as a driver leaves them after e1000_configure() */
static void setup(uint64_t bar0, uint8_t s, int slot)
{
	reg_wr(bar0, E_TDBAL, 0);
	reg_wr(bar0, E_TDLEN, 64 * 16);
	reg_wr(bar0, E_TCTL, TCTL_EN);
	reg_wr(bar0, E_RDBAL, 0x400);
	reg_wr(bar0, E_RDLEN, 64 * 16);
	reg_wr(bar0, E_RDT, 63);
	reg_wr(bar0, E_RFCTL, s & 1 ? RFCTL_EXTEN : 0);
	reg_wr(bar0, E_PSRCTL, 1 | 4u << 8 | 4u << 16 | 4u << 24);
	reg_wr(bar0, E_RCTL,
	       RCTL_EN | RCTL_BAM | RCTL_UPE | RCTL_SECRC | (s & 8 ? RCTL_DTYP_PS | RCTL_LPE : 0));
	reg_wr(bar0, E_RXCSUM, RXCSUM_IPOFL | RXCSUM_TUOFL);
	if (s & 4) {
		reg_wr(bar0, E_IVAR, 0x8 | 0x9 << 8 | 0xa << 16 | 1u << 31);
		reg_wr(bar0, E_EIAC, ICR_RXQ0 | ICR_TXQ0);
		reg_wr(bar0, E_IAM, ~(0x1fu << 20) | ICR_OTHER);
		reg_wr(bar0, E_CTRL_EXT, CTRL_EXT_EIAME);
	}
	if (s & 2) {
		uint64_t bar3 = ecam_rd(slot, PCI_BASE_ADDRESS_3, 4) & ~0xfull;

		for (unsigned int i = 0; i < E1000E_MSIX_VECS; i++) {
			mmio_wr(bar3 + 16 * i, 0xfee00000u, 4);
			mmio_wr(bar3 + 16 * i + 8, 0x40 + i, 4);
			mmio_wr(bar3 + 16 * i + 12, 0, 4);
		}
		for (uint8_t c = (uint8_t)ecam_rd(slot, PCI_CAPABILITY_LIST, 1); c;
		     c = (uint8_t)ecam_rd(slot, c + 1, 1))
			if (ecam_rd(slot, c, 1) == PCI_CAP_ID_MSIX)
				ecam_wr(slot, c + 2, PCI_MSIX_FLAGS_ENABLE, 2);
	}
	reg_wr(bar0, E_IMS, 0x01ffffff);
}

/* 's': save, load, save gives the same bytes; then the input's bytes. */
static void snap_event(struct e1000e *e, const uint8_t *p, size_t len)
{
	struct snap_buf a = {0}, b = {0};
	struct snap_cur c;

	if (e1000e_save(e, &a))
		abort();
	c = snap_cur_make(a.p, a.len);
	if (!e1000e_load(e, &c) &&
	    (c.left || e1000e_save(e, &b) || b.len != a.len || memcmp(a.p, b.p, a.len)))
		abort(); /* a state it took does not save as it was */
	snap_buf_release(&a);
	snap_buf_release(&b);
	c = snap_cur_make(p, len);
	(void)e1000e_load(e, &c);
}

static void events(struct e1000e *e, struct fbe *f, uint8_t *ram, uint64_t bar0, const uint8_t *d,
		   size_t n, size_t i)
{
	unsigned int turns = 0;

	while (i < n && turns < 64) {
		uint8_t op = d[i++];
		size_t l;

		if (op == 'w' && i + 6 <= n) {
			uint32_t v;

			memcpy(&v, d + i + 2, 4);
			reg_wr(bar0, (uint32_t)(d[i] | d[i + 1] << 8) * 4 % E1000E_MMIO_SIZE, v);
			i += 6;
		} else if (op == 'r' && i + 2 <= n) {
			(void)mmio_rd(
			    bar0 + (uint32_t)(d[i] | d[i + 1] << 8) * 4 % E1000E_MMIO_SIZE, 4);
			i += 2;
		} else if (op == 'f' && i + 2 <= n) {
			l = d[i] | (size_t)d[i + 1] << 8;
			i += 2;
			l = l < n - i ? l : n - i;
			if (f->n < FRAMES_MAX) {
				unsigned int k = (f->head + f->n++) % FRAMES_MAX;

				f->frame[k] = d + i;
				f->len[k] = l;
				fbe_ready(f);
			}
			i += l;
		} else if (op == 'm') {
			fuzz_ram_write(ram, VFZ_RAM, d, n, &i);
		} else if (op == 's' && i + 2 <= n) {
			l = d[i] | (size_t)d[i + 1] << 8;
			i += 2;
			l = l < n - i ? l : n - i;
			snap_event(e, d + i, l);
			i += l;
		} else if (op == 't') {
			e1000e_io_turn(e, 0);
			turns++;
		} else {
			break;
		}
	}
	e1000e_io_turn(e, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct net_attach att = {.name = "fuzz", .mode = NET_MODE_TAP, .n_queues = 1};
	struct guest_mem mem;
	struct pci_host h;
	struct e1000e *e = NULL;
	struct fbe *f;
	uint8_t *ram;
	size_t n, i;
	uint64_t bar0;
	int slot;

	if (size < 3)
		return 0;
	n = data[1] | (size_t)data[2] << 8;
	n = n < size - 3 ? n : size - 3;
	ram = vfz_ram(&mem, data + 3, n);
	i = 3 + n;
	tbus_n = 0;
	if (thost_init(&h, &mem))
		abort();
	f = calloc(1, sizeof(*f));
	f->be =
	    (struct net_backend){&fbe_ops, eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), true, "fuzz"};
	att.mac[0] = 2;
	att.be[0] = &f->be;
	if (e1000e_create(&e, &h, &att, false))
		abort();
	slot = e1000e_pci(e)->slot;
	bar0 = ecam_rd(slot, PCI_BASE_ADDRESS_0, 4) & ~0xfull;
	ecam_wr(slot, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
	setup(bar0, data[0], slot);
	events(e, f, ram, bar0, data, size, i);
	e1000e_destroy(e);
	pci_host_release(&h);
	free(ram);
	return 0;
}
