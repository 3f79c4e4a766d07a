/* SPDX-License-Identifier: MIT */
/*
 * linux.c - loading a bzImage for the Linux x86 64-bit boot protocol
 * (Linux Documentation/arch/x86/boot.rst: "The Real-Mode Kernel Header",
 * "Details of Header Fields", "The 64-bit Boot Protocol", and
 * Documentation/arch/x86/zero-page.rst for struct boot_params).
 *
 * The setup (real-mode) part is skipped: the protected-mode kernel is
 * copied to ARCH_HIGH_LOAD_GPA and entered in long mode at its 64-bit entry
 * (load address + 0x200), with %rsi pointing at a zero page that carries a
 * copy of the image's setup header plus what a boot loader fills in:
 * type_of_loader, cmd_line_ptr, ramdisk_image/size, the e820 table and
 * (protocol 2.14+) acpi_rsdp_addr. The image is untrusted: every field is
 * read with bounds checks and validated before anything is copied.
 */
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64/util.h"

/* Setup header fields, as offsets in the image and in boot_params. */
#define HDR_SETUP_SECTS	    0x1f1 /* u8 */
#define HDR_BOOT_FLAG	    0x1fe /* u16 0xAA55 */
#define HDR_JUMP	    0x200 /* u16: 0xEB, header end - 0x202 */
#define HDR_HEADER	    0x202 /* u32 "HdrS" */
#define HDR_VERSION	    0x206 /* u16 */
#define HDR_TYPE_OF_LOADER  0x210 /* u8 */
#define HDR_LOADFLAGS	    0x211 /* u8 */
#define HDR_RAMDISK_IMAGE   0x218 /* u32 */
#define HDR_RAMDISK_SIZE    0x21c /* u32 */
#define HDR_CMD_LINE_PTR    0x228 /* u32, 2.02+ */
#define HDR_INITRD_ADDR_MAX 0x22c /* u32, 2.03+ */
#define HDR_KERNEL_ALIGN    0x230 /* u32, 2.05+ */
#define HDR_RELOCATABLE	    0x234 /* u8, 2.05+ */
#define HDR_XLOADFLAGS	    0x236 /* u16, 2.12+ */
#define HDR_CMDLINE_SIZE    0x238 /* u32, 2.06+ */
#define HDR_PREF_ADDRESS    0x258 /* u64, 2.10+ */
#define HDR_INIT_SIZE	    0x260 /* u32, 2.10+ */
#define HDR_MIN_END	    0x264 /* the fields above lie before this */

#define HDR_MAGIC	   0x53726448u /* "HdrS" */
#define BOOT_FLAG_MAGIC	   0xaa55
#define LOADER_UNDEFINED   0xff
#define LOADFLAG_LOADED_HI 0x01
#define XLF_KERNEL_64	   0x01
#define ENTRY64_OFFSET	   0x200

/* boot_params (zero-page.rst) */
#define BP_ACPI_RSDP_ADDR    0x070 /* u64, protocol 2.14+ */
#define BP_EXT_RAMDISK_IMAGE 0x0c0 /* u32 */
#define BP_EXT_RAMDISK_SIZE  0x0c4 /* u32 */
#define BP_EXT_CMD_LINE_PTR  0x0c8 /* u32 */
#define BP_E820_ENTRIES	     0x1e8 /* u8 */
#define BP_E820_TABLE	     0x2d0 /* 128 x {u64 addr, u64 size, u32 type} */
#define BP_E820_MAX	     128
#define BP_SIZE		     0x1000

#define MIN_VERSION 0x0206
#define V2_10	    0x020a
#define V2_12	    0x020c
#define V2_14	    0x020e

struct bz_info {
	uint16_t version;
	uint64_t setup_size, kernel_size;
	uint32_t initrd_addr_max, cmdline_size;
	uint64_t kernel_end; /* end of the memory the kernel claims while booting */
	size_t hdr_end;	     /* end of the setup header to copy */
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a ? (v + a - 1) / a * a : v;
}

/* Low RAM end (below the MMIO hole) for mem_bytes of RAM, 0 if invalid. */
static uint64_t low_ram_end(uint64_t mem_bytes)
{
	struct arch_ram_region rr[2];
	size_t n;

	if (arch_ram_regions(mem_bytes, rr, &n))
		return 0;
	return rr[0].size;
}

/* img: the first len bytes of an image_len-byte bzImage (len <= image_len;
 * the setup header must lie within them). */
static int bz_parse(const uint8_t *img, size_t len, uint64_t image_len, struct bz_info *bz)
{
	uint32_t setup_sects, align = 0, init_size = 0;
	uint64_t pref = ARCH_HIGH_LOAD_GPA, start;

	memset(bz, 0, sizeof(*bz));
	if (!img || len < HDR_MIN_END || len > image_len)
		return -ENOEXEC;
	if (arch_get_le16(img + HDR_BOOT_FLAG) != BOOT_FLAG_MAGIC ||
	    arch_get_le32(img + HDR_HEADER) != HDR_MAGIC)
		return -ENOEXEC;
	bz->version = arch_get_le16(img + HDR_VERSION);
	if (bz->version < MIN_VERSION)
		return -ENOEXEC;
	/* The 64-bit entry is announced by XLF_KERNEL_64 (protocol 2.12+). */
	if (bz->version < V2_12 || !(arch_get_le16(img + HDR_XLOADFLAGS) & XLF_KERNEL_64))
		return -ENOEXEC;
	if (!(img[HDR_LOADFLAGS] & LOADFLAG_LOADED_HI))
		return -ENOEXEC; /* not a bzImage */
	setup_sects = img[HDR_SETUP_SECTS] ? img[HDR_SETUP_SECTS] : 4;
	bz->setup_size = (uint64_t)(setup_sects + 1) * 512;
	if (bz->setup_size >= image_len)
		return -ENOEXEC;
	bz->kernel_size = image_len - bz->setup_size;
	bz->hdr_end = HDR_HEADER + img[HDR_JUMP + 1];
	if (bz->hdr_end < HDR_MIN_END || bz->hdr_end > len || bz->hdr_end > BP_E820_TABLE)
		return -ENOEXEC;
	bz->initrd_addr_max = arch_get_le32(img + HDR_INITRD_ADDR_MAX);
	bz->cmdline_size = arch_get_le32(img + HDR_CMDLINE_SIZE);
	if (bz->version >= V2_10) {
		pref = arch_get_le64(img + HDR_PREF_ADDRESS);
		init_size = arch_get_le32(img + HDR_INIT_SIZE);
		if (img[HDR_RELOCATABLE])
			align = arch_get_le32(img + HDR_KERNEL_ALIGN);
	}
	/*
	 * The kernel decompresses to max(load address aligned to
	 * kernel_alignment, pref_address) and needs init_size bytes there
	 * (boot.rst "init_size"); never less than the image itself.
	 */
	start = align_up(ARCH_HIGH_LOAD_GPA, align);
	if (pref > start && pref < ARCH_MMIO_HOLE_START)
		start = pref;
	bz->kernel_end = start + init_size;
	if (bz->kernel_end < ARCH_HIGH_LOAD_GPA + bz->kernel_size)
		bz->kernel_end = ARCH_HIGH_LOAD_GPA + bz->kernel_size;
	return 0;
}

gpa_t arch_linux_initrd_gpa(const uint8_t *image, size_t image_len, uint64_t mem_bytes,
			    uint64_t size)
{
	return arch_linux_initrd_gpa_hdr(image, image_len, image_len, mem_bytes, size);
}

gpa_t arch_linux_initrd_gpa_hdr(const uint8_t *hdr, size_t hdr_len, uint64_t image_len,
				uint64_t mem_bytes, uint64_t size)
{
	struct bz_info bz;
	uint64_t limit = low_ram_end(mem_bytes), gpa;

	if (bz_parse(hdr, hdr_len, image_len, &bz) || !limit || !size)
		return 0;
	if ((uint64_t)bz.initrd_addr_max + 1 < limit)
		limit = (uint64_t)bz.initrd_addr_max + 1;
	if (size > limit)
		return 0;
	gpa = (limit - size) & ~0xfffull;
	return gpa >= align_up(bz.kernel_end, 0x1000) ? gpa : 0;
}

static int zero_page_e820(uint8_t *bp, uint64_t mem_bytes)
{
	struct arch_e820_entry e[ARCH_E820_MAX];
	size_t n;
	int r;

	r = arch_e820_build(mem_bytes, e, ARCH_E820_MAX, &n);
	if (r)
		return r;
	if (n > BP_E820_MAX)
		return -ENOSPC;
	for (size_t i = 0; i < n; i++) {
		uint8_t *d = bp + BP_E820_TABLE + 20 * i;

		arch_put_le64(d, e[i].addr);
		arch_put_le64(d + 8, e[i].size);
		arch_put_le32(d + 16, e[i].type);
	}
	bp[BP_E820_ENTRIES] = (uint8_t)n;
	return 0;
}

static int check_initrd(const struct bz_info *bz, const struct arch_boot_info *bi, uint64_t ram)
{
	if (!bi->initrd_gpa || !bi->initrd_size)
		return 0;
	if (bi->initrd_gpa < align_up(bz->kernel_end, 0x1000) || bi->initrd_gpa > ram ||
	    bi->initrd_size > ram - bi->initrd_gpa)
		return -ERANGE;
	if (bi->initrd_gpa + bi->initrd_size - 1 > bz->initrd_addr_max)
		return -ERANGE;
	return 0;
}

static int zero_page_fill(uint8_t *bp, const uint8_t *image, const struct bz_info *bz,
			  const struct arch_boot_info *bi)
{
	int r;

	memset(bp, 0, BP_SIZE);
	memcpy(bp + HDR_SETUP_SECTS, image + HDR_SETUP_SECTS, bz->hdr_end - HDR_SETUP_SECTS);
	bp[HDR_TYPE_OF_LOADER] = LOADER_UNDEFINED;
	arch_put_le32(bp + HDR_CMD_LINE_PTR, (uint32_t)ARCH_CMDLINE_GPA);
	arch_put_le32(bp + BP_EXT_CMD_LINE_PTR, (uint32_t)(ARCH_CMDLINE_GPA >> 32));
	if (bi->initrd_gpa && bi->initrd_size) {
		arch_put_le32(bp + HDR_RAMDISK_IMAGE, (uint32_t)bi->initrd_gpa);
		arch_put_le32(bp + HDR_RAMDISK_SIZE, (uint32_t)bi->initrd_size);
		arch_put_le32(bp + BP_EXT_RAMDISK_IMAGE, (uint32_t)(bi->initrd_gpa >> 32));
		arch_put_le32(bp + BP_EXT_RAMDISK_SIZE, (uint32_t)(bi->initrd_size >> 32));
	}
	if (bz->version >= V2_14)
		arch_put_le64(bp + BP_ACPI_RSDP_ADDR, bi->rsdp_gpa);
	r = zero_page_e820(bp, bi->mem_bytes);
	return r;
}

int arch_linux_load(uint8_t *low_mem, uint64_t low_size, const uint8_t *image, size_t image_len,
		    const struct arch_boot_info *bi, uint64_t *entry)
{
	struct arch_linux_payload pl;
	int r;

	r = arch_linux_load_hdr(low_mem, low_size, image, image_len, image_len, bi, entry, &pl);
	if (r)
		return r;
	memcpy(low_mem + pl.gpa, image + pl.offset, pl.len);
	return 0;
}

int arch_linux_load_hdr(uint8_t *low_mem, uint64_t low_size, const uint8_t *hdr, size_t hdr_len,
			uint64_t image_len, const struct arch_boot_info *bi, uint64_t *entry,
			struct arch_linux_payload *pl)
{
	uint64_t ram = low_ram_end(bi->mem_bytes), cl_len;
	uint8_t *bp, *dst, *cl;
	struct bz_info bz;
	int r;

	r = bz_parse(hdr, hdr_len, image_len, &bz);
	if (r)
		return r;
	if (!ram || ram > low_size)
		return -EINVAL;
	cl_len = bi->cmdline ? strlen(bi->cmdline) : 0;
	if (cl_len > bz.cmdline_size || cl_len + 1 > ARCH_CMDLINE_MAX)
		return -E2BIG;
	if (bz.kernel_end > ram)
		return -ENOMEM;
	r = check_initrd(&bz, bi, ram);
	if (r)
		return r;
	bp = arch_low_ptr(low_mem, low_size, ARCH_ZERO_PAGE_GPA, BP_SIZE);
	dst = arch_low_ptr(low_mem, low_size, ARCH_HIGH_LOAD_GPA, bz.kernel_size);
	cl = arch_low_ptr(low_mem, low_size, ARCH_CMDLINE_GPA, cl_len + 1);
	if (!bp || !dst || !cl)
		return -ENOSPC;
	r = zero_page_fill(bp, hdr, &bz, bi);
	if (r)
		return r;
	memcpy(cl, bi->cmdline ? bi->cmdline : "", cl_len + 1);
	*entry = ARCH_HIGH_LOAD_GPA + ENTRY64_OFFSET;
	pl->offset = bz.setup_size;
	pl->len = bz.kernel_size;
	pl->gpa = ARCH_HIGH_LOAD_GPA;
	return 0;
}
