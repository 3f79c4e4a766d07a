// SPDX-License-Identifier: MIT
/*
 * smbios.c - who made the firmware tables the probe booted with: the BIOS
 * vendor string of the SMBIOS type 0 structure, found through the entry
 * point in the BIOS area (0xF0000-0xFFFFF, 16-byte aligned: "_SM3_" first,
 * else "_SM_"). vmlet builds its own SMBIOS (type 0 vendor "vmlet") for a
 * direct boot and for its UEFI firmware; SeaBIOS puts its own type 0
 * ("SeaBIOS") in front of vmlet's type 1, so the line tells the host the
 * probe really came through SeaBIOS. Every pointer is bounds-checked and
 * every length capped: a bad table gives no line or an error line.
 */
#include "firmware/probe/probe.h"

#define BIOS_AREA     0xf0000u
#define BIOS_AREA_END 0x100000u
#define TABLE_MAX     0x10000u /* structures walked at most */
#define VENDOR_MAX    48

static bool sum_ok(const uint8_t *p, uint32_t n)
{
	uint8_t s = 0;

	for (uint32_t i = 0; i < n; i++)
		s = (uint8_t)(s + p[i]);
	return s == 0;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The structure table's address and length from an entry point (0: none). */
static bool find_table(uint64_t *addr, uint32_t *len)
{
	for (uint32_t a = BIOS_AREA; a + 32 <= BIOS_AREA_END; a += 16) {
		const uint8_t *p = (const uint8_t *)(uintptr_t)a;

		if (!memcmp(p, "_SM3_", 5) && p[6] >= 24 && p[6] <= 32 && sum_ok(p, p[6])) {
			*addr = rd32(p + 0x10) | (uint64_t)rd32(p + 0x14) << 32;
			*len = rd32(p + 0x0c);
			return true;
		}
	}
	for (uint32_t a = BIOS_AREA; a + 32 <= BIOS_AREA_END; a += 16) {
		const uint8_t *p = (const uint8_t *)(uintptr_t)a;

		if (!memcmp(p, "_SM_", 4) && p[5] >= 0x1f && p[5] <= 32 && sum_ok(p, p[5]) &&
		    !memcmp(p + 0x10, "_DMI_", 5)) {
			*addr = rd32(p + 0x18);
			*len = (uint32_t)p[0x16] | (uint32_t)p[0x17] << 8;
			return true;
		}
	}
	return false;
}

void probe_smbios_report(struct fw_buf *out)
{
	uint64_t addr;
	uint32_t len, off = 0;
	char vendor[VENDOR_MAX + 1];

	if (!find_table(&addr, &len))
		return; /* no SMBIOS (QEMU's qboot, for one): no line */
	if (len > TABLE_MAX)
		len = TABLE_MAX;
	if (addr < 0x1000 || addr >= 0x100000000ull || len > 0x100000000ull - addr) {
		fw_buf_printf(out, "error=smbios: the table at 0x%llx is out of reach\n",
			      (unsigned long long)addr);
		return;
	}
	const uint8_t *t = (const uint8_t *)(uintptr_t)addr;

	while (off + 4 <= len) {
		uint8_t type = t[off], hlen = t[off + 1];
		uint32_t s = off + hlen, idx = 1;

		if (hlen < 4 || s > len)
			break;
		if (type == 0 && hlen >= 5 && t[off + 4]) {
			/* the vendor: string number t[off + 4] after the formatted area */
			while (idx < t[off + 4] && s < len) {
				while (s < len && t[s])
					s++;
				s++;
				idx++;
			}
			uint32_t n = 0;

			for (; n < VENDOR_MAX && s + n < len && t[s + n]; n++)
				vendor[n] =
				    t[s + n] > ' ' && t[s + n] <= '~' ? (char)t[s + n] : '_';
			vendor[n] = 0;
			fw_buf_printf(out, "biosVendor=%s\n", n ? vendor : "-");
			return;
		}
		if (type == 127)
			break;
		/* the strings end with two NULs */
		while (s + 1 < len && (t[s] || t[s + 1]))
			s++;
		off = s + 2;
	}
	fw_buf_printf(out, "biosVendor=-\n");
}
