/* SPDX-License-Identifier: MIT */
/*
 * smbios.c - the SMBIOS 3.0 tables every guest gets (DMTF DSP0134 3.x):
 * type 0 (BIOS information), type 1 (system information, with KubeVirt's
 * manufacturer/product/family and the VM's firmware.serial and
 * firmware.uuid) and the type 127 end marker, plus the 24-byte "_SM3_"
 * entry point that firmware and OS find in the BIOS area.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64/util.h"

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

int arch_smbios_tables(uint8_t *buf, size_t cap, const struct arch_smbios_ids *ids, size_t *used)
{
	struct smb s = {buf, 0, cap};
	const char *bios[] = {"vmlet", "1.0", "01/01/2026"};
	const char *sys[] = {"KubeVirt", "None", ids->serial, "KubeVirt"};
	uint8_t t0[0x18] = {0, 0x18, 0, 0}, t1[0x1b] = {1, 0x1b, 1, 0};
	uint8_t t127[4] = {127, 4, 0xff, 0xff};
	int ret;

	t0[4] = 1, t0[5] = 2, t0[8] = 3; /* vendor, version, release date */
	t0[6] = 0x00, t0[7] = 0xe8;	 /* starting segment 0xe800 */
	t0[10] = 0x08;			 /* characteristics not supported */
	t0[0x13] = 0x08;		 /* ext. byte 2: UEFI is supported */
	t0[0x16] = t0[0x17] = 0xff;	 /* no embedded controller */
	t1[4] = str_index(sys, 0);	 /* manufacturer */
	t1[5] = str_index(sys, 1);	 /* product */
	t1[7] = str_index(sys, 2);	 /* serial */
	if (ids->uuid && parse_uuid(ids->uuid, t1 + 8))
		return -EINVAL;
	t1[0x18] = 6;		      /* wake-up: power switch */
	t1[0x1a] = str_index(sys, 3); /* family */
	if (!ids->no_type0 &&
	    ((ret = smb_put(&s, t0, sizeof(t0))) || (ret = smb_strings(&s, bios, 3))))
		return ret;
	if ((ret = smb_put(&s, t1, sizeof(t1))) || (ret = smb_strings(&s, sys, 4)))
		return ret;
	t127[2] = 2, t127[3] = 0;
	if ((ret = smb_put(&s, t127, sizeof(t127))) || (ret = smb_strings(&s, NULL, 0)))
		return ret;
	*used = s.len;
	return 0;
}

void arch_smbios_entry(uint8_t ep[ARCH_SMBIOS_ENTRY_SIZE], gpa_t tables_gpa, uint32_t tables_len)
{
	uint8_t sum = 0;

	memset(ep, 0, ARCH_SMBIOS_ENTRY_SIZE);
	memcpy(ep, "_SM3_", 5);
	ep[6] = ARCH_SMBIOS_ENTRY_SIZE;
	ep[7] = 3, ep[8] = 0, ep[9] = 0, ep[10] = 1; /* SMBIOS 3.0.0, entry point rev 1 */
	arch_put_le32(ep + 12, tables_len);	     /* structure table maximum size */
	arch_put_le64(ep + 16, tables_gpa);
	for (int i = 0; i < ARCH_SMBIOS_ENTRY_SIZE; i++)
		sum = (uint8_t)(sum + ep[i]);
	ep[5] = (uint8_t)-sum;
}

int arch_smbios_build(uint8_t *buf, size_t cap, gpa_t gpa, const struct arch_smbios_ids *ids,
		      size_t *used)
{
	size_t n;
	int ret;

	if (cap < ARCH_SMBIOS_TABLES_OFF || (gpa & 15))
		return -ENOSPC;
	memset(buf, 0, ARCH_SMBIOS_TABLES_OFF);
	ret =
	    arch_smbios_tables(buf + ARCH_SMBIOS_TABLES_OFF, cap - ARCH_SMBIOS_TABLES_OFF, ids, &n);
	if (ret)
		return ret;
	arch_smbios_entry(buf, gpa + ARCH_SMBIOS_TABLES_OFF, (uint32_t)n);
	*used = ARCH_SMBIOS_TABLES_OFF + n;
	return 0;
}
