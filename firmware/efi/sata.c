// SPDX-License-Identifier: MIT
/*
 * sata.c - SATA disks on an AHCI function (vmlet's ICH9 AHCI, QEMU q35's
 * at 00:1f.2) as EFI block devices, with the polled driver of
 * firmware/lib/ahci.c: each implemented port where an ATA disk answers
 * IDENTIFY DEVICE becomes a struct blkdev for disk.c, behind the read
 * cache of blk.h, as a virtio-blk disk does (vblk.c); so does each ATAPI
 * drive (CD-ROM) with a medium, in 2048-byte blocks (disk.c then looks for
 * El Torito EFI images on it). One command slot a port; reads of at most
 * SATA_CHUNK a command with READ DMA EXT or, on a CD, READ(10) in PACKET,
 * synchronous. Device path: PciRoot(0)/Pci(dev,fn)/Sata(port,0xFFFF,0),
 * as OVMF's.
 *
 * The drive is untrusted: its capacity comes from IDENTIFY
 * (fw_ahci_id_sectors: 512-byte logical sectors only, LBA48 range) or READ
 * CAPACITY (fw_atapi_capacity: 2048-byte blocks only), each read must
 * transfer exactly the bytes asked for (PRDBC), and a port that errs or
 * hangs fails the read with -FW_EIO.
 */
#include "firmware/efi/fw.h"
#include "firmware/lib/ahci.h"

#define SATA_CHUNK  (1u << 20) /* bytes per command (count fits 16 bits) */
#define SATA_BOUNCE 4096u      /* for a buffer the HBA cannot take (odd) */

struct sata_disk {
	struct fw_ahci_port p;
	uint8_t *bounce; /* SATA_BOUNCE bytes */
	uint8_t sense[18] __attribute__((aligned(2)));
	struct blkdev dev, raw;
	struct blk_cache cache;
};

/* the ports started, stopped at ExitBootServices (their lists are boot
 * services memory, the OS's from then on) */
static struct fw_ahci_port *sata_up[FW_AHCI_MAX_PORTS];
static unsigned int sata_n_up;

/* One READ DMA EXT of n sectors at lba into buf (n * 512 <= SATA_CHUNK),
 * or on a CD one READ(10) of n blocks (capacity < 2^32 blocks). */
static int sata_read1(struct sata_disk *d, uint64_t lba, uint32_t n, void *buf)
{
	if (d->raw.block_size == FW_ATAPI_BLOCK)
		return fw_atapi_read(&d->p, (uint32_t)lba, n, buf, d->sense) ? -FW_EIO : 0;
	fw_ahci_build(&d->p, 0, FW_ATA_READ_DMA_EXT, lba, n, buf, n * 512);
	return fw_ahci_run1(&d->p, n * 512) ? -FW_EIO : 0;
}

static int sata_read(const struct blkdev *dev, uint64_t lba, uint64_t count, void *buf)
{
	struct sata_disk *d = dev->ctx;
	uint8_t *out = buf;
	bool direct = !((uintptr_t)buf & 1); /* PRD DBA: word aligned */
	uint32_t bs = dev->block_size, max = (direct ? SATA_CHUNK : SATA_BOUNCE) / bs;

	while (count) {
		uint32_t n = count < max ? (uint32_t)count : max;
		int ret = sata_read1(d, lba, n, direct ? out : d->bounce);

		if (ret)
			return ret;
		if (!direct)
			memcpy(out, d->bounce, n * bs);
		out += n * bs;
		lba += n;
		count -= n;
	}
	return 0;
}

static void sata_install(struct sata_disk *d, const struct fw_pci_fn *f, uint32_t port)
{
	struct {
		struct dp_acpi root;
		struct dp_pci pci;
		struct dp_sata sata;
		struct efi_device_path end;
	} __attribute__((packed)) dp;

	dp_set(&dp.root.h, DP_ACPI, 1, sizeof(dp.root));
	dp.root.hid = 0x0a0341d0; /* PNP0A03 */
	dp.root.uid = 0;
	dp_set(&dp.pci.h, DP_HW, DP_HW_PCI, sizeof(dp.pci));
	dp.pci.function = f->fn;
	dp.pci.device = f->dev;
	dp_set(&dp.sata.h, DP_MSG, DP_MSG_SATA, sizeof(dp.sata));
	dp.sata.hba_port = (uint16_t)port;
	dp.sata.pm_port = 0xffff; /* attached directly */
	dp.sata.lun = 0;
	dp_set(&dp.end, DP_END_TYPE, DP_END_ALL, 4);
	efi_disk_add(&d->dev, &dp.root.h, NULL);
}

/* The capacity of the drive on d's started port (sig: its kind) in
 * blocks of *bs bytes; 0: nothing usable. */
static uint64_t sata_capacity(struct sata_disk *d, uint32_t sig, uint32_t *bs)
{
	if (sig == FW_AHCI_SIG_ATAPI) {
		*bs = FW_ATAPI_BLOCK;
		return fw_atapi_capacity(&d->p, d->bounce, d->sense);
	}
	*bs = 512;
	fw_ahci_build(&d->p, 0, FW_ATA_IDENTIFY, 0, 0, d->bounce, 512);
	return fw_ahci_run1(&d->p, 512) ? 0 : fw_ahci_id_sectors((const uint16_t *)d->bounce);
}

/* Port n of abar: an ATA disk with a usable capacity, a CD-ROM drive with
 * a medium, or nothing (0 when it was added). */
static int sata_port(const struct fw_pci_fn *f, volatile uint8_t *abar, uint32_t n)
{
	struct sata_disk *d = efi_alloc(sizeof(*d));
	uint8_t *mem = efi_alloc_pages(2 * EFI_PAGE_SIZE);
	uint64_t blocks;
	uint32_t sig, bs;

	if (!d || !mem)
		goto fail;
	memset(d, 0, sizeof(*d));
	memset(mem, 0, EFI_PAGE_SIZE);
	/* page 0: command list (1 KiB aligned), received FISes, the table */
	d->p.clist = (struct fw_ahci_cmd_hdr *)mem;
	d->p.rfis = mem + 1024;
	d->p.tbl = (struct fw_ahci_cmd_tbl *)(mem + 2048);
	d->p.n_slots = 1;
	d->bounce = mem + EFI_PAGE_SIZE;
	sig = fw_ahci_port_start(&d->p, abar, n);
	if (!sig)
		goto fail;
	blocks = sata_capacity(d, sig, &bs);
	if (!blocks) {
		efi_log("sata 00:%02x.%x port %u: %s", f->dev, f->fn, n,
			bs == 512 ? "no usable ATA disk" : "CD-ROM without a usable medium");
		fw_ahci_port_stop(&d->p);
		goto fail;
	}
	d->raw.read = sata_read;
	d->raw.ctx = d;
	d->raw.block_size = bs;
	d->raw.n_blocks = blocks;
	blk_init_cached(&d->dev, &d->cache, &d->raw, efi_alloc_pages);
	efi_log("sata 00:%02x.%x port %u: %s%llu MiB", f->dev, f->fn, n, bs == 512 ? "" : "CD-ROM ",
		(unsigned long long)(blocks * bs >> 20));
	sata_install(d, f, n);
	if (sata_n_up < FW_AHCI_MAX_PORTS)
		sata_up[sata_n_up++] = &d->p;
	return 0;
fail:
	if (mem)
		mem_free_pages(&efi_mem, (uint64_t)(uintptr_t)mem, 2);
	efi_free(d);
	return -1;
}

void efi_sata_add(const struct fw_pci_fn *f, uint64_t *mmio_next)
{
	uint32_t ports;
	volatile uint8_t *abar = fw_ahci_hba_init(f, mmio_next, &ports);

	if (!abar) {
		efi_log("sata 00:%02x.%x: no AHCI memory BAR", f->dev, f->fn);
		return;
	}
	for (uint32_t n = 0; n < FW_AHCI_MAX_PORTS; n++)
		if (ports & (1u << n))
			(void)sata_port(f, abar, n);
}

void efi_sata_stop(void)
{
	for (unsigned int i = 0; i < sata_n_up; i++)
		fw_ahci_port_stop(sata_up[i]);
	sata_n_up = 0;
}
