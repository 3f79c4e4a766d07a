// SPDX-License-Identifier: MIT
/*
 * vblk.c - virtio-blk disks (PCI, modern transport) as EFI block devices:
 * each one gets its own rings (fw_virtio_init_q) and becomes a struct
 * blkdev for disk.c (BlockIo, DiskIo, GPT partitions, SimpleFileSystem).
 * Requests are synchronous and polled (no interrupts in the firmware);
 * small reads go through a read cache of 64 KiB windows (blk.h).
 * Device path: PciRoot(0)/Pci(dev,fn).
 */
#include "firmware/abi.h"
#include "firmware/efi/fw.h"
#include "firmware/lib/ahci.h"
#include "firmware/lib/pci.h"
#include "firmware/lib/virtio.h"

#define VBLK_S_OK  0
#define VBLK_CHUNK (1u << 20) /* bytes per request */

struct vblk {
	struct fw_virtio v;
	struct fw_pci_fn fn;
	struct blkdev dev;
	struct fw_vq *q;
	struct {
		uint32_t type, reserved;
		uint64_t sector;
	} hdr;
	uint8_t status;
	struct blkdev raw;
	struct blk_cache cache;
};

static int vblk_read(const struct blkdev *dev, uint64_t lba, uint64_t count, void *buf)
{
	struct vblk *b = dev->ctx;
	uint8_t *out = buf;

	while (count) {
		uint64_t n = count < VBLK_CHUNK / 512 ? count : VBLK_CHUNK / 512;
		struct fw_virtio_buf bufs[3] = {
		    {&b->hdr, sizeof(b->hdr), false},
		    {out, (uint32_t)(n * 512), true},
		    {&b->status, 1, true},
		};

		b->hdr.type = FW_VIRTIO_BLK_T_IN;
		b->hdr.reserved = 0;
		b->hdr.sector = lba;
		b->status = 0xff;
		if (fw_virtio_submit(&b->v, bufs, 3) < 0 || b->status != VBLK_S_OK)
			return -FW_EIO;
		out += n * 512;
		lba += n;
		count -= n;
	}
	return 0;
}

static void vblk_add(const struct fw_pci_fn *f, uint64_t *mmio_next)
{
	struct vblk *b = efi_alloc(sizeof(*b));
	uint64_t qaddr;
	struct {
		struct dp_acpi root;
		struct dp_pci pci;
		struct efi_device_path end;
	} __attribute__((packed)) dp;

	if (!b || mem_allocate_pages(&efi_mem, AllocateAnyPages, EfiBootServicesData,
				     sizeof(struct fw_vq) / EFI_PAGE_SIZE, &qaddr)) {
		efi_free(b);
		return;
	}
	b->fn = *f;
	b->q = (struct fw_vq *)(uintptr_t)qaddr;
	if (fw_virtio_init_q(&b->v, &b->fn, 0, mmio_next, b->q)) {
		efi_log("virtio-blk 00:%02x.%x: cannot initialise", f->dev, f->fn);
		return;
	}
	b->raw.read = vblk_read;
	b->raw.ctx = b;
	b->raw.block_size = 512;
	b->raw.n_blocks = *(volatile uint64_t *)b->v.device; /* capacity, sectors */
	blk_init_cached(&b->dev, &b->cache, &b->raw, efi_alloc_pages);
	efi_log("virtio-blk 00:%02x.%x: %llu MiB", f->dev, f->fn,
		(unsigned long long)(b->dev.n_blocks >> 11));
	dp_set(&dp.root.h, DP_ACPI, 1, sizeof(dp.root));
	dp.root.hid = 0x0a0341d0; /* PNP0A03 */
	dp.root.uid = 0;
	dp_set(&dp.pci.h, DP_HW, DP_HW_PCI, sizeof(dp.pci));
	dp.pci.function = f->fn;
	dp.pci.device = f->dev;
	dp_set(&dp.end, DP_END_TYPE, DP_END_ALL, 4);
	efi_disk_add(&b->dev, &dp.root.h, NULL);
}

static uint8_t vblk_devfn[32];
static unsigned int vblk_n;

int efi_vblk_devfn(unsigned int n)
{
	return n < vblk_n ? vblk_devfn[n] : -1;
}

void efi_virtio_init(uint64_t ecam)
{
	static struct fw_pci_fn fns[FW_PCI_MAX_FNS];
	uint64_t next = 0xd0000000ull; /* unprogrammed BARs: upper half of the 32-bit window */
	uint32_t slots = 0, len = 0;
	int n;

	if (!ecam)
		return;
	/* the slots in use when the VMM says (vmlet), else all 32 */
	if (efi_port_call(FW_ABI_EFI_PCI_SLOTS, &slots, sizeof(slots), &len) != FW_ABI_EFI_OK ||
	    len != sizeof(slots))
		slots = 0xffffffffu;
	n = fw_pci_scan_slots(ecam, slots, fns, FW_PCI_MAX_FNS);
	efi_log("pci: ECAM at %llx, %d functions", (unsigned long long)ecam, n);
	for (int i = 0; i < n; i++)
		if (fns[i].vendor == FW_VIRTIO_VENDOR && fns[i].device == FW_VIRTIO_DEV_BLK) {
			if (vblk_n < FW_ARRAY_SIZE(vblk_devfn))
				vblk_devfn[vblk_n++] = (uint8_t)(fns[i].dev << 3 | fns[i].fn);
			vblk_add(&fns[i], &next);
		} else if (fns[i].class_code == FW_AHCI_CLASS) {
			efi_sata_add(&fns[i], &next);
		}
}
