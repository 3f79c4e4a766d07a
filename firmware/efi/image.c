// SPDX-License-Identifier: MIT
/*
 * image.c - LoadImage, StartImage, Exit, UnloadImage for PE32+ images,
 * with the LoadedImage and LoadedImageDevicePath protocols. Images come
 * from a buffer or from a device path ending in file nodes on a
 * SimpleFileSystem. Exit() returns to the StartImage that started the
 * image (efi_setjmp/efi_longjmp in entry.S).
 */
#include "firmware/efi/fw.h"
#include "firmware/efi/pe.h"
#include "firmware/lib/cpu.h"

#define IMAGE_MAGIC 0x67616d69u /* "imag" */
#define DP_MAX	    4096

struct image {
	struct efi_loaded_image li; /* first: the protocol interface */
	uint32_t magic;
	efi_handle handle;
	uint64_t pages_addr, pages;
	efi_image_entry entry;
	struct efi_device_path *dp; /* full path, LoadedImageDevicePath */
	bool started;
	struct efi_jmp jmp;
	efi_status exit_status;
	uint64_t exit_size;
	char16 *exit_data;
};

static struct image *image_of(efi_handle h)
{
	void *li;

	if (proto_get(h, &efi_loaded_image_guid, &li) != EFI_SUCCESS || !li)
		return NULL;
	struct image *img = li;

	return img->magic == IMAGE_MAGIC ? img : NULL;
}

/* The file named by the file-path nodes in dp, as one UCS-2 path. */
static char16 *dp_to_path(const struct efi_device_path *dp)
{
	size_t total = 1;
	const struct efi_device_path *n;
	char16 *out, *w;

	for (n = dp; !dp_is_end(n); n = dp_next(n)) {
		if (n->type != DP_MEDIA || n->subtype != DP_MEDIA_FILE || dp_len(n) < 6)
			return NULL;
		total += (dp_len(n) - 4) / 2 + 1;
	}
	w = out = efi_alloc(total * 2);
	if (!out)
		return NULL;
	for (n = dp; !dp_is_end(n); n = dp_next(n)) {
		const uint8_t *s = (const uint8_t *)n + 4;
		size_t len = (dp_len(n) - 4) / 2;

		if (w > out && w[-1] != '\\' && le16(s) != '\\')
			*w++ = '\\';
		for (size_t i = 0; i < len && le16(s + 2 * i); i++)
			*w++ = le16(s + 2 * i);
	}
	*w = 0;
	return out;
}

/* Read the file dp names from the SimpleFileSystem it is on. */
static efi_status load_from_path(const struct efi_device_path *dp, efi_handle *dev, void **buf,
				 uint64_t *size)
{
	const struct efi_device_path *rest = dp;
	efi_status st;
	char16 *path;

	st = proto_locate_device_path(&efi_simple_fs_guid, &rest, dev);
	if (st)
		return EFI_NOT_FOUND;
	path = dp_to_path(rest);
	if (!path)
		return EFI_NOT_FOUND;
	st = efi_fs_read_file(*dev, path, buf, size);
	efi_free(path);
	return st;
}

static efi_status image_place(struct image *img, const void *src, uint64_t size,
			      const struct pe_image *pe)
{
	uint32_t code = EfiLoaderCode, data = EfiLoaderData;
	uint64_t align = pe->section_align > EFI_PAGE_SIZE ? pe->section_align : EFI_PAGE_SIZE;
	uint64_t addr, base;
	efi_status st;
	int ret;

	if (pe->subsystem == PE_SUBSYS_EFI_BS_DRV)
		code = EfiBootServicesCode, data = EfiBootServicesData;
	else if (pe->subsystem == PE_SUBSYS_EFI_RT_DRV)
		code = EfiRuntimeServicesCode, data = EfiRuntimeServicesData;
	else if (pe->subsystem != PE_SUBSYS_EFI_APP)
		return EFI_UNSUPPORTED;
	if (align > (1u << 21) || (align & (align - 1)))
		return EFI_UNSUPPORTED;
	img->pages = (pe->size_of_image + align - 1) / EFI_PAGE_SIZE;
	/* prefer the linked address (no relocation), else anywhere */
	addr = pe->image_base;
	st = EFI_NOT_FOUND;
	if (pe->image_base && pe->image_base + img->pages * EFI_PAGE_SIZE <= efi_mem.limit)
		st = mem_allocate_pages(&efi_mem, AllocateAddress, code, img->pages, &addr);
	if (st)
		st = mem_allocate_pages(&efi_mem, AllocateAnyPages, code, img->pages, &addr);
	if (st)
		return st;
	base = (addr + align - 1) & ~(align - 1);
	ret = pe_load(src, size, pe, (void *)(uintptr_t)base, base);
	if (ret < 0) {
		mem_free_pages(&efi_mem, addr, img->pages);
		return ret == -FW_ENOTSUP ? EFI_UNSUPPORTED : EFI_LOAD_ERROR;
	}
	img->pages_addr = addr;
	img->li.image_base = (void *)(uintptr_t)base;
	img->li.image_size = pe->size_of_image;
	img->li.image_code_type = code;
	img->li.image_data_type = data;
	img->entry = (efi_image_entry)(uintptr_t)(base + pe->entry_rva);
	return EFI_SUCCESS;
}

efi_status EFIAPI efi_load_image(bool boot_policy, efi_handle parent, struct efi_device_path *dp,
				 void *src, uint64_t size, efi_handle *out)
{
	struct image *img = NULL;
	struct pe_image pe;
	efi_handle dev = NULL;
	void *file = NULL;
	efi_status st;

	(void)boot_policy;
	if (!out || !proto_handle_valid(parent) || (!src && !dp))
		return EFI_INVALID_PARAMETER;
	if (dp && !dp_size(dp, DP_MAX))
		return EFI_INVALID_PARAMETER;
	if (!src) {
		st = load_from_path(dp, &dev, &file, &size);
		if (st)
			return st;
		src = file;
	} else if (dp) {
		const struct efi_device_path *rest = dp;

		if (proto_locate_device_path(&efi_simple_fs_guid, &rest, &dev))
			dev = NULL;
	}
	st = EFI_LOAD_ERROR;
	int ret = pe_parse(src, size, &pe);

	if (ret)
		goto out;
	st = EFI_OUT_OF_RESOURCES;
	img = efi_alloc(sizeof(*img));
	if (!img)
		goto out;
	st = image_place(img, src, size, &pe);
	if (st)
		goto out;
	img->magic = IMAGE_MAGIC;
	img->li.revision = EFI_LOADED_IMAGE_REVISION;
	img->li.parent = parent;
	img->li.system_table = &efi_st;
	img->li.device = dev;
	img->li.unload = efi_unload_image;
	if (dp) {
		const struct efi_device_path *rest = dp;
		efi_handle h;

		img->dp = efi_dp_dup(dp);
		if (dev && !proto_locate_device_path(&efi_simple_fs_guid, &rest, &h))
			img->li.file_path = efi_dp_dup(rest);
	}
	st = proto_install(&img->handle, &efi_loaded_image_guid, &img->li);
	if (!st && img->dp)
		st = proto_install(&img->handle, &efi_loaded_image_dp_guid, img->dp);
	if (st)
		goto out;
	*out = img->handle;
	efi_free(file);
	return EFI_SUCCESS;
out:
	if (img && img->pages_addr)
		mem_free_pages(&efi_mem, img->pages_addr, img->pages);
	if (img && img->handle)
		proto_uninstall(img->handle, &efi_loaded_image_guid, &img->li);
	efi_free(img);
	efi_free(file);
	return st;
}

/* The image's entry and its Exit() (efi_longjmp back here): at CPL0,
 * as UEFI runs images. */
static uint64_t run_image(void *p)
{
	struct image *img = p;

	if (efi_setjmp(&img->jmp) == 0)
		return img->entry(img->handle, &efi_st);
	return img->exit_status;
}

/* From the boot manager's CPL3 side only the entry goes to CPL0
 * (efi_cpl0): the checks and the unloading stay native. */
efi_status EFIAPI efi_start_image(efi_handle h, uint64_t *exit_size, char16 **exit_data)
{
	struct image *img = image_of(h);
	efi_status st;

	if (!img || img->started)
		return EFI_INVALID_PARAMETER;
	img->started = true;
	st = efi_cpl0(run_image, img);
	if (exit_size)
		*exit_size = img->exit_size;
	if (exit_data)
		*exit_data = img->exit_data;
	/* applications are unloaded when they return; drivers stay if they succeeded */
	if (img->li.image_code_type == EfiLoaderCode || st != EFI_SUCCESS)
		efi_unload_image(h);
	return st;
}

efi_status EFIAPI efi_exit(efi_handle h, efi_status st, uint64_t size, char16 *data)
{
	struct image *img = image_of(h);

	if (!img)
		return EFI_INVALID_PARAMETER;
	if (!img->started) /* Exit of a loaded, never started image: unload it */
		return efi_unload_image(h);
	img->exit_status = st;
	img->exit_size = data ? size : 0;
	img->exit_data = data;
	efi_longjmp(&img->jmp, 1);
}

efi_status EFIAPI efi_unload_image(efi_handle h)
{
	struct image *img = image_of(h);

	if (!img)
		return EFI_INVALID_PARAMETER;
	img->magic = 0;
	proto_uninstall(h, &efi_loaded_image_guid, &img->li);
	if (img->dp)
		proto_uninstall(h, &efi_loaded_image_dp_guid, img->dp);
	mem_free_pages(&efi_mem, img->pages_addr, img->pages);
	efi_free(img->dp);
	efi_free(img->li.file_path);
	efi_free(img);
	return EFI_SUCCESS;
}
