// SPDX-License-Identifier: MIT
/* bs.c - the boot services table: thin EFIAPI entry points over mem.c,
 * proto.c, event.c and image.c, plus the small services themselves. */
#include "firmware/efi/fw.h"

#define MAX_CONFIG_TABLES 16

struct efi_boot_services efi_bs;
bool efi_exited_boot_services;
static efi_tpl cur_tpl = TPL_APPLICATION;
static uint64_t monotonic;
static struct efi_configuration_table config_tables[MAX_CONFIG_TABLES];

void efi_table_crc(struct efi_table_header *h)
{
	h->crc32 = 0;
	h->crc32 = efi_crc32(0, h, h->header_size);
}

void *efi_alloc(size_t n)
{
	void *p = NULL;

	if (mem_pool_alloc(&efi_mem, EfiBootServicesData, n, &p) != EFI_SUCCESS)
		return NULL;
	memset(p, 0, n);
	return p;
}

void efi_free(void *p)
{
	if (p)
		mem_pool_free(&efi_mem, p);
}

void *efi_alloc_pages(size_t bytes)
{
	uint64_t addr;

	if (mem_allocate_pages(&efi_mem, AllocateAnyPages, EfiBootServicesData,
			       (bytes + EFI_PAGE_SIZE - 1) / EFI_PAGE_SIZE, &addr))
		return NULL;
	return (void *)(uintptr_t)addr;
}

static efi_tpl EFIAPI raise_tpl(efi_tpl tpl)
{
	efi_tpl old = cur_tpl;

	cur_tpl = tpl;
	return old;
}

static void EFIAPI restore_tpl(efi_tpl tpl)
{
	cur_tpl = tpl;
}

static efi_status EFIAPI allocate_pages(uint32_t how, uint32_t type, uint64_t pages, uint64_t *addr)
{
	return mem_allocate_pages(&efi_mem, how, type, pages, addr);
}

static efi_status EFIAPI free_pages(uint64_t addr, uint64_t pages)
{
	return mem_free_pages(&efi_mem, addr, pages);
}

static efi_status EFIAPI get_memory_map(uint64_t *size, struct efi_memory_descriptor *map,
					uint64_t *key, uint64_t *desc_size, uint32_t *ver)
{
	return mem_get_map(&efi_mem, size, map, key, desc_size, ver);
}

static efi_status EFIAPI allocate_pool(uint32_t type, uint64_t size, void **buf)
{
	return mem_pool_alloc(&efi_mem, type, size, buf);
}

static efi_status EFIAPI free_pool(void *buf)
{
	return mem_pool_free(&efi_mem, buf);
}

static efi_status EFIAPI create_event(uint32_t type, efi_tpl tpl, efi_event_notify fn, void *ctx,
				      efi_event *ev)
{
	return efi_event_create(type, tpl, fn, ctx, NULL, ev);
}

static efi_status EFIAPI create_event_ex(uint32_t type, efi_tpl tpl, efi_event_notify fn,
					 const void *ctx, const efi_guid *group, efi_event *ev)
{
	return efi_event_create(type, tpl, fn, ctx, group, ev);
}

static efi_status EFIAPI set_timer(efi_event ev, uint32_t type, uint64_t trigger)
{
	return efi_event_set_timer(ev, type, trigger);
}

static efi_status EFIAPI wait_for_event(uint64_t n, efi_event *evs, uint64_t *index)
{
	return efi_event_wait(n, evs, index);
}

static efi_status EFIAPI signal_event(efi_event ev)
{
	return efi_event_signal(ev);
}

static efi_status EFIAPI close_event(efi_event ev)
{
	return efi_event_close(ev);
}

static efi_status EFIAPI check_event(efi_event ev)
{
	return efi_event_check(ev);
}

static efi_status EFIAPI install_protocol_interface(efi_handle *h, const efi_guid *g,
						    uint32_t itype, void *iface)
{
	if (itype != 0) /* EFI_NATIVE_INTERFACE */
		return EFI_INVALID_PARAMETER;
	return proto_install(h, g, iface);
}

static efi_status EFIAPI reinstall_protocol_interface(efi_handle h, const efi_guid *g, void *old_if,
						      void *new_if)
{
	return proto_reinstall(h, g, old_if, new_if);
}

static efi_status EFIAPI uninstall_protocol_interface(efi_handle h, const efi_guid *g, void *iface)
{
	return proto_uninstall(h, g, iface);
}

static void log_missing(const char *call, const efi_guid *g);

/* A handle probed for a protocol: a miss is only logged for a protocol
 * this firmware never provides (GRUB asks the console for simple text
 * input ex, its boot device for PXE) */
static efi_status probe_handle(const char *call, efi_handle h, const efi_guid *g, void **iface)
{
	efi_status st = proto_get(h, g, iface);

	if (st == EFI_UNSUPPORTED && g && !efi_protocol_provided(g))
		log_missing(call, g);
	return st;
}

static efi_status EFIAPI handle_protocol(efi_handle h, const efi_guid *g, void **iface)
{
	return probe_handle("HandleProtocol", h, g, iface);
}

static void notify_signal(efi_event ev)
{
	efi_event_signal(ev);
}

static efi_status EFIAPI register_protocol_notify(const efi_guid *g, efi_event ev, void **reg)
{
	if (!reg)
		return EFI_INVALID_PARAMETER;
	*reg = ev;
	return proto_register_notify(g, ev, notify_signal);
}

static void log_missing(const char *call, const efi_guid *g);

static efi_status EFIAPI locate_handle(uint32_t search, const efi_guid *g, void *key,
				       uint64_t *size, efi_handle *buf)
{
	efi_status st;

	(void)key;
	st = proto_locate_handles(search, g, size, buf);
	/* (a protocol of ours without a handle, e.g. no file system, is no
	 * missing protocol) */
	if (st == EFI_NOT_FOUND && search == ByProtocol && g && !efi_protocol_provided(g))
		log_missing("LocateHandle", g);
	return st;
}

static efi_status EFIAPI locate_device_path(const efi_guid *g, struct efi_device_path **dp,
					    efi_handle *dev)
{
	return proto_locate_device_path(g, (const struct efi_device_path **)dp, dev);
}

static efi_status EFIAPI install_configuration_table(const efi_guid *g, void *table)
{
	uint64_t i, n = efi_st.n_tables;

	if (!g)
		return EFI_INVALID_PARAMETER;
	for (i = 0; i < n && !guid_eq(&config_tables[i].guid, g); i++)
		;
	if (i < n && !table) {
		config_tables[i] = config_tables[n - 1];
		efi_st.n_tables--;
	} else if (i < n) {
		config_tables[i].table = table;
	} else if (!table) {
		return EFI_NOT_FOUND;
	} else if (n >= MAX_CONFIG_TABLES) {
		return EFI_OUT_OF_RESOURCES;
	} else {
		config_tables[n].guid = *g;
		config_tables[n].table = table;
		efi_st.n_tables++;
	}
	efi_table_crc(&efi_st.hdr);
	return EFI_SUCCESS;
}

static efi_status EFIAPI exit_boot_services(efi_handle image, uint64_t key)
{
	(void)image;
	if (key != efi_mem.key)
		return EFI_INVALID_PARAMETER;
	efi_log("ExitBootServices: handing over to the OS");
	efi_event_signal_type(EVT_SIGNAL_EXIT_BOOT_SERVICES);
	efi_time_stop();
	efi_sata_stop();
	efi_exited_boot_services = true;
	efi_st.con_in_handle = efi_st.con_out_handle = efi_st.stderr_handle = NULL;
	efi_st.con_in = NULL;
	efi_st.con_out = efi_st.std_err = NULL;
	efi_st.boot = NULL;
	efi_table_crc(&efi_st.hdr);
	return EFI_SUCCESS;
}

static efi_status EFIAPI get_next_monotonic_count(uint64_t *count)
{
	if (!count)
		return EFI_INVALID_PARAMETER;
	*count = monotonic++;
	return EFI_SUCCESS;
}

static efi_status EFIAPI stall(uint64_t us)
{
	efi_stall_us(us);
	efi_event_poll();
	return EFI_SUCCESS;
}

static efi_status EFIAPI set_watchdog_timer(uint64_t timeout, uint64_t code, uint64_t size,
					    char16 *data)
{
	(void)timeout, (void)code, (void)size, (void)data;
	return EFI_SUCCESS; /* no watchdog: the VMM's own timeouts apply */
}

static efi_status EFIAPI connect_controller(efi_handle c, efi_handle *drv,
					    struct efi_device_path *dp, bool recursive)
{
	(void)drv, (void)dp, (void)recursive;
	/* every device is connected when found; there are no drivers to bind */
	return proto_handle_valid(c) ? EFI_SUCCESS : EFI_INVALID_PARAMETER;
}

static efi_status EFIAPI disconnect_controller(efi_handle c, efi_handle drv, efi_handle child)
{
	(void)drv, (void)child;
	return proto_handle_valid(c) ? EFI_SUCCESS : EFI_INVALID_PARAMETER;
}

static efi_status EFIAPI open_protocol(efi_handle h, const efi_guid *g, void **iface,
				       efi_handle agent, efi_handle controller, uint32_t attr)
{
	void *dummy;

	(void)agent, (void)controller;
	if (attr == EFI_OPEN_PROTOCOL_TEST_PROTOCOL)
		return proto_get(h, g, &dummy);
	if (!iface || !attr || attr > 0x3f)
		return EFI_INVALID_PARAMETER;
	return probe_handle("OpenProtocol", h, g, iface);
}

static efi_status EFIAPI close_protocol(efi_handle h, const efi_guid *g, efi_handle agent,
					efi_handle controller)
{
	void *dummy;

	(void)agent, (void)controller;
	return proto_get(h, g, &dummy) == EFI_SUCCESS ? EFI_SUCCESS : EFI_NOT_FOUND;
}

static efi_status EFIAPI open_protocol_information(efi_handle h, const efi_guid *g,
						   struct efi_open_protocol_information_entry **buf,
						   uint64_t *count)
{
	void *dummy;

	if (!buf || !count)
		return EFI_INVALID_PARAMETER;
	if (proto_get(h, g, &dummy) != EFI_SUCCESS)
		return EFI_NOT_FOUND;
	*count = 0; /* opens are not tracked */
	*buf = efi_alloc(sizeof(**buf));
	return *buf ? EFI_SUCCESS : EFI_OUT_OF_RESOURCES;
}

static efi_status EFIAPI protocols_per_handle(efi_handle h, efi_guid ***buf, uint64_t *count)
{
	const efi_guid *list[PROTO_PER_HANDLE];
	unsigned int n;

	if (!buf || !count || !proto_handle_valid(h))
		return EFI_INVALID_PARAMETER;
	n = proto_list(h, list);
	if (mem_pool_alloc(&efi_mem, EfiBootServicesData, n * sizeof(void *) + 1, (void **)buf))
		return EFI_OUT_OF_RESOURCES;
	memcpy(*buf, list, n * sizeof(void *));
	*count = n;
	return EFI_SUCCESS;
}

static efi_status EFIAPI locate_handle_buffer(uint32_t search, const efi_guid *g, void *key,
					      uint64_t *count, efi_handle **buf)
{
	uint64_t size = 0;
	efi_status st;

	if (!count || !buf)
		return EFI_INVALID_PARAMETER;
	st = locate_handle(search, g, key, &size, NULL);
	if (st != EFI_BUFFER_TOO_SMALL)
		return st;
	if (mem_pool_alloc(&efi_mem, EfiBootServicesData, size, (void **)buf))
		return EFI_OUT_OF_RESOURCES;
	st = proto_locate_handles(search, g, &size, *buf);
	if (st) {
		mem_pool_free(&efi_mem, *buf);
		*buf = NULL;
		return st;
	}
	*count = size / sizeof(efi_handle);
	return EFI_SUCCESS;
}

/*
 * A protocol an image asked for and this firmware does not provide (GRUB
 * looks for graphics, for instance): logged once per GUID, so that what a
 * boot loader misses shows on the console ("efi: LocateProtocol: no
 * <GUID> (<name>)", "efi: LocateHandle: no ..." for a search by protocol
 * that found no handle, HandleProtocol/OpenProtocol for a handle probed;
 * the name when protocols.c knows it). A protocol the firmware provides
 * is never logged: probing handles for it is how images tell devices
 * apart.
 */
static void log_missing(const char *call, const efi_guid *g)
{
	static efi_guid seen[24];
	static unsigned int n_seen;
	const char *name = efi_absent_protocol_name(g);

	for (unsigned int i = 0; i < n_seen; i++)
		if (guid_eq(&seen[i], g))
			return;
	if (n_seen < sizeof(seen) / sizeof(seen[0]))
		seen[n_seen++] = *g;
	efi_log("%s: no %08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x%s%s%s", call, g->d1, g->d2,
		g->d3, g->d4[0], g->d4[1], g->d4[2], g->d4[3], g->d4[4], g->d4[5], g->d4[6],
		g->d4[7], *name ? " (" : "", name, *name ? ")" : "");
}

static efi_status EFIAPI locate_protocol(const efi_guid *g, void *reg, void **iface)
{
	efi_status st;

	(void)reg;
	st = proto_locate(g, iface);
	if (st == EFI_NOT_FOUND)
		log_missing("LocateProtocol", g);
	return st;
}

/* The next (GUID, interface) pair of a NULL-terminated variadic list. */
static bool next_pair(__builtin_ms_va_list *ap, const efi_guid **g, void **iface)
{
	*g = __builtin_va_arg(*ap, const efi_guid *);
	if (!*g)
		return false;
	*iface = __builtin_va_arg(*ap, void *);
	return true;
}

static efi_status EFIAPI install_multiple(efi_handle *h, ...)
{
	const efi_guid *done[PROTO_PER_HANDLE];
	void *ifaces[PROTO_PER_HANDLE];
	unsigned int n = 0;
	efi_status st = EFI_SUCCESS;
	__builtin_ms_va_list ap;
	const efi_guid *g;
	void *iface;

	if (!h)
		return EFI_INVALID_PARAMETER;
	__builtin_ms_va_start(ap, h);
	while (next_pair(&ap, &g, &iface)) {
		if (n >= PROTO_PER_HANDLE)
			st = EFI_OUT_OF_RESOURCES;
		else
			st = proto_install(h, g, iface);
		if (st)
			break;
		done[n] = g;
		ifaces[n++] = iface;
	}
	__builtin_ms_va_end(ap);
	if (st)
		while (n--)
			proto_uninstall(*h, done[n], ifaces[n]);
	return st;
}

static efi_status EFIAPI uninstall_multiple(efi_handle h, ...)
{
	efi_status st = EFI_SUCCESS;
	__builtin_ms_va_list ap;
	const efi_guid *g;
	void *iface;

	__builtin_ms_va_start(ap, h);
	while (next_pair(&ap, &g, &iface)) {
		if (proto_uninstall(h, g, iface))
			st = EFI_INVALID_PARAMETER;
	}
	__builtin_ms_va_end(ap);
	return st;
}

static efi_status EFIAPI calculate_crc32(const void *data, uint64_t size, uint32_t *crc)
{
	if (!data || !size || !crc)
		return EFI_INVALID_PARAMETER;
	*crc = efi_crc32(0, data, size);
	return EFI_SUCCESS;
}

static void EFIAPI copy_mem(void *dst, const void *src, uint64_t n)
{
	memmove(dst, src, n);
}

static void EFIAPI set_mem(void *buf, uint64_t n, uint8_t v)
{
	memset(buf, v, n);
}

void efi_bs_init(void)
{
	efi_bs = (struct efi_boot_services){
	    .hdr = {EFI_BOOT_SERVICES_SIGNATURE, EFI_2_100_REVISION, sizeof(efi_bs), 0, 0},
	    .raise_tpl = raise_tpl,
	    .restore_tpl = restore_tpl,
	    .allocate_pages = allocate_pages,
	    .free_pages = free_pages,
	    .get_memory_map = get_memory_map,
	    .allocate_pool = allocate_pool,
	    .free_pool = free_pool,
	    .create_event = create_event,
	    .set_timer = set_timer,
	    .wait_for_event = wait_for_event,
	    .signal_event = signal_event,
	    .close_event = close_event,
	    .check_event = check_event,
	    .install_protocol_interface = install_protocol_interface,
	    .reinstall_protocol_interface = reinstall_protocol_interface,
	    .uninstall_protocol_interface = uninstall_protocol_interface,
	    .handle_protocol = handle_protocol,
	    .register_protocol_notify = register_protocol_notify,
	    .locate_handle = locate_handle,
	    .locate_device_path = locate_device_path,
	    .install_configuration_table = install_configuration_table,
	    .load_image = efi_load_image,
	    .start_image = efi_start_image,
	    .exit = efi_exit,
	    .unload_image = efi_unload_image,
	    .exit_boot_services = exit_boot_services,
	    .get_next_monotonic_count = get_next_monotonic_count,
	    .stall = stall,
	    .set_watchdog_timer = set_watchdog_timer,
	    .connect_controller = connect_controller,
	    .disconnect_controller = disconnect_controller,
	    .open_protocol = open_protocol,
	    .close_protocol = close_protocol,
	    .open_protocol_information = open_protocol_information,
	    .protocols_per_handle = protocols_per_handle,
	    .locate_handle_buffer = locate_handle_buffer,
	    .locate_protocol = locate_protocol,
	    .install_multiple_protocol_interfaces = install_multiple,
	    .uninstall_multiple_protocol_interfaces = uninstall_multiple,
	    .calculate_crc32 = calculate_crc32,
	    .copy_mem = copy_mem,
	    .set_mem = set_mem,
	    .create_event_ex = create_event_ex,
	};
	efi_table_crc(&efi_bs.hdr);
	efi_st.tables = config_tables;
}
