/* SPDX-License-Identifier: MIT */
/*
 * snapshot_fuzz.c - libFuzzer target for the snapshot's state file as
 * `vmlet run --restore` reads it (vmm/snapshot/snap_file.c, snap_buf.c):
 * the whole check of header and sections, then every section's items
 * walked the way the loaders walk them (nested items three deep, fixed
 * sizes asked for by tag), the PCI function loader (vmm/dev/pci_snap.c)
 * fed each device section against a function with MSI-X as vmlet builds
 * them, and fw_cfg's loader (vmm/dev/fw_cfg.c) each device section
 * against a fresh fw_cfg, then a few reads from where it was left; after
 * each PCI slot item, the AHCI loader (vmm/dev/ahci/ahci_snap.c, behind the
 * function's PCI state and without it) against a controller as the seed
 * probe-sata-cdrom-state's VM has it (an ATA disk of 4 MiB on port 0, a
 * CD-ROM with a 2 MiB medium on port 1: images in /tmp, so the disks'
 * identity differs), held by ahci_freeze() so that its I/O threads never
 * fetch a command. Each device section also goes to a Q35 chipset with SMM
 * (vmm/dev/q35.c: slot 0 the MCH's and 31 the LPC's PCI state, then q35's
 * PM timer and SMI state; made anew per section, as a restore's is) and
 * to the variable flash's loader (vmm/dev/pflash.c: an 8 KiB store, with
 * and without the saved bytes adopted, also behind one item as flash.c's
 * code identity comes first), then a few reads of the flash, and to the
 * TPM's loader (vmm/dev/tpm/tpm_snap.c: the registers and swtpm's blobs as
 * checked before swtpm sees them; a fresh TIS and CRB given what passes,
 * then read: no swtpm here).
 * The manifests section (vmm/snapshot/snap_input.c, what
 * `vmlet run --restore DIR` without -f reads) is taken apart and its texts
 * resolved as that restore resolves them (spec_resolve_config() with
 * spec_options.texts, a disk root that does not exist).
 * Input: the file's bytes. The seeds in
 * tests/fuzz/corpus/snapshot_fuzz/ are state files vmlet wrote.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/vm/bus.h"
#include "vmm/dev/ahci/ahci.h"
#include "vmm/disk/blk.h"
#include "vmm/dev/devices.h"
#include "vmm/dev/fw_cfg.h"
#include "vmm/dev/pci.h"
#include "vmm/dev/pflash.h"
#include "vmm/dev/q35.h"
#include "vmm/dev/tpm/tpm_snap.h"
#include "vmm/dev/tpm/tpm_swtpm.h"
#include "tests/fuzz/tpm_fuzz.h"
#include "vmm/vm/device.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/snapshot/snap_file.h"
#include "vmm/snapshot/snap_input.h"
#include "spec/spec.h"
#include "vmm/vm_config.h"
#include "vmm/vm/device.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
/* fw_cfg's loader on a fresh device, then reads where it left off. */
static void fuzz_fw_cfg(struct snap_cur c)
{
	struct fw_cfg *fc;
	uint8_t b[16];

	if (fw_cfg_create(&fc, NULL))
		abort();
	if (!fw_cfg_device.load(fc, &c))
		for (unsigned int i = 0; i < sizeof(b); i++)
			fw_cfg_pio_read(fc, FW_CFG_PORT_DATA, &b[i], 1);
	fw_cfg_destroy(fc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct bus pio35, mmio35;
static struct pflash pf;
static uint8_t pf_store[8192];

/* q35 with SMM, new for each section: the slots' PCI state as
 * pci_devices.c orders it, q35's own after the LPC function's. */
static void fuzz_q35(struct snap_cur c)
{
	const struct device_env env = {.pio = &pio35, .mmio = &mmio35};
	struct pci_host h;
	struct q35 *q;
	uint32_t slot;

	if (pci_host_init(&h, &env) || q35_create(&q, &h, &pio35) || q35_enable_smm(q, NULL))
		abort();
	if (!pci_host_load(&h, &c))
		while (!snap_cur_want(&c, 0x100, &slot, sizeof(slot))) {
			struct pci_dev *d = slot == 0 ? &h.bridge : q35_lpc_dev(q);

			if ((slot != 0 && slot != 31) || pci_dev_load(&h, d, &c))
				break;
			if (slot == 31)
				q35_load(q, &c);
		}
	q35_destroy(q);
	pci_host_release(&h);
}

/* The variable flash: adopting the saved bytes and comparing them, at
 * the section's first item and after it; then reads in its mode. */
static void fuzz_pflash(struct snap_cur c)
{
	struct snap_cur d, body;
	uint32_t tag;
	uint8_t b[4];

	for (int skip = 0; skip < 2; skip++) {
		d = c;
		if (skip && snap_cur_next(&d, &tag, &body))
			return;
		memset(pf_store, 0x5a, sizeof(pf_store));
		for (int adopt = 1; adopt >= 0; adopt--) {
			struct snap_cur e = d;

			if (!pflash_load(&pf, &e, adopt, "fuzz"))
				pflash_ops.read(&pf, 0x10, b, sizeof(b));
		}
	}
}

static struct tpm_tis tis;
static struct tpm_crb crb;

/* The TPM's loader without swtpm (tpm_snap.h): both interfaces, what it
 * takes applied to a fresh one, which must then hold together. */
static void fuzz_tpm(struct snap_cur c)
{
	struct tpm_snap_regs r;
	struct tpm_snap_blobs bl;
	uint8_t b[4];

	for (int k = 0; k < 2; k++) {
		struct tpm_snap_if i = {.tis = k == 0, .t = &tis, .c = &crb};
		struct snap_cur d = c;

		if (tpm_snap_parse(&i, &d, &r, &bl))
			continue;
		for (int n = 0; n < 3; n++)
			if (bl.len[n] > TPM_SWTPM_BLOB_MAX ||
			    (bl.len[n] && (bl.p[n] < c.p || bl.p[n] + bl.len[n] > c.p + c.left)))
				abort();
		tpm_tis_init(&tis, tpm_fuzz_on_submit, NULL);
		tpm_crb_init(&crb, 0, tpm_fuzz_on_submit, NULL);
		tpm_snap_apply(&i, &r);
		if (tis.out > tis.rsp_len || tis.rsp_len > TPM_TIS_BUF_SIZE)
			abort();
		if (i.tis)
			for (unsigned int n = 0; n < sizeof(b); n++)
				tpm_tis_ops.read(&tis, TPM_TIS_DATA_FIFO, &b[n], 1);
		else
			tpm_crb_ops.read(&crb, TPM_CRB_CTRL_STS, b, 4);
		tpm_tis_release(&tis);
		tpm_crb_release(&crb);
	}
}

static struct bus pio, mmio;
static struct pci_host host;
static struct pci_dev dev;
static struct ahci *ahci;

/* A 2^shift-byte image in /tmp, open (the file itself unlinked). */
static struct blk *fuzz_image(unsigned int shift, bool ro)
{
	char path[] = "/tmp/vmlet-snapshot-fuzz.XXXXXX";
	int fd = mkstemp(path);
	struct blk *be;

	if (fd < 0 || ftruncate(fd, 1 << shift) || blk_open(&be, path, ro, BLK_CACHE_WRITEBACK))
		abort();
	unlink(path);
	close(fd);
	return be;
}

static void fuzz_ahci_setup(void)
{
	const struct ahci_disk_params disk = {.name = "d"}, cd = {.name = "cd"};

	if (ahci_create(&ahci, &host, -1) ||
	    ahci_attach_disk(ahci, 0, fuzz_image(22, false), &disk) ||
	    ahci_attach_cdrom(ahci, 1, fuzz_image(21, true), &cd) || ahci_freeze(ahci))
		abort(); /* held: no command is fetched from the NULL RAM */
}

/* After each slot item: the AHCI function's PCI state and the
 * controller's, and the controller's alone. */
static void fuzz_ahci(struct snap_cur c)
{
	struct snap_cur body, d;
	uint32_t tag;

	while (!snap_cur_next(&c, &tag, &body)) {
		if (tag != 0x100)
			continue;
		d = c;
		if (!pci_dev_load(&host, ahci_pci(ahci), &d))
			ahci_load(ahci, &d);
		d = c;
		ahci_load(ahci, &d);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const struct device_env env = {.pio = &pio, .mmio = &mmio};

	(void)argc;
	(void)argv;
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "snapshot-fuzz", NULL);
	if (bus_init(&pio, "pio") || bus_init(&mmio, "mmio") || pci_host_init(&host, &env))
		abort();
	if (bus_init(&pio35, "pio") || bus_init(&mmio35, "mmio") ||
	    pflash_init(&pf, pf_store, sizeof(pf_store), 4096))
		abort();
	pci_dev_init(&dev, 0x1af4, 0x1041, 0x020000, 1, 0x1af4, 1, NULL, NULL);
	if (pci_bar_add(&dev, 0, 0x8000, NULL, NULL) || pci_msix_init(&dev, 3, 0, 0x4000, 0x5000) ||
	    pci_dev_add(&host, &dev))
		abort();
	fuzz_ahci_setup();
	return 0;
}

/* Every item, and the items inside each, down to depth. */
static unsigned int walk(struct snap_cur c, int depth)
{
	struct snap_cur body;
	uint32_t tag, v32;
	uint64_t v64;
	unsigned int n = 0;

	while (!snap_cur_next(&c, &tag, &body)) {
		n++;
		if (depth > 0)
			n += walk(body, depth - 1);
		if (!snap_cur_u32(&body, &v32) && !snap_cur_u64(&body, &v64))
			n += (v32 ^ (uint32_t)v64) == tag;
	}
	return n;
}

static void fuzz_report(void *ctx, const struct spec_message *m)
{
	(void)ctx;
	(void)m;
}

/* The recorded manifests, resolved as a restore without -f does. */
static void fuzz_inputs(const struct snap_file *f)
{
	struct spec_options so = {.disk_root = "/nonexistent/vmlet-fuzz", .report = fuzz_report};
	struct spec_text *t = NULL;
	struct vm_config cfg;
	unsigned int n = 0;
	char err[256];
	int ret = snap_input_texts(f, &t, &n, err, sizeof(err));

	if (ret == -EBADMSG && (!memchr(err, 0, sizeof(err)) || !err[0]))
		abort(); /* every refusal says why */
	if (ret || !n) {
		free(t);
		return;
	}
	so.texts = t;
	so.n_texts = n;
	if (!spec_resolve_config(&so, &cfg))
		vm_config_release(&cfg);
	free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_file f;
	char err[256];
	volatile unsigned int sink = 0;

	if (snap_file_parse(data, size, &f, err, sizeof(err))) {
		if (!memchr(err, 0, sizeof(err)) || !err[0])
			abort(); /* every refusal says why */
		return 0;
	}
	fuzz_inputs(&f);
	for (unsigned int i = 0; i < f.n; i++) {
		const struct snap_section *s = &f.sec[i];
		struct snap_cur c = snap_cur_make(s->data, s->len), name;
		uint32_t slot;

		if (s->data < data || s->data + s->len > data + size)
			abort();
		sink += walk(c, 3);
		if (s->type != SNAP_SEC_DEVICE || snap_cur_want_any(&c, 0, &name))
			continue;
		fuzz_fw_cfg(c);
		fuzz_ahci(c);
		fuzz_q35(c);
		fuzz_pflash(c);
		fuzz_tpm(c);
		if (pci_host_load(&host, &c))
			continue;
		/* pci_devices.c's order: a slot number, then the function */
		if (!snap_cur_want(&c, 0x100, &slot, sizeof(slot)) &&
		    !pci_dev_load(&host, &dev, &c))
			pci_dev_resync(&host, &dev);
	}
	(void)sink;
	snap_file_release(&f);
	return 0;
}
