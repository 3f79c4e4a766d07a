/* SPDX-License-Identifier: MIT */
/*
 * efi.h - the UEFI 2.10 ABI as vmlet's firmware implements it: status
 * codes, GUIDs, the system/boot/runtime service tables and the protocol
 * interfaces we provide. Layouts follow the specification field by field;
 * every service uses the Microsoft x64 calling convention (EFIAPI).
 */
#ifndef FW_EFI_EFI_H
#define FW_EFI_EFI_H

#include "firmware/efi/util.h"

#define EFIAPI __attribute__((ms_abi))

typedef uint64_t efi_status;
typedef void *efi_handle;
typedef void *efi_event;
typedef uint16_t char16;
typedef uint64_t efi_tpl;

#define EFI_ERR(n)		(0x8000000000000000ull | (n))
#define EFI_SUCCESS		0ull
#define EFI_LOAD_ERROR		EFI_ERR(1)
#define EFI_INVALID_PARAMETER	EFI_ERR(2)
#define EFI_UNSUPPORTED		EFI_ERR(3)
#define EFI_BAD_BUFFER_SIZE	EFI_ERR(4)
#define EFI_BUFFER_TOO_SMALL	EFI_ERR(5)
#define EFI_NOT_READY		EFI_ERR(6)
#define EFI_DEVICE_ERROR	EFI_ERR(7)
#define EFI_WRITE_PROTECTED	EFI_ERR(8)
#define EFI_OUT_OF_RESOURCES	EFI_ERR(9)
#define EFI_VOLUME_CORRUPTED	EFI_ERR(10)
#define EFI_MEDIA_CHANGED	EFI_ERR(13)
#define EFI_NOT_FOUND		EFI_ERR(14)
#define EFI_ACCESS_DENIED	EFI_ERR(15)
#define EFI_TIMEOUT		EFI_ERR(18)
#define EFI_ABORTED		EFI_ERR(21)
#define EFI_SECURITY_VIOLATION	EFI_ERR(26)
#define EFI_WARN_DELETE_FAILURE 2ull

typedef struct {
	uint32_t d1;
	uint16_t d2, d3;
	uint8_t d4[8];
} efi_guid;

/* GUIDs as the specification writes them: GUID(a, b, c, d0, ..., d7). */
#define EFI_GUID(a, b, c, ...) ((efi_guid){(a), (b), (c), {__VA_ARGS__}})

/* Two 64-bit compares: every protocol lookup does this, and an
 * application's run at CPL0 is emulated per instruction on our hosts. */
static inline bool guid_eq(const efi_guid *x, const efi_guid *y)
{
	uint64_t a[2], b[2];

	__builtin_memcpy(a, x, sizeof(a));
	__builtin_memcpy(b, y, sizeof(b));
	return a[0] == b[0] && a[1] == b[1];
}

struct efi_table_header {
	uint64_t signature;
	uint32_t revision, header_size, crc32, reserved;
};

#define EFI_2_100_REVISION ((2u << 16) | 100u)

/* ---- memory --------------------------------------------------------------- */
enum efi_memory_type {
	EfiReservedMemoryType,
	EfiLoaderCode,
	EfiLoaderData,
	EfiBootServicesCode,
	EfiBootServicesData,
	EfiRuntimeServicesCode,
	EfiRuntimeServicesData,
	EfiConventionalMemory,
	EfiUnusableMemory,
	EfiACPIReclaimMemory,
	EfiACPIMemoryNVS,
	EfiMemoryMappedIO,
	EfiMemoryMappedIOPortSpace,
	EfiPalCode,
	EfiPersistentMemory,
	EfiUnacceptedMemoryType,
	EfiMaxMemoryType
};

enum efi_allocate_type { AllocateAnyPages, AllocateMaxAddress, AllocateAddress };

#define EFI_MEMORY_UC	   0x1ull
#define EFI_MEMORY_WC	   0x2ull
#define EFI_MEMORY_WT	   0x4ull
#define EFI_MEMORY_WB	   0x8ull
#define EFI_MEMORY_RUNTIME 0x8000000000000000ull

struct efi_memory_descriptor {
	uint32_t type;
	uint32_t pad;
	uint64_t phys_start, virt_start, n_pages, attribute;
};
#define EFI_MEMDESC_VERSION 1
#define EFI_PAGE_SIZE	    4096ull

/* ---- time ----------------------------------------------------------------- */
struct efi_time {
	uint16_t year;
	uint8_t month, day, hour, minute, second, pad1;
	uint32_t nanosecond;
	int16_t timezone;
	uint8_t daylight, pad2;
};
struct efi_time_caps {
	uint32_t resolution, accuracy;
	bool sets_to_zero;
};
#define EFI_UNSPECIFIED_TIMEZONE 0x07ff

/* ---- events --------------------------------------------------------------- */
#define EVT_TIMER			  0x80000000u
#define EVT_RUNTIME			  0x40000000u
#define EVT_NOTIFY_WAIT			  0x00000100u
#define EVT_NOTIFY_SIGNAL		  0x00000200u
#define EVT_SIGNAL_EXIT_BOOT_SERVICES	  0x00000201u
#define EVT_SIGNAL_VIRTUAL_ADDRESS_CHANGE 0x60000202u
#define TPL_APPLICATION			  4
#define TPL_CALLBACK			  8
#define TPL_NOTIFY			  16
#define TPL_HIGH_LEVEL			  31

enum efi_timer_delay { TimerCancel, TimerPeriodic, TimerRelative };
typedef void(EFIAPI *efi_event_notify)(efi_event ev, void *ctx);

/* ---- protocols database --------------------------------------------------- */
enum efi_locate_search { AllHandles, ByRegisterNotify, ByProtocol };
#define EFI_OPEN_PROTOCOL_BY_HANDLE_PROTOCOL  0x01
#define EFI_OPEN_PROTOCOL_GET_PROTOCOL	      0x02
#define EFI_OPEN_PROTOCOL_TEST_PROTOCOL	      0x04
#define EFI_OPEN_PROTOCOL_BY_CHILD_CONTROLLER 0x08
#define EFI_OPEN_PROTOCOL_BY_DRIVER	      0x10
#define EFI_OPEN_PROTOCOL_EXCLUSIVE	      0x20

struct efi_open_protocol_information_entry {
	efi_handle agent, controller;
	uint32_t attributes, open_count;
};

struct efi_device_path {
	uint8_t type, subtype;
	uint8_t length[2];
};

struct efi_configuration_table {
	efi_guid guid;
	void *table;
};

/* ---- tables --------------------------------------------------------------- */
struct efi_system_table;

struct efi_boot_services {
	struct efi_table_header hdr;
	efi_tpl(EFIAPI *raise_tpl)(efi_tpl);
	void(EFIAPI *restore_tpl)(efi_tpl);
	efi_status(EFIAPI *allocate_pages)(uint32_t type, uint32_t mem_type, uint64_t pages,
					   uint64_t *addr);
	efi_status(EFIAPI *free_pages)(uint64_t addr, uint64_t pages);
	efi_status(EFIAPI *get_memory_map)(uint64_t *size, struct efi_memory_descriptor *map,
					   uint64_t *key, uint64_t *desc_size, uint32_t *desc_ver);
	efi_status(EFIAPI *allocate_pool)(uint32_t type, uint64_t size, void **buf);
	efi_status(EFIAPI *free_pool)(void *buf);
	efi_status(EFIAPI *create_event)(uint32_t type, efi_tpl tpl, efi_event_notify fn, void *ctx,
					 efi_event *ev);
	efi_status(EFIAPI *set_timer)(efi_event ev, uint32_t type, uint64_t trigger);
	efi_status(EFIAPI *wait_for_event)(uint64_t n, efi_event *evs, uint64_t *index);
	efi_status(EFIAPI *signal_event)(efi_event ev);
	efi_status(EFIAPI *close_event)(efi_event ev);
	efi_status(EFIAPI *check_event)(efi_event ev);
	efi_status(EFIAPI *install_protocol_interface)(efi_handle *h, const efi_guid *g,
						       uint32_t itype, void *iface);
	efi_status(EFIAPI *reinstall_protocol_interface)(efi_handle h, const efi_guid *g,
							 void *old_if, void *new_if);
	efi_status(EFIAPI *uninstall_protocol_interface)(efi_handle h, const efi_guid *g,
							 void *iface);
	efi_status(EFIAPI *handle_protocol)(efi_handle h, const efi_guid *g, void **iface);
	void *reserved;
	efi_status(EFIAPI *register_protocol_notify)(const efi_guid *g, efi_event ev, void **reg);
	efi_status(EFIAPI *locate_handle)(uint32_t search, const efi_guid *g, void *key,
					  uint64_t *size, efi_handle *buf);
	efi_status(EFIAPI *locate_device_path)(const efi_guid *g, struct efi_device_path **dp,
					       efi_handle *dev);
	efi_status(EFIAPI *install_configuration_table)(const efi_guid *g, void *table);
	efi_status(EFIAPI *load_image)(bool boot_policy, efi_handle parent,
				       struct efi_device_path *dp, void *src, uint64_t src_size,
				       efi_handle *image);
	efi_status(EFIAPI *start_image)(efi_handle image, uint64_t *exit_size, char16 **exit_data);
	efi_status(EFIAPI *exit)(efi_handle image, efi_status status, uint64_t size, char16 *data);
	efi_status(EFIAPI *unload_image)(efi_handle image);
	efi_status(EFIAPI *exit_boot_services)(efi_handle image, uint64_t key);
	efi_status(EFIAPI *get_next_monotonic_count)(uint64_t *count);
	efi_status(EFIAPI *stall)(uint64_t us);
	efi_status(EFIAPI *set_watchdog_timer)(uint64_t timeout, uint64_t code, uint64_t size,
					       char16 *data);
	efi_status(EFIAPI *connect_controller)(efi_handle c, efi_handle *drv,
					       struct efi_device_path *dp, bool recursive);
	efi_status(EFIAPI *disconnect_controller)(efi_handle c, efi_handle drv, efi_handle child);
	efi_status(EFIAPI *open_protocol)(efi_handle h, const efi_guid *g, void **iface,
					  efi_handle agent, efi_handle controller, uint32_t attr);
	efi_status(EFIAPI *close_protocol)(efi_handle h, const efi_guid *g, efi_handle agent,
					   efi_handle controller);
	efi_status(EFIAPI *open_protocol_information)(
	    efi_handle h, const efi_guid *g, struct efi_open_protocol_information_entry **buf,
	    uint64_t *count);
	efi_status(EFIAPI *protocols_per_handle)(efi_handle h, efi_guid ***buf, uint64_t *count);
	efi_status(EFIAPI *locate_handle_buffer)(uint32_t search, const efi_guid *g, void *key,
						 uint64_t *count, efi_handle **buf);
	efi_status(EFIAPI *locate_protocol)(const efi_guid *g, void *reg, void **iface);
	efi_status(EFIAPI *install_multiple_protocol_interfaces)(efi_handle *h, ...);
	efi_status(EFIAPI *uninstall_multiple_protocol_interfaces)(efi_handle h, ...);
	efi_status(EFIAPI *calculate_crc32)(const void *data, uint64_t size, uint32_t *crc);
	void(EFIAPI *copy_mem)(void *dst, const void *src, uint64_t n);
	void(EFIAPI *set_mem)(void *buf, uint64_t n, uint8_t v);
	efi_status(EFIAPI *create_event_ex)(uint32_t type, efi_tpl tpl, efi_event_notify fn,
					    const void *ctx, const efi_guid *group, efi_event *ev);
};
#define EFI_BOOT_SERVICES_SIGNATURE 0x56524553544f4f42ull

enum efi_reset_type { EfiResetCold, EfiResetWarm, EfiResetShutdown, EfiResetPlatformSpecific };

struct efi_runtime_services {
	struct efi_table_header hdr;
	efi_status(EFIAPI *get_time)(struct efi_time *t, struct efi_time_caps *caps);
	efi_status(EFIAPI *set_time)(const struct efi_time *t);
	efi_status(EFIAPI *get_wakeup_time)(bool *enabled, bool *pending, struct efi_time *t);
	efi_status(EFIAPI *set_wakeup_time)(bool enable, const struct efi_time *t);
	efi_status(EFIAPI *set_virtual_address_map)(uint64_t size, uint64_t desc_size,
						    uint32_t desc_ver,
						    struct efi_memory_descriptor *map);
	efi_status(EFIAPI *convert_pointer)(uint64_t debug, void **addr);
	efi_status(EFIAPI *get_variable)(const char16 *name, const efi_guid *vendor, uint32_t *attr,
					 uint64_t *size, void *data);
	efi_status(EFIAPI *get_next_variable_name)(uint64_t *size, char16 *name, efi_guid *vendor);
	efi_status(EFIAPI *set_variable)(const char16 *name, const efi_guid *vendor, uint32_t attr,
					 uint64_t size, const void *data);
	efi_status(EFIAPI *get_next_high_monotonic_count)(uint32_t *count);
	void(EFIAPI *reset_system)(uint32_t type, efi_status status, uint64_t size,
				   const void *data);
	efi_status(EFIAPI *update_capsule)(void **caps, uint64_t count, uint64_t sg);
	efi_status(EFIAPI *query_capsule_capabilities)(void **caps, uint64_t count, uint64_t *max,
						       uint32_t *reset);
	efi_status(EFIAPI *query_variable_info)(uint32_t attr, uint64_t *max_storage,
						uint64_t *remaining, uint64_t *max_size);
};
#define EFI_RUNTIME_SERVICES_SIGNATURE 0x56524553544e5552ull

struct efi_simple_text_output;
struct efi_simple_text_input;

struct efi_system_table {
	struct efi_table_header hdr;
	char16 *firmware_vendor;
	uint32_t firmware_revision;
	efi_handle con_in_handle;
	struct efi_simple_text_input *con_in;
	efi_handle con_out_handle;
	struct efi_simple_text_output *con_out;
	efi_handle stderr_handle;
	struct efi_simple_text_output *std_err;
	struct efi_runtime_services *runtime;
	struct efi_boot_services *boot;
	uint64_t n_tables;
	struct efi_configuration_table *tables;
};
#define EFI_SYSTEM_TABLE_SIGNATURE 0x5453595320494249ull

typedef efi_status(EFIAPI *efi_image_entry)(efi_handle image, struct efi_system_table *st);

/* ---- variable attributes -------------------------------------------------- */
#define EFI_VARIABLE_NON_VOLATILE	0x01u
#define EFI_VARIABLE_BOOTSERVICE_ACCESS 0x02u
#define EFI_VARIABLE_RUNTIME_ACCESS	0x04u
#define EFI_VARIABLE_AUTH_WRITE		0x30u /* time-based or counter auth */

#endif /* FW_EFI_EFI_H */
