// SPDX-License-Identifier: MIT
/*
 * smbios.c - who made the firmware tables the probe booted with: the BIOS
 * vendor string of the SMBIOS type 0 structure, and the system UUID of the
 * type 1 structure (firmware.uuid), found through the entry
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

/* The string number idx (1-based) of the structure whose strings start at
 * s, into out (non-printable as '_'); "" when there is none. */
static void smb_string(const uint8_t *t, uint32_t len, uint32_t s, uint8_t idx,
		       char out[VENDOR_MAX + 1])
{
	uint32_t n = 0;

	for (uint8_t i = 1; i < idx && s < len; i++) {
		while (s < len && t[s])
			s++;
		s++;
	}
	for (; idx && n < VENDOR_MAX && s + n < len && t[s + n]; n++)
		out[n] = t[s + n] > ' ' && t[s + n] <= '~' ? (char)t[s + n] : '_';
	out[n] = 0;
}

/* type 1's UUID (offset 8): SMBIOS 2.6+ stores the first three fields
 * little-endian, as QEMU and dmidecode read them */
static void smb_uuid(struct fw_buf *out, const uint8_t *u)
{
	fw_buf_printf(out,
		      "systemUuid=%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		      "%02x%02x%02x%02x%02x%02x\n",
		      u[3], u[2], u[1], u[0], u[5], u[4], u[7], u[6], u[8], u[9], u[10], u[11],
		      u[12], u[13], u[14], u[15]);
}

void probe_smbios_report(struct fw_buf *out)
{
	uint64_t addr;
	uint32_t len, off = 0;
	char vendor[VENDOR_MAX + 1] = "";
	bool uuid_done = false;

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
		uint32_t s = off + hlen;

		if (hlen < 4 || s > len)
			break;
		if (type == 0 && hlen >= 5 && !vendor[0])
			smb_string(t, len, s, t[off + 4], vendor);
		if (type == 1 && hlen >= 0x19 && !uuid_done) {
			smb_uuid(out, t + off + 8);
			uuid_done = true;
		}
		if (type == 127)
			break;
		/* the strings end with two NULs */
		while (s + 1 < len && (t[s] || t[s + 1]))
			s++;
		off = s + 2;
	}
	fw_buf_printf(out, "biosVendor=%s\n", vendor[0] ? vendor : "-");
}
