// SPDX-License-Identifier: MIT
/* efi_boot.c - EFI boot policy checks and the embedded firmware image. */
#include <errno.h>
#include <stdint.h>

#include "vmm/boot/efi_boot.h"
#include "vmm/util/log.h"

/* scripts/gen-blobs.sh: empty when firmware/efi has not been built. */
extern const uint8_t fw_efi_start[], fw_efi_end[];

int efi_boot_embedded(const void **elf, size_t *len)
{
	size_t n = (size_t)((uintptr_t)fw_efi_end - (uintptr_t)fw_efi_start);

	if (!n)
		return -ENOENT;
	*elf = fw_efi_start;
	*len = n;
	return 0;
}

int efi_boot_check(const struct vm_config *cfg, bool external_firmware)
{
	const void *elf;
	size_t len;

	if (cfg->boot != VM_BOOT_EFI)
		return 0;
	if (cfg->efi_secure_boot) {
		error("efi: secure boot is requested (firmware.bootloader.efi.secureBoot, "
		      "or a preference: KubeVirt's default) but this boot cannot verify "
		      "signed images: `vmlet run` boots such a VM through Debian's OVMF, "
		      "not the probe guest (`vmlet probe`) nor a PVH --firmware; set "
		      "secureBoot: false to boot without it");
		return -ENOTSUP;
	}
	if (!external_firmware && efi_boot_embedded(&elf, &len)) {
		error("efi: this vmlet has no built-in UEFI firmware yet; "
		      "use --firmware PATH or kernel boot");
		return -ENOENT;
	}
	return 0;
}
