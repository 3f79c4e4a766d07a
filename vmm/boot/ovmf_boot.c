// SPDX-License-Identifier: MIT
/*
 * ovmf_boot.c - boot through OVMF (ovmf_boot.h): the platform description
 * in fw_cfg and the reset state.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "vmm/boot/fw_platform.h"
#include "vmm/dev/fw_cfg.h"
#include "vmm/dev/pci_devices.h"
#include "vmm/dev/q35.h"
#include "vmm/util/log.h"
#include "vmm/boot/ovmf_boot.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

bool ovmf_is_flash_image(const char *path)
{
	unsigned char magic[4] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t n = 0;

	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size >= OVMF_FLASH_MIN &&
	    !(st.st_size % 4096))
		n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == 4 && memcmp(magic, "\177ELF", 4) != 0;
}

/* etc/e820: the RAM regions as they are mapped (low RAM below the ECAM
 * window, the rest above 4 GiB). OVMF reserves what else it needs. */
static int ovmf_fw_e820(struct vm *vm, struct fw_cfg *fc)
{
	struct arch_e820_entry e820[GUEST_MEM_MAX_REGIONS];
	unsigned int n = 0;

	for (unsigned int i = 0; i < vm->mem.n; i++)
		e820[n++] =
		    (struct arch_e820_entry){vm->mem.r[i].gpa, vm->mem.r[i].size, ARCH_E820_RAM};
	return fw_cfg_add_file(fc, "etc/e820", e820, n * sizeof(e820[0]));
}

static int ovmf_fw_fill(struct vm *vm, struct fw_cfg *fc)
{
	int r = ovmf_fw_e820(vm, fc);

	if (!r)
		r = fw_platform_fill(vm, fc);
	if (!r)
		r = fw_platform_bootorder(vm, fc, NULL, FW_BOOTORDER_OVMF);
	if (!r && vm->opt.smm)
		r = q35_smm_fw_cfg(pci_devices_q35(vm), fc);
	return r;
}

int ovmf_boot_setup(struct vm *vm, struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	const struct vm_config *cfg = vm->cfg;
	int r;

	if (!vm->fw_cfg)
		return error_errno(-ENODEV, "ovmf: the VM has no fw_cfg device");
	r = ovmf_fw_fill(vm, vm->fw_cfg);
	if (r && r != -EBADMSG)
		error_errno(r, "ovmf: cannot describe the platform through fw_cfg");
	if (r)
		return r == -EBADMSG ? -EINVAL : r;
	arch_regs_reset(regs, sregs);
	log_info("ovmf: booting %s, variables in %s (secure boot %s; %s)", vm->opt.flash_code,
		 vm->opt.flash_vars,
		 cfg->efi_secure_boot ? "requested: the enrolled keys decide" : "not requested",
		 vm->opt.smm ? "SMM on, the variable flash writable only from SMM" : "no SMM");
	return 0;
}
