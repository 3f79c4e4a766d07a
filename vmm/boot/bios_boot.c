// SPDX-License-Identifier: MIT
/*
 * bios_boot.c - BIOS boot through SeaBIOS (bios_boot.h): the image in low
 * RAM and the platform description in fw_cfg.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "vmm/boot/bios_boot.h"
#include "vmm/boot/fw_platform.h"
#include "vmm/dev/fw_cfg.h"
#include "vmm/util/log.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

#define BIOS_MIN_SIZE (64u << 10)
#define BIOS_MAX_SIZE (256u << 10) /* 0xC0000-0xFFFFF */

/* Copy the image to the end of the first MiB. */
static int bios_load_image(struct vm *vm, const char *path)
{
	struct stat st;
	uint8_t *dst;
	size_t done = 0, len;
	ssize_t r;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return error_errno(-ENOENT,
				   "bios: no SeaBIOS image at %s: a BIOS VM needs Debian's "
				   "'seabios' package (apt-get install seabios)",
				   path);
	if (fd < 0)
		return error_errno(-errno, "bios: cannot open the BIOS image '%s'", path);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < BIOS_MIN_SIZE ||
	    st.st_size > BIOS_MAX_SIZE || (st.st_size & 0xffff)) {
		ret = error_errno(-EINVAL,
				  "bios: '%s' is not a BIOS image (64 KiB to 256 KiB, in "
				  "64 KiB steps)",
				  path);
		goto out;
	}
	len = (size_t)st.st_size;
	dst = guest_mem_ptr(&vm->mem, ARCH_HIGH_LOAD_GPA - len, len);
	if (!dst) {
		ret = error_errno(-ENOSPC, "bios: no RAM below 1 MiB for the BIOS");
		goto out;
	}
	while (done < len) {
		r = read(fd, dst + done, len - done);
		if (r <= 0) {
			ret = error_errno(r < 0 ? -errno : -EIO, "bios: cannot read '%s'", path);
			goto out;
		}
		done += (size_t)r;
	}
	log_debug("bios: %s (%zu KiB) at 0x%llx", path, len >> 10,
		  (unsigned long long)(ARCH_HIGH_LOAD_GPA - len));
out:
	close(fd);
	return ret;
}

/* A host file (less than max bytes) into fw_cfg file name. */
static int bios_fw_host_file(struct fw_cfg *fc, const char *name, const char *path, size_t max)
{
	uint8_t *buf = malloc(max);
	ssize_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0 || !buf)
		r = fd < 0 ? -errno : -ENOMEM;
	else if ((n = read(fd, buf, max)) < 0)
		r = -errno;
	else
		r = n == 0 ? -EINVAL : (size_t)n == max ? -EFBIG : 0;
	if (!r)
		r = fw_cfg_add_file(fc, name, buf, (size_t)n);
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

/*
 * The payload (a PVH ELF: the probe) through SeaBIOS: its segments in RAM
 * as for a direct boot, and QEMU's PVH option ROM as the first boot
 * device. SeaBIOS runs the ROM at boot time; it takes the memory map from
 * INT 15h E820, finds the RSDP SeaBIOS placed, reads the entry point and
 * command line from fw_cfg (QEMU's FW_CFG_KERNEL_ENTRY, _CMDLINE_SIZE,
 * _CMDLINE_DATA) and enters the payload the PVH way.
 */
static int bios_fw_payload(struct vm *vm, struct fw_cfg *fc)
{
	const char *cmdline = vm->cfg->cmdline ? vm->cfg->cmdline : "";
	uint32_t entry = 0, clen = (uint32_t)strlen(cmdline) + 1;
	int r;

	r = arch_pvh_load(vm->mem.r[0].host, vm->mem.r[0].size, vm->opt.payload,
			  vm->opt.payload_len, &entry);
	if (r)
		return error_errno(r, "bios: the payload is not a loadable PVH ELF");
	r = bios_fw_host_file(fc, BIOS_PVH_ROM_FILE, BIOS_PVH_ROM, 64 << 10);
	if (r)
		return error_errno(r,
				   "bios: cannot read QEMU's PVH option ROM %s (Debian package "
				   "qemu-system-data)",
				   BIOS_PVH_ROM);
	r = fw_cfg_add_item(fc, FW_CFG_KERNEL_ENTRY, &entry, 4);
	if (!r)
		r = fw_cfg_add_item(fc, FW_CFG_CMDLINE_SIZE, &clen, 4);
	if (!r)
		r = fw_cfg_add_item(fc, FW_CFG_CMDLINE_DATA, cmdline, clen);
	return r;
}

static int bios_fw_fill(struct vm *vm, struct fw_cfg *fc)
{
	struct arch_e820_entry e820[ARCH_E820_MAX];
	uint16_t sercon = ARCH_COM1_PORT;
	size_t n = 0;
	int r;

	r = arch_e820_firmware(vm->mem.total, e820, ARCH_E820_MAX, &n);
	if (!r)
		r = fw_cfg_add_file(fc, "etc/e820", e820, n * sizeof(e820[0]));
	if (!r && vm->cfg->bios_use_serial)
		r = fw_cfg_add_file(fc, "etc/sercon-port", &sercon, 2);
	if (!r)
		r = fw_platform_fill(vm, fc);
	if (!r && vm->opt.payload)
		r = bios_fw_payload(vm, fc);
	if (!r)
		r = fw_platform_bootorder(vm, fc,
					  vm->opt.payload ? "/rom@" BIOS_PVH_ROM_FILE : NULL,
					  FW_BOOTORDER_SEABIOS);
	return r;
}

static bool bios_has_sata(const struct vm_config *cfg)
{
	for (unsigned int i = 0; cfg && i < cfg->n_disks; i++)
		if (cfg->disks[i].bus && strcmp(cfg->disks[i].bus, "sata") == 0)
			return true;
	return false;
}

int bios_boot_setup(struct vm *vm, struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	const char *path = getenv("VMLET_SEABIOS");
	int r;

	if (!path || !*path)
		path = bios_has_sata(vm->cfg) ? BIOS_IMAGE_AHCI : BIOS_IMAGE_DEFAULT;
	if (!vm->fw_cfg)
		return error_errno(-ENODEV, "bios: the VM has no fw_cfg device");
	r = bios_load_image(vm, path);
	if (!r)
		r = bios_fw_fill(vm, vm->fw_cfg);
	if (r && r != -EBADMSG && r != -ENOENT)
		error_errno(r, "bios: cannot describe the platform through fw_cfg");
	if (r)
		return r == -EBADMSG ? -EINVAL : r;
	arch_regs_bios(regs, sregs);
	log_info("bios: booting %s (%s)", path,
		 vm->cfg->bios_use_serial
		     ? "its console on COM1"
		     : "no BIOS console: SeaBIOS and the boot loader print nowhere without "
		       "bootloader.bios.useSerial");
	return 0;
}
