// SPDX-License-Identifier: MIT
/* efi_boot.c - EFI boot policy checks, the embedded firmware image and the
 * SMBIOS tables. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/efi_boot.h"
#include "vmm/guest_mem.h"
#include "vmm/log.h"

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
		      "or a preference) but vmlet cannot verify signed boot images yet; "
		      "refusing to boot unverified code while claiming secure boot "
		      "(set secureBoot: false to boot without it)");
		return -ENOTSUP;
	}
	if (!external_firmware && efi_boot_embedded(&elf, &len)) {
		error("efi: this vmlet has no built-in UEFI firmware yet; "
		      "use --firmware PATH or kernel boot");
		return -ENOENT;
	}
	return 0;
}

/* ---- SMBIOS ---------------------------------------------------------------- */

struct smb {
	uint8_t *p;
	size_t len, cap;
};

static int smb_put(struct smb *s, const void *d, size_t n)
{
	if (n > s->cap - s->len)
		return -ENOSPC;
	memcpy(s->p + s->len, d, n);
	s->len += n;
	return 0;
}

/* The string set after a structure: each NUL-terminated, then one more
 * NUL (two when there are none). NULL strings are skipped (index 0). */
static int smb_strings(struct smb *s, const char *const *str, int n)
{
	int ret = 0, any = 0;

	for (int i = 0; i < n && !ret; i++)
		if (str[i] && *str[i]) {
			ret = smb_put(s, str[i], strlen(str[i]) + 1);
			any = 1;
		}
	return ret ? ret : smb_put(s, "\0\0", any ? 1 : 2);
}

static int parse_uuid(const char *u, uint8_t out[16])
{
	unsigned int b[16];

	if (!u || strlen(u) != 36 ||
	    sscanf(u, "%2x%2x%2x%2x-%2x%2x-%2x%2x-%2x%2x-%2x%2x%2x%2x%2x%2x", &b[0], &b[1], &b[2],
		   &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9], &b[10], &b[11], &b[12], &b[13],
		   &b[14], &b[15]) != 16)
		return -EINVAL;
	/* SMBIOS 2.6+: the first three fields little-endian */
	static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};

	for (int i = 0; i < 16; i++)
		out[i] = (uint8_t)b[order[i]];
	return 0;
}

/* string index of the n-th non-empty string among str[0..k] (1-based) */
static uint8_t str_index(const char *const *str, int k)
{
	uint8_t idx = 0;

	if (!str[k] || !*str[k])
		return 0;
	for (int i = 0; i <= k; i++)
		if (str[i] && *str[i])
			idx++;
	return idx;
}

int efi_boot_smbios(const struct vm_config *cfg, void *buf, size_t cap, uint64_t gpa)
{
	struct smb s = {buf, 0x20, cap};
	const char *bios[] = {"vmlet", "1.0", "01/01/2026"};
	const char *sys[] = {"KubeVirt", "None", cfg->firmware_serial, "KubeVirt"};
	uint8_t t0[0x18] = {0, 0x18, 0, 0}, t1[0x1b] = {1, 0x1b, 1, 0};
	uint8_t t127[4] = {127, 4, 0xff, 0xff}, *ep = buf;
	int ret;

	if (cap < 0x20 || (gpa & 15))
		return -ENOSPC;
	memset(buf, 0, 0x20);
	t0[4] = 1, t0[5] = 2, t0[8] = 3; /* vendor, version, release date */
	t0[6] = 0x00, t0[7] = 0xe8;	 /* starting segment 0xe800 */
	t0[10] = 0x08;			 /* characteristics not supported */
	t0[0x13] = 0x08;		 /* ext. byte 2: UEFI is supported */
	t0[0x16] = t0[0x17] = 0xff;	 /* no embedded controller */
	t1[4] = str_index(sys, 0);	 /* manufacturer */
	t1[5] = str_index(sys, 1);	 /* product */
	t1[7] = str_index(sys, 2);	 /* serial */
	if (cfg->firmware_uuid && parse_uuid(cfg->firmware_uuid, t1 + 8))
		return -EINVAL;
	t1[0x18] = 6;		      /* wake-up: power switch */
	t1[0x1a] = str_index(sys, 3); /* family */
	if ((ret = smb_put(&s, t0, sizeof(t0))) || (ret = smb_strings(&s, bios, 3)) ||
	    (ret = smb_put(&s, t1, sizeof(t1))) || (ret = smb_strings(&s, sys, 4)))
		return ret;
	t127[2] = 2, t127[3] = 0;
	if ((ret = smb_put(&s, t127, sizeof(t127))) || (ret = smb_strings(&s, NULL, 0)))
		return ret;
	/* entry point (SMBIOS 3.0, 24 bytes) */
	memcpy(ep, "_SM3_", 5);
	ep[6] = 0x18;
	ep[7] = 3, ep[8] = 0, ep[9] = 0, ep[10] = 1;
	uint32_t size = (uint32_t)(s.len - 0x20);
	uint64_t addr = gpa + 0x20;

	memcpy(ep + 12, &size, 4);
	memcpy(ep + 16, &addr, 8);
	uint8_t sum = 0;

	for (int i = 0; i < 0x18; i++)
		sum = (uint8_t)(sum + ep[i]);
	ep[5] = (uint8_t)-sum;
	return (int)s.len;
}

int efi_boot_place_smbios(const struct vm_config *cfg, struct guest_mem *mem, uint64_t after)
{
	uint64_t gpa = (after + 15) & ~15ull;
	uint8_t *buf;
	int n;

	if (gpa < EFI_SMBIOS_GPA)
		gpa = EFI_SMBIOS_GPA;
	buf = gpa < EFI_SMBIOS_END ? guest_mem_ptr(mem, gpa, EFI_SMBIOS_END - gpa) : NULL;
	if (!buf)
		return error_errno(-ENOSPC, "smbios: no room in the BIOS area below 1 MiB");
	n = efi_boot_smbios(cfg, buf, EFI_SMBIOS_END - gpa, gpa);
	if (n == -EINVAL)
		error("smbios: firmware.uuid '%s' is not a UUID", cfg->firmware_uuid);
	else if (n < 0)
		error_errno(n, "smbios: the tables do not fit in the BIOS area");
	return n < 0 ? n : 0;
}
