// SPDX-License-Identifier: MIT
/*
 * rt.c - runtime services: GetTime from the CMOS RTC, variables kept in
 * memory (one packed arena in runtime data; the non-volatile ones loaded
 * from and saved to the VMM's store through the EFI platform port when it
 * keeps one, firmware/abi.h), ResetSystem through ACPI.
 * Everything here stays valid after ExitBootServices: no pool memory, no
 * boot-services tables, and only identity-mapped runtime memory (the OS
 * keeps a 1:1 map of runtime regions; SetVirtualAddressMap changes
 * nothing).
 */
#include "firmware/abi.h"
#include "firmware/efi/fw.h"
#include "firmware/lib/io.h"

#define VAR_ARENA  32768u
#define VAR_APPEND 0x40u
#define VAR_VALID                                                                                  \
	(EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS |                             \
	 EFI_VARIABLE_RUNTIME_ACCESS | VAR_APPEND)
#define VAR_NAME_MAX 512u /* bytes */

struct efi_runtime_services efi_rt;
struct fw_acpi_power efi_power = {.slp_typ = -1};
struct acpi_gas efi_reset_reg;
uint8_t efi_reset_value;

/* A record: header, name (UCS-2 with NUL), data; 8-byte aligned. */
struct var {
	efi_guid guid;
	uint32_t attr, name_bytes, data_bytes, pad;
};

static uint8_t arena[VAR_ARENA] FW_ALIGNED(8);
static uint32_t arena_used;
static uint32_t high_count;
static uint8_t nv_buf[VAR_ARENA] FW_ALIGNED(8); /* the blob to and from the VMM */
static bool nv_persist;

static uint32_t var_span(const struct var *v)
{
	return (uint32_t)((sizeof(*v) + v->name_bytes + v->data_bytes + 7) & ~7u);
}

static bool name_eq(const char16 *a, const char16 *b, uint32_t bytes)
{
	return !memcmp(a, b, bytes);
}

static struct var *var_find(const char16 *name, const efi_guid *g)
{
	uint32_t bytes = (uint32_t)(efi_strlen16(name) + 1) * 2;

	for (uint32_t off = 0; off < arena_used;) {
		struct var *v = (struct var *)(arena + off);

		if (v->name_bytes == bytes && guid_eq(&v->guid, g) &&
		    name_eq((const char16 *)(v + 1), name, bytes))
			return v;
		off += var_span(v);
	}
	return NULL;
}

static bool visible(const struct var *v)
{
	return !efi_exited_boot_services || (v->attr & EFI_VARIABLE_RUNTIME_ACCESS);
}

static efi_status EFIAPI get_variable(const char16 *name, const efi_guid *g, uint32_t *attr,
				      uint64_t *size, void *data)
{
	struct var *v;

	if (!name || !g || !size)
		return EFI_INVALID_PARAMETER;
	v = var_find(name, g);
	if (!v || !visible(v))
		return EFI_NOT_FOUND;
	if (attr)
		*attr = v->attr;
	if (*size < v->data_bytes) {
		*size = v->data_bytes;
		return EFI_BUFFER_TOO_SMALL;
	}
	if (!data && v->data_bytes)
		return EFI_INVALID_PARAMETER;
	memcpy(data, (uint8_t *)(v + 1) + v->name_bytes, v->data_bytes);
	*size = v->data_bytes;
	return EFI_SUCCESS;
}

static efi_status EFIAPI get_next_variable_name(uint64_t *size, char16 *name, efi_guid *g)
{
	uint32_t off = 0;

	if (!size || !name || !g)
		return EFI_INVALID_PARAMETER;
	if (name[0]) {
		struct var *cur = var_find(name, g);

		if (!cur)
			return EFI_INVALID_PARAMETER;
		off = (uint32_t)((uint8_t *)cur - arena) + var_span(cur);
	}
	for (; off < arena_used; off += var_span((struct var *)(arena + off))) {
		struct var *v = (struct var *)(arena + off);

		if (!visible(v))
			continue;
		if (*size < v->name_bytes) {
			*size = v->name_bytes;
			return EFI_BUFFER_TOO_SMALL;
		}
		memcpy(name, v + 1, v->name_bytes);
		*g = v->guid;
		*size = v->name_bytes;
		return EFI_SUCCESS;
	}
	return EFI_NOT_FOUND;
}

static void var_delete(struct var *v)
{
	uint32_t off = (uint32_t)((uint8_t *)v - arena), span = var_span(v);

	memmove(arena + off, arena + off + span, arena_used - off - span);
	arena_used -= span;
}

static efi_status var_store(const char16 *name, const efi_guid *g, uint32_t attr, const void *d1,
			    uint32_t n1, const void *d2, uint32_t n2)
{
	uint32_t nb = (uint32_t)(efi_strlen16(name) + 1) * 2;
	struct var *v = (struct var *)(arena + arena_used);
	uint32_t span = (uint32_t)((sizeof(*v) + nb + n1 + n2 + 7) & ~7u);

	if (nb > VAR_NAME_MAX || span > VAR_ARENA - arena_used)
		return EFI_OUT_OF_RESOURCES;
	*v = (struct var){*g, attr & ~VAR_APPEND, nb, n1 + n2, 0};
	memcpy(v + 1, name, nb);
	if (n1)
		memmove((uint8_t *)(v + 1) + nb, d1, n1);
	if (n2)
		memcpy((uint8_t *)(v + 1) + nb + n1, d2, n2);
	arena_used += span;
	return EFI_SUCCESS;
}

static bool read_only(const char16 *name, const efi_guid *g)
{
	static const char16 *const ro[] = {u"SecureBoot", u"SetupMode", u"AuditMode",
					   u"DeployedMode", u"OsIndicationsSupported"};

	if (!guid_eq(g, &efi_global_variable_guid))
		return false;
	for (unsigned int i = 0; i < FW_ARRAY_SIZE(ro); i++)
		if (name_eq(name, ro[i], (uint32_t)(efi_strlen16(ro[i]) + 1) * 2))
			return true;
	return false;
}

static efi_status var_set(const char16 *name, const efi_guid *g, uint32_t attr, uint64_t size,
			  const void *data)
{
	struct var *old = var_find(name, g);
	efi_status st;

	if (attr & VAR_APPEND) {
		if (!old)
			return size ? var_store(name, g, attr, data, (uint32_t)size, NULL, 0)
				    : EFI_SUCCESS;
		if ((old->attr ^ attr) & ~VAR_APPEND)
			return EFI_INVALID_PARAMETER;
		if (!size)
			return EFI_SUCCESS;
	} else if (!size || !(attr & ~VAR_APPEND)) {
		if (!old)
			return EFI_NOT_FOUND;
		var_delete(old);
		return EFI_SUCCESS;
	}
	if (size > VAR_ARENA)
		return EFI_OUT_OF_RESOURCES;
	/* write the new record at the end first, then drop the old one */
	if (old && (attr & VAR_APPEND))
		st = var_store(name, g, attr, (uint8_t *)(old + 1) + old->name_bytes,
			       old->data_bytes, data, (uint32_t)size);
	else
		st = var_store(name, g, attr, data, (uint32_t)size, NULL, 0);
	if (!st && old)
		var_delete(old);
	return st;
}

/* ---- the VMM's store ---------------------------------------------------- */

uint32_t efi_port_call(uint32_t op, void *buf, uint32_t cap, uint32_t *len)
{
	static struct fw_abi_efi_desc d FW_ALIGNED(8);
	static int present = -1;

	if (present < 0)
		present = inl(FW_ABI_EFI_PORT) == FW_ABI_EFI_MAGIC;
	if (!present)
		return FW_ABI_EFI_UNSUPPORTED;
	d = (struct fw_abi_efi_desc){FW_ABI_EFI_MAGIC, op, FW_ABI_EFI_BAD, *len, cap, 0,
				     (uintptr_t)buf};
	__asm__ volatile("" : : : "memory"); /* d and buf are read by the VMM... */
	outl(FW_ABI_EFI_PORT, (uint32_t)(uintptr_t)&d);
	__asm__ volatile("" : : : "memory"); /* ...which wrote them back */
	*len = d.len;
	return d.status;
}

/* Hand every non-volatile record to the VMM (after each change to one). */
static void nv_save(void)
{
	uint32_t n = 0;

	for (uint32_t off = 0; off < arena_used; off += var_span((struct var *)(arena + off))) {
		struct var *v = (struct var *)(arena + off);

		if (v->attr & EFI_VARIABLE_NON_VOLATILE) {
			memcpy(nv_buf + n, v, var_span(v));
			n += var_span(v);
		}
	}
	if (efi_port_call(FW_ABI_EFI_VARS_SAVE, nv_buf, n, &n) != FW_ABI_EFI_OK)
		efi_log("variables: the VMM did not store them");
}

/* The VMM's stored records: each checked (they come from a file). */
void efi_vars_load(void)
{
	uint32_t len = 0, off = 0;

	if (efi_port_call(FW_ABI_EFI_VARS_LOAD, nv_buf, sizeof(nv_buf), &len) != FW_ABI_EFI_OK)
		return;
	nv_persist = true;
	while (len <= sizeof(nv_buf) && len - off >= sizeof(struct var)) {
		const struct var *v = (const struct var *)(nv_buf + off);
		const char16 *name = (const char16 *)(v + 1);
		uint32_t nb = v->name_bytes;

		if (nb < 4 || nb > VAR_NAME_MAX || (nb & 1) || v->data_bytes > VAR_ARENA ||
		    var_span(v) > len - off || name[nb / 2 - 1] ||
		    efi_strlen16(name) != nb / 2 - 1 || !(v->attr & EFI_VARIABLE_NON_VOLATILE) ||
		    (v->attr & ~VAR_VALID))
			break;
		if (!read_only(name, &v->guid))
			var_set(name, &v->guid, v->attr, v->data_bytes, (const uint8_t *)name + nb);
		off += var_span(v);
	}
	efi_log("variables: %u bytes from the VMM's store", off);
}

static efi_status EFIAPI set_variable(const char16 *name, const efi_guid *g, uint32_t attr,
				      uint64_t size, const void *data)
{
	const struct var *old;
	efi_status st;

	if (!name || !name[0] || !g || (size && !data))
		return EFI_INVALID_PARAMETER;
	if (attr & EFI_VARIABLE_AUTH_WRITE)
		return EFI_UNSUPPORTED; /* no authenticated variables (no secure boot) */
	if (attr & ~VAR_VALID)
		return EFI_INVALID_PARAMETER;
	if ((attr & EFI_VARIABLE_RUNTIME_ACCESS) && !(attr & EFI_VARIABLE_BOOTSERVICE_ACCESS))
		return EFI_INVALID_PARAMETER;
	if (efi_exited_boot_services && attr && !(attr & EFI_VARIABLE_RUNTIME_ACCESS))
		return EFI_INVALID_PARAMETER;
	if (read_only(name, g))
		return EFI_WRITE_PROTECTED;
	old = var_find(name, g);
	bool nv =
	    (old && (old->attr & EFI_VARIABLE_NON_VOLATILE)) || (attr & EFI_VARIABLE_NON_VOLATILE);

	st = var_set(name, g, attr, size, data);
	if (!st && nv && nv_persist)
		nv_save();
	return st;
}

static efi_status EFIAPI query_variable_info(uint32_t attr, uint64_t *max_storage,
					     uint64_t *remaining, uint64_t *max_size)
{
	if (!max_storage || !remaining || !max_size || !attr)
		return EFI_INVALID_PARAMETER;
	*max_storage = VAR_ARENA;
	*remaining = VAR_ARENA - arena_used;
	*max_size = VAR_ARENA - sizeof(struct var) - VAR_NAME_MAX;
	return EFI_SUCCESS;
}

/* ---- time ----------------------------------------------------------------- */

static uint8_t cmos(uint8_t reg)
{
	outb(0x70, reg);
	return inb(0x71);
}

static uint8_t bcd(uint8_t v, bool binary)
{
	return binary ? v : (uint8_t)((v >> 4) * 10 + (v & 0xf));
}

static efi_status EFIAPI get_time(struct efi_time *t, struct efi_time_caps *caps)
{
	uint8_t s, m, h, d, mo, y, c, b;
	int spins = 0;

	if (!t)
		return EFI_INVALID_PARAMETER;
	while ((cmos(0x0a) & 0x80) && spins++ < 10000) /* update in progress */
		;
	b = cmos(0x0b);
	if (b == 0xff)
		return EFI_DEVICE_ERROR; /* no RTC */
	bool bin = b & 0x04;

	s = cmos(0), m = cmos(2), h = cmos(4), d = cmos(7), mo = cmos(8), y = cmos(9);
	c = cmos(0x32);
	bool pm = !(b & 0x02) && (h & 0x80);

	h = bcd(h & 0x7f, bin);
	if (!(b & 0x02)) /* 12-hour clock */
		h = (uint8_t)(h % 12 + (pm ? 12 : 0));
	*t = (struct efi_time){
	    .year = (uint16_t)((c && c != 0xff ? bcd(c, bin) : 20) * 100 + bcd(y, bin)),
	    .month = bcd(mo, bin),
	    .day = bcd(d, bin),
	    .hour = h,
	    .minute = bcd(m, bin),
	    .second = bcd(s, bin),
	    .timezone = EFI_UNSPECIFIED_TIMEZONE,
	};
	if (t->month < 1 || t->month > 12 || t->day < 1 || t->day > 31 || t->hour > 23 ||
	    t->minute > 59 || t->second > 59)
		return EFI_DEVICE_ERROR;
	if (caps)
		*caps = (struct efi_time_caps){1, 50000000, false};
	return EFI_SUCCESS;
}

/*
 * A runtime service this firmware does not implement: EFI_UNSUPPORTED, as
 * UEFI allows, logged once per service while boot services last (after
 * ExitBootServices the OS owns the console and the firmware stays quiet).
 */
static efi_status unsupported(unsigned int bit, const char *name)
{
	static unsigned int logged;

	if (!efi_exited_boot_services && !(logged & 1u << bit)) {
		logged |= 1u << bit;
		efi_log("%s: not supported", name);
	}
	return EFI_UNSUPPORTED;
}

static efi_status EFIAPI set_time(const struct efi_time *t)
{
	(void)t;
	return unsupported(0, "SetTime");
}

static efi_status EFIAPI get_wakeup_time(bool *en, bool *pending, struct efi_time *t)
{
	(void)en, (void)pending, (void)t;
	return unsupported(1, "GetWakeupTime");
}

static efi_status EFIAPI set_wakeup_time(bool en, const struct efi_time *t)
{
	(void)en, (void)t;
	return unsupported(2, "SetWakeupTime");
}

/* ---- the rest ------------------------------------------------------------- */

static efi_status EFIAPI set_virtual_address_map(uint64_t size, uint64_t desc_size, uint32_t ver,
						 struct efi_memory_descriptor *map)
{
	(void)size, (void)desc_size, (void)ver, (void)map;
	efi_event_signal_type(EVT_SIGNAL_VIRTUAL_ADDRESS_CHANGE);
	return EFI_SUCCESS; /* code and data keep running 1:1 */
}

static efi_status EFIAPI convert_pointer(uint64_t debug, void **addr)
{
	(void)debug;
	return addr ? EFI_SUCCESS : EFI_INVALID_PARAMETER;
}

static efi_status EFIAPI get_next_high_monotonic_count(uint32_t *count)
{
	if (!count)
		return EFI_INVALID_PARAMETER;
	*count = ++high_count;
	return EFI_SUCCESS;
}

static void EFIAPI reset_system(uint32_t type, efi_status st, uint64_t size, const void *data)
{
	(void)st, (void)size, (void)data;
	if (type != EfiResetShutdown) {
		if (efi_reset_reg.address && efi_reset_reg.space_id == 1)
			outb((uint16_t)efi_reset_reg.address, efi_reset_value);
		outb(0x64, 0xfe); /* i8042 pulse reset */
		outb(0xcf9, 0x06);
	}
	fw_poweroff(&efi_power);
}

static efi_status EFIAPI update_capsule(void **caps, uint64_t count, uint64_t sg)
{
	(void)caps, (void)count, (void)sg;
	return unsupported(3, "UpdateCapsule");
}

static efi_status EFIAPI query_capsule_capabilities(void **caps, uint64_t count, uint64_t *max,
						    uint32_t *reset)
{
	(void)caps, (void)count, (void)max, (void)reset;
	return unsupported(4, "QueryCapsuleCapabilities");
}

void efi_rt_init(void)
{
	static const uint8_t zero = 0, one = 1;
	static const char lang[] = "en-US";
	uint32_t bs_rt = EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS;
	const efi_guid *gv = &efi_global_variable_guid;

	efi_rt = (struct efi_runtime_services){
	    .hdr = {EFI_RUNTIME_SERVICES_SIGNATURE, EFI_2_100_REVISION, sizeof(efi_rt), 0, 0},
	    .get_time = get_time,
	    .set_time = set_time,
	    .get_wakeup_time = get_wakeup_time,
	    .set_wakeup_time = set_wakeup_time,
	    .set_virtual_address_map = set_virtual_address_map,
	    .convert_pointer = convert_pointer,
	    .get_variable = get_variable,
	    .get_next_variable_name = get_next_variable_name,
	    .set_variable = set_variable,
	    .get_next_high_monotonic_count = get_next_high_monotonic_count,
	    .reset_system = reset_system,
	    .update_capsule = update_capsule,
	    .query_capsule_capabilities = query_capsule_capabilities,
	    .query_variable_info = query_variable_info,
	};
	efi_table_crc(&efi_rt.hdr);
	/* secure boot is off: vmm/boot/efi_boot.c refuses VMs that want it */
	var_store(u"SecureBoot", gv, bs_rt, &zero, 1, NULL, 0);
	var_store(u"SetupMode", gv, bs_rt, &one, 1, NULL, 0);
	var_store(u"PlatformLang", gv, bs_rt | EFI_VARIABLE_NON_VOLATILE, lang, sizeof(lang), NULL,
		  0);
}
