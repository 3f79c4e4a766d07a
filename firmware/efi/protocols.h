/* SPDX-License-Identifier: MIT */
/*
 * protocols.h - the protocol interfaces vmlet's firmware provides (UEFI
 * 2.10): console text in/out (and the legacy console control), LoadedImage, BlockIo, DiskIo,
 * SimpleFileSystem/File, RNG; device path node layouts; their GUIDs
 * (defined in protocols.c).
 */
#ifndef FW_EFI_PROTOCOLS_H
#define FW_EFI_PROTOCOLS_H

#include "firmware/efi/efi.h"

extern const efi_guid efi_loaded_image_guid, efi_loaded_image_dp_guid, efi_simple_text_out_guid,
    efi_simple_text_in_guid, efi_block_io_guid, efi_disk_io_guid, efi_simple_fs_guid,
    efi_file_info_guid, efi_fs_info_guid, efi_fs_label_guid, efi_rng_guid, efi_rng_raw_guid,
    efi_global_variable_guid, efi_acpi20_guid, efi_acpi10_guid, efi_smbios3_guid, efi_smbios_guid,
    efi_load_file2_guid, efi_linux_initrd_media_guid, efi_vmlet_vendor_guid,
    efi_console_control_guid, efi_simple_text_in_ex_guid;

/* The name of a protocol boot loaders look for and this firmware does not
 * provide (graphics output, UGA draw, simple network, TCG2...), "" for
 * any other GUID. */
const char *efi_absent_protocol_name(const efi_guid *g);
/* Whether g is one of the protocols this firmware implements (whether or
 * not a handle has it right now). */
bool efi_protocol_provided(const efi_guid *g);

/* ---- console -------------------------------------------------------------- */
struct efi_input_key {
	uint16_t scan_code;
	char16 unicode_char;
};

struct efi_simple_text_input {
	efi_status(EFIAPI *reset)(struct efi_simple_text_input *self, bool extended);
	efi_status(EFIAPI *read_key_stroke)(struct efi_simple_text_input *self,
					    struct efi_input_key *key);
	efi_event wait_for_key;
};

struct efi_simple_text_output_mode {
	int32_t max_mode, mode, attribute, cursor_column, cursor_row;
	bool cursor_visible;
};

struct efi_simple_text_output {
	efi_status(EFIAPI *reset)(struct efi_simple_text_output *self, bool extended);
	efi_status(EFIAPI *output_string)(struct efi_simple_text_output *self, const char16 *s);
	efi_status(EFIAPI *test_string)(struct efi_simple_text_output *self, const char16 *s);
	efi_status(EFIAPI *query_mode)(struct efi_simple_text_output *self, uint64_t mode,
				       uint64_t *cols, uint64_t *rows);
	efi_status(EFIAPI *set_mode)(struct efi_simple_text_output *self, uint64_t mode);
	efi_status(EFIAPI *set_attribute)(struct efi_simple_text_output *self, uint64_t attr);
	efi_status(EFIAPI *clear_screen)(struct efi_simple_text_output *self);
	efi_status(EFIAPI *set_cursor_position)(struct efi_simple_text_output *self, uint64_t col,
						uint64_t row);
	efi_status(EFIAPI *enable_cursor)(struct efi_simple_text_output *self, bool visible);
	struct efi_simple_text_output_mode *mode;
};

/* Simple text input ex (UEFI 2.10 12.2): keys with their shift and toggle
 * state. On a serial line there are no modifier keys: every key has
 * EFI_SHIFT_STATE_VALID and no shift bit (a control character comes as
 * itself, e.g. 0x18 for Ctrl-X, which GRUB maps as it does without Ex). No
 * key notifications (RegisterKeyNotify: EFI_UNSUPPORTED), no toggle state
 * to set (SetState: EFI_UNSUPPORTED). */
#define EFI_SHIFT_STATE_VALID  0x80000000u
#define EFI_TOGGLE_STATE_VALID 0x80u

struct efi_key_data {
	struct efi_input_key key;
	uint32_t shift_state;
	uint8_t toggle_state;
};

struct efi_simple_text_input_ex {
	efi_status(EFIAPI *reset)(struct efi_simple_text_input_ex *self, bool extended);
	efi_status(EFIAPI *read_key_stroke_ex)(struct efi_simple_text_input_ex *self,
					       struct efi_key_data *key);
	efi_event wait_for_key_ex;
	efi_status(EFIAPI *set_state)(struct efi_simple_text_input_ex *self, uint8_t *toggle);
	efi_status(EFIAPI *register_key_notify)(struct efi_simple_text_input_ex *self,
						struct efi_key_data *key, void *fn, void **handle);
	efi_status(EFIAPI *unregister_key_notify)(struct efi_simple_text_input_ex *self,
						  void *handle);
};

/*
 * Console control: the pre-UEFI (EFI 1.10, Intel framework) protocol that
 * switches a firmware's screen between text and graphics. No UEFI spec
 * protocol, but shim and GRUB look for it (GRUB asks for text mode before
 * it prints); vmlet's console is text only: GetMode says text, without
 * graphics (GOP/UGA) and with input unlocked; SetMode accepts text and
 * refuses graphics (EFI_UNSUPPORTED); LockStdIn is not supported.
 */
enum efi_screen_mode { EFI_SCREEN_TEXT, EFI_SCREEN_GRAPHICS, EFI_SCREEN_MAX };

struct efi_console_control {
	efi_status(EFIAPI *get_mode)(struct efi_console_control *self, uint32_t *mode,
				     bool *gop_uga_exists, bool *std_in_locked);
	efi_status(EFIAPI *set_mode)(struct efi_console_control *self, uint32_t mode);
	efi_status(EFIAPI *lock_std_in)(struct efi_console_control *self, const char16 *password);
};

/* ---- loaded image --------------------------------------------------------- */
struct efi_loaded_image {
	uint32_t revision;
	efi_handle parent;
	struct efi_system_table *system_table;
	efi_handle device;
	struct efi_device_path *file_path;
	void *reserved;
	uint32_t load_options_size;
	void *load_options;
	void *image_base;
	uint64_t image_size;
	uint32_t image_code_type, image_data_type;
	efi_status(EFIAPI *unload)(efi_handle image);
};
#define EFI_LOADED_IMAGE_REVISION 0x1000

/* ---- block devices and files ---------------------------------------------- */
struct efi_block_io_media {
	uint32_t media_id;
	bool removable, present, logical_partition, read_only, write_caching;
	uint32_t block_size, io_align;
	uint64_t last_block;
	uint64_t lowest_aligned_lba; /* revision 2 */
	uint32_t logical_blocks_per_physical;
	uint32_t optimal_transfer_granularity; /* revision 3 */
};

struct efi_block_io {
	uint64_t revision;
	struct efi_block_io_media *media;
	efi_status(EFIAPI *reset)(struct efi_block_io *self, bool extended);
	efi_status(EFIAPI *read_blocks)(struct efi_block_io *self, uint32_t media_id, uint64_t lba,
					uint64_t size, void *buf);
	efi_status(EFIAPI *write_blocks)(struct efi_block_io *self, uint32_t media_id, uint64_t lba,
					 uint64_t size, const void *buf);
	efi_status(EFIAPI *flush_blocks)(struct efi_block_io *self);
};
#define EFI_BLOCK_IO_REVISION3 0x2001f

struct efi_disk_io {
	uint64_t revision;
	efi_status(EFIAPI *read_disk)(struct efi_disk_io *self, uint32_t media_id, uint64_t off,
				      uint64_t size, void *buf);
	efi_status(EFIAPI *write_disk)(struct efi_disk_io *self, uint32_t media_id, uint64_t off,
				       uint64_t size, const void *buf);
};

struct efi_file {
	uint64_t revision;
	efi_status(EFIAPI *open)(struct efi_file *self, struct efi_file **out, const char16 *name,
				 uint64_t mode, uint64_t attr);
	efi_status(EFIAPI *close)(struct efi_file *self);
	efi_status(EFIAPI *delete_file)(struct efi_file *self);
	efi_status(EFIAPI *read)(struct efi_file *self, uint64_t *size, void *buf);
	efi_status(EFIAPI *write)(struct efi_file *self, uint64_t *size, const void *buf);
	efi_status(EFIAPI *get_position)(struct efi_file *self, uint64_t *pos);
	efi_status(EFIAPI *set_position)(struct efi_file *self, uint64_t pos);
	efi_status(EFIAPI *get_info)(struct efi_file *self, const efi_guid *type, uint64_t *size,
				     void *buf);
	efi_status(EFIAPI *set_info)(struct efi_file *self, const efi_guid *type, uint64_t size,
				     const void *buf);
	efi_status(EFIAPI *flush)(struct efi_file *self);
};
#define EFI_FILE_MODE_READ   0x1ull
#define EFI_FILE_MODE_WRITE  0x2ull
#define EFI_FILE_MODE_CREATE 0x8000000000000000ull
#define EFI_FILE_READ_ONLY   0x01ull
#define EFI_FILE_HIDDEN	     0x02ull
#define EFI_FILE_SYSTEM	     0x04ull
#define EFI_FILE_DIRECTORY   0x10ull
#define EFI_FILE_ARCHIVE     0x20ull

struct efi_file_info {
	uint64_t size, file_size, physical_size;
	struct efi_time create_time, last_access_time, modification_time;
	uint64_t attribute;
	char16 file_name[];
};

struct efi_fs_info {
	uint64_t size;
	bool read_only;
	uint64_t volume_size, free_space;
	uint32_t block_size;
	char16 volume_label[]; /* at offset 36 */
};

struct efi_simple_fs {
	uint64_t revision;
	efi_status(EFIAPI *open_volume)(struct efi_simple_fs *self, struct efi_file **root);
};

/* ---- RNG ------------------------------------------------------------------ */
struct efi_rng {
	efi_status(EFIAPI *get_info)(struct efi_rng *self, uint64_t *size, efi_guid *algs);
	efi_status(EFIAPI *get_rng)(struct efi_rng *self, const efi_guid *alg, uint64_t len,
				    uint8_t *out);
};

/* ---- LoadFile2 ------------------------------------------------------------ */
struct efi_load_file2 {
	efi_status(EFIAPI *load_file)(struct efi_load_file2 *self, struct efi_device_path *dp,
				      bool boot_policy, uint64_t *size, void *buf);
};

/* ---- device path nodes ---------------------------------------------------- */
#define DP_HW		0x01
#define DP_HW_PCI	0x01
#define DP_HW_MEMMAP	0x03
#define DP_HW_VENDOR	0x04
#define DP_ACPI		0x02
#define DP_MSG		0x03
#define DP_MSG_SATA	0x12
#define DP_MEDIA	0x04
#define DP_MEDIA_HD	0x01
#define DP_MEDIA_CDROM	0x02
#define DP_MEDIA_VENDOR 0x03
#define DP_MEDIA_FILE	0x04

struct dp_memmap {
	struct efi_device_path h;
	uint32_t mem_type;
	uint64_t start, end;
} __attribute__((packed));

struct dp_vendor {
	struct efi_device_path h;
	efi_guid guid;
} __attribute__((packed));

struct dp_pci {
	struct efi_device_path h;
	uint8_t function, device;
} __attribute__((packed));

struct dp_sata {
	struct efi_device_path h;
	uint16_t hba_port, pm_port, lun; /* pm_port 0xFFFF: attached directly */
} __attribute__((packed));

struct dp_acpi {
	struct efi_device_path h;
	uint32_t hid, uid;
} __attribute__((packed));

struct dp_hd {
	struct efi_device_path h;
	uint32_t partition_number;
	uint64_t start, size;
	uint8_t signature[16];
	uint8_t mbr_type, signature_type; /* 2 = GPT, 2 = GUID */
} __attribute__((packed));

/* UEFI 2.10 §10.3.5.2: an El Torito boot image; start and size in the
 * medium's blocks */
struct dp_cdrom {
	struct efi_device_path h;
	uint32_t boot_entry;
	uint64_t start, size;
} __attribute__((packed));

struct dp_file {
	struct efi_device_path h;
	char16 name[];
} __attribute__((packed));

static inline void dp_set(struct efi_device_path *n, uint8_t type, uint8_t sub, uint16_t len)
{
	n->type = type;
	n->subtype = sub;
	n->length[0] = (uint8_t)len;
	n->length[1] = (uint8_t)(len >> 8);
}

#endif /* FW_EFI_PROTOCOLS_H */
