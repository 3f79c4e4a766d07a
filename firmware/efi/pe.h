/* SPDX-License-Identifier: MIT */
/*
 * pe.h - PE32+ (x86_64) image loader for UEFI applications and drivers:
 * header checks, section copy, base relocations (DIR64 and HIGHLOW), entry
 * point. The file is untrusted: every offset and size is bounds-checked
 * against the file and against SizeOfImage before use.
 */
#ifndef FW_EFI_PE_H
#define FW_EFI_PE_H

#include "firmware/efi/util.h"

#define PE_SUBSYS_EFI_APP    10
#define PE_SUBSYS_EFI_BS_DRV 11
#define PE_SUBSYS_EFI_RT_DRV 12
#define PE_MAX_IMAGE	     (256u << 20) /* SizeOfImage we accept */

struct pe_image {
	uint64_t image_base;	/* preferred load address */
	uint32_t size_of_image; /* bytes the loaded image needs */
	uint32_t size_of_headers;
	uint32_t entry_rva;
	uint32_t section_align;
	uint16_t subsystem;
	uint16_t n_sections;
	uint32_t sections_off; /* file offset of the section table */
	uint32_t reloc_rva, reloc_size;
	uint32_t cert_off, cert_size; /* security directory (file offset) */
	bool relocs_stripped;
};

/* Check the headers and section table of file[0..len). 0, -FW_EBADMSG
 * (malformed), or -FW_ENOTSUP (not an x86_64 PE32+ image). */
int pe_parse(const void *file, uint64_t len, struct pe_image *out);

/* Load a parsed image into dest (img->size_of_image bytes, zeroed here)
 * and relocate it to run at load_addr (usually dest's own address).
 * Returns the number of relocations applied, or -errno: -FW_ENOTSUP when
 * load_addr differs from image_base and the image is marked relocations-
 * stripped (one without a relocation table and not so marked is position
 * independent, like Linux's EFI stub),
 * -FW_EBADMSG on a malformed relocation table. */
int pe_load(const void *file, uint64_t len, const struct pe_image *img, void *dest,
	    uint64_t load_addr);

#endif /* FW_EFI_PE_H */
