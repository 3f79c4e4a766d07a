// SPDX-License-Identifier: MIT
/* The "bootorder" fw_cfg file for SeaBIOS and OVMF (fw_bootorder_text):
 * KubeVirt's bootOrder rules in QEMU's Open Firmware paths. */
#include <string.h>

#include "tests/lib/test.h"
#include "vmm/boot/fw_platform.h"

/* Disks as the manifest lists them: boot orders and their PCI slots. */
static const struct fw_boot_disk three[] = {{0, 2, 0}, {5, 3, 0}, {1, 4, 0}};
static const struct fw_boot_disk none[] = {{0, 2, 0}, {0, 3, 0}};

static void test_seabios(void)
{
	char buf[512];

	/* only the disks with a bootOrder, lowest first; HALT ends the list */
	CHECK_EQ_U64(fw_bootorder_text(buf, sizeof(buf), three, 3, NULL, FW_BOOTORDER_SEABIOS),
		     strlen(buf));
	CHECK_STR(buf, "/pci@i0cf8/disk@4\n/pci@i0cf8/disk@3\nHALT\n");
	/* none has one: every disk in the VM's order, no HALT */
	fw_bootorder_text(buf, sizeof(buf), none, 2, NULL, FW_BOOTORDER_SEABIOS);
	CHECK_STR(buf, "/pci@i0cf8/disk@2\n/pci@i0cf8/disk@3\n");
	/* a first line (vmlet probe's option ROM) */
	fw_bootorder_text(buf, sizeof(buf), none, 1, "/rom@genroms/pvh.bin", FW_BOOTORDER_SEABIOS);
	CHECK_STR(buf, "/rom@genroms/pvh.bin\n/pci@i0cf8/disk@2\n");
}

static void test_ovmf(void)
{
	char buf[512];
	const struct fw_boot_disk hex[] = {{2, 0x1a, 0}, {1, 0x11, 0}, {0, 5, 0}};

	/* QEMU's virtio-blk path; no HALT (OVMF's parser knows no such line) */
	fw_bootorder_text(buf, sizeof(buf), three, 3, NULL, FW_BOOTORDER_OVMF);
	CHECK_STR(buf, "/pci@i0cf8/scsi@4/disk@0,0\n/pci@i0cf8/scsi@3/disk@0,0\n");
	fw_bootorder_text(buf, sizeof(buf), none, 2, NULL, FW_BOOTORDER_OVMF);
	CHECK_STR(buf, "/pci@i0cf8/scsi@2/disk@0,0\n/pci@i0cf8/scsi@3/disk@0,0\n");
	/* slots in hex, as Open Firmware unit addresses are */
	fw_bootorder_text(buf, sizeof(buf), hex, 3, NULL, FW_BOOTORDER_OVMF);
	CHECK_STR(buf, "/pci@i0cf8/scsi@11/disk@0,0\n/pci@i0cf8/scsi@1a/disk@0,0\n");
}

/* SATA disks as QEMU names them for both firmwares: the AHCI function,
 * then the port (SeaBIOS's bootprio_find_ata_device() glob). */
static void test_sata(void)
{
	char buf[256];
	const struct fw_boot_disk mixed[] = {{2, 3, 0}, {1, 5, 2}, {3, 5, 1}};

	fw_bootorder_text(buf, sizeof(buf), mixed, 3, NULL, FW_BOOTORDER_SEABIOS);
	CHECK_STR(buf, "/pci@i0cf8/pci8086,2922@5/drive@1/disk@0\n/pci@i0cf8/disk@3\n"
		       "/pci@i0cf8/pci8086,2922@5/drive@0/disk@0\nHALT\n");
	fw_bootorder_text(buf, sizeof(buf), mixed, 3, NULL, FW_BOOTORDER_OVMF);
	CHECK_STR(buf, "/pci@i0cf8/pci8086,2922@5/drive@1/disk@0\n/pci@i0cf8/scsi@3/disk@0,0\n"
		       "/pci@i0cf8/pci8086,2922@5/drive@0/disk@0\n");
}

static void test_edges(void)
{
	char buf[80];
	const struct fw_boot_disk noslot[] = {{1, 0, 0}, {2, 6, 0}, {3, -19, 0}};
	struct fw_boot_disk many[64];

	/* a disk without a PCI function is left out */
	fw_bootorder_text(buf, sizeof(buf), noslot, 3, NULL, FW_BOOTORDER_SEABIOS);
	CHECK_STR(buf, "/pci@i0cf8/disk@6\nHALT\n");
	/* equal orders keep the manifest's order */
	fw_bootorder_text(buf, sizeof(buf), (struct fw_boot_disk[]){{7, 9, 0}, {7, 8, 0}}, 2, NULL,
			  FW_BOOTORDER_SEABIOS);
	CHECK_STR(buf, "/pci@i0cf8/disk@9\n/pci@i0cf8/disk@8\nHALT\n");
	/* too many for the buffer: whole lines only, NUL-terminated, in bounds */
	for (unsigned int i = 0; i < 64; i++)
		many[i] = (struct fw_boot_disk){0, (int)i + 1, 0};
	CHECK(fw_bootorder_text(buf, sizeof(buf), many, 64, NULL, FW_BOOTORDER_OVMF) < sizeof(buf));
	CHECK(strlen(buf) > 0 && buf[strlen(buf) - 1] == '\n');
	CHECK_EQ_U64(fw_bootorder_text(buf, 0, many, 64, NULL, FW_BOOTORDER_OVMF), 0);
}

int main(void)
{
	TEST_RUN(test_seabios);
	TEST_RUN(test_ovmf);
	TEST_RUN(test_sata);
	TEST_RUN(test_edges);
	return test_summary();
}
