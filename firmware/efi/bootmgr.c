// SPDX-License-Identifier: MIT
/*
 * bootmgr.c - the boot manager: the active Boot#### options BootOrder
 * lists (EFI_LOAD_OPTION: a device path to a file on a FAT file system,
 * full or starting at the partition's HD() or El Torito image's CDROM()
 * node, and optional data handed over as load options), then
 * \EFI\BOOT\BOOTX64.EFI on the disks and CD-ROMs in the order the VMM
 * gives (the VM's bootOrder, then disk order), then on
 * every other file system (RAM disks). An image that returns hands over to
 * the next candidate.
 */
#include "firmware/abi.h"
#include "firmware/efi/fw.h"

#define BOOT_ORDER_MAX 64
#define PATH_MAX16     260

static const char16 fallback[] = u"\\EFI\\BOOT\\BOOTX64.EFI";

/* Device path a + the nodes of b (both end-terminated): pool memory. */
static struct efi_device_path *dp_concat(const struct efi_device_path *a,
					 const struct efi_device_path *b)
{
	size_t la = dp_size(a, 4096), lb = dp_size(b, 4096);
	uint8_t *p = la && lb ? efi_alloc(la - 4 + lb) : NULL;

	if (p) {
		memcpy(p, a, la - 4);
		memcpy(p + la - 4, b, lb);
	}
	return (struct efi_device_path *)p;
}

/* Load path (on the file system of handle fs) and start it. */
static void boot_file(efi_handle parent, efi_handle fs, const char16 *path,
		      const struct efi_device_path *file_dp, const void *opt, uint32_t opt_size)
{
	struct efi_device_path *dev_dp, *fdp = NULL, *dp;
	struct efi_loaded_image *li;
	efi_handle img;
	uint64_t size;
	void *buf;
	efi_status st;

	if (efi_fs_read_file(fs, path, &buf, &size))
		return;
	if (proto_get(fs, &efi_device_path_guid, (void **)&dev_dp))
		dev_dp = NULL;
	if (!file_dp)
		file_dp = fdp = efi_dp_file(path);
	dp = file_dp && dev_dp ? dp_concat(dev_dp, file_dp) : NULL;
	st = efi_load_image(false, parent, dp, buf, size, &img);
	efi_free(buf);
	efi_free(fdp);
	efi_free(dp);
	if (st) {
		efi_log("cannot load a boot image: status %llx", (unsigned long long)st);
		return;
	}
	if (opt_size && !proto_get(img, &efi_loaded_image_guid, (void **)&li)) {
		li->load_options = efi_alloc(opt_size);
		if (li->load_options) {
			memcpy(li->load_options, opt, opt_size);
			li->load_options_size = opt_size;
		}
	}
	efi_log("starting a boot image");
	st = efi_start_image(img, NULL, NULL);
	efi_log("the boot image returned status %llx", (unsigned long long)st);
}

/* The file-path nodes of dp as one path, false when dp has anything else. */
static bool dp_path(const struct efi_device_path *dp, size_t max, char16 *out)
{
	size_t n = 0;

	for (; max >= 4 && !dp_is_end(dp); max -= dp_len(dp), dp = dp_next(dp)) {
		size_t len = dp_len(dp);

		if (len < 4 || len > max || dp->type != DP_MEDIA || dp->subtype != DP_MEDIA_FILE)
			return false;
		const char16 *s = (const char16 *)((const uint8_t *)dp + 4);

		for (size_t i = 0; i < (len - 4) / 2 && s[i]; i++) {
			if (n + 2 >= PATH_MAX16 || (s[i] == '\\' && n && out[n - 1] == '\\'))
				continue;
			out[n++] = s[i];
		}
		if (n && n + 1 < PATH_MAX16 && out[n - 1] != '\\' && len + 4 <= max &&
		    !dp_is_end(dp_next(dp)))
			out[n++] = '\\';
	}
	out[n] = 0;
	return n > 0 && max >= 4 && dp_is_end(dp); /* terminated inside the option */
}

/* Where the option's device path continues past file system handle h's
 * own path (full form, or the short form from h's HD() or CDROM() node),
 * or NULL. */
static const struct efi_device_path *dp_rest(efi_handle h, const struct efi_device_path *dp,
					     size_t max)
{
	const struct efi_device_path *hdp, *last = NULL;
	size_t n;

	if (proto_get(h, &efi_device_path_guid, (void **)&hdp) || !(n = dp_size(hdp, 4096)))
		return NULL;
	if (n - 4 <= max && !memcmp(hdp, dp, n - 4))
		return (const struct efi_device_path *)((const uint8_t *)dp + n - 4);
	for (const struct efi_device_path *p = hdp; !dp_is_end(p); p = dp_next(p))
		last = p;
	if (last && last->type == DP_MEDIA &&
	    (last->subtype == DP_MEDIA_HD || last->subtype == DP_MEDIA_CDROM) &&
	    dp_len(last) <= max && !memcmp(last, dp, dp_len(last)))
		return dp_next(dp);
	return NULL;
}

/* Boot#### (EFI_LOAD_OPTION): attributes, path length, description,
 * device path, optional data. */
static void boot_option(efi_handle parent, uint16_t num, efi_handle *hs, uint64_t nfs)
{
	char16 name[9] = u"Boot0000", path[PATH_MAX16];
	uint64_t size = 0;
	uint8_t *o = NULL;
	size_t d = 6, fpl;

	for (int i = 0; i < 4; i++)
		name[7 - i] = (char16) "0123456789ABCDEF"[(num >> (4 * i)) & 15];
	if (efi_rt.get_variable(name, &efi_global_variable_guid, NULL, &size, NULL) !=
		EFI_BUFFER_TOO_SMALL ||
	    size < 10 || size > 65536 || !(o = efi_alloc(size)) ||
	    efi_rt.get_variable(name, &efi_global_variable_guid, NULL, &size, o))
		goto out;
	fpl = (size_t)(o[4] | o[5] << 8);
	while (d + 1 < size && (o[d] | o[d + 1]))
		d += 2;
	d += 2;
	if (!(o[0] & 1) || d > size || fpl > size - d) /* LOAD_OPTION_ACTIVE */
		goto out;
	const struct efi_device_path *dp = (const void *)(o + d), *rest;

	for (uint64_t i = 0; i < nfs; i++) {
		rest = dp_rest(hs[i], dp, fpl);
		if (!rest || !dp_path(rest, fpl - (size_t)((const uint8_t *)rest - o - d), path))
			continue;
		efi_log("Boot%c%c%c%c", (char)name[4], (char)name[5], (char)name[6], (char)name[7]);
		uint16_t cur = num;

		efi_rt.set_variable(u"BootCurrent", &efi_global_variable_guid,
				    EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS,
				    2, &cur);
		boot_file(parent, hs[i], path, rest, o + d + fpl, (uint32_t)(size - d - fpl));
		break;
	}
out:
	efi_free(o);
}

/* Does h's device path lead through loc (FW_ABI_EFI_BOOT_LOCS: devfn in
 * bits 7:0, AHCI port + 1 in bits 15:8)? */
static bool on_loc(efi_handle h, uint32_t loc)
{
	const struct efi_device_path *dp;
	uint32_t devfn = loc & 0xff, port1 = loc >> 8;

	if (proto_get(h, &efi_device_path_guid, (void **)&dp) || !dp_size(dp, 4096))
		return false;
	for (; !dp_is_end(dp); dp = dp_next(dp))
		if (dp->type == DP_HW && dp->subtype == DP_HW_PCI) {
			const struct dp_pci *pci = (const struct dp_pci *)dp;
			const struct efi_device_path *n = dp_next(dp);
			bool sata = !dp_is_end(n) && n->type == DP_MSG && n->subtype == DP_MSG_SATA;

			if (pci->device != (devfn >> 3) || pci->function != (devfn & 7) ||
			    sata != (port1 != 0))
				return false;
			return !sata || ((const struct dp_sata *)n)->hba_port == port1 - 1;
		}
	return false;
}

/* The VMM's disks in boot order as locations (on_loc): its own when it
 * says (FW_ABI_EFI_BOOT_LOCS), else disk n as the n-th virtio-blk
 * function (FW_ABI_EFI_BOOT_ORDER). Returns the count. */
static uint32_t boot_locs(uint16_t *locs)
{
	uint16_t order[BOOT_ORDER_MAX];
	uint32_t len = 0, n = 0;

	if (efi_port_call(FW_ABI_EFI_BOOT_LOCS, locs, BOOT_ORDER_MAX * 2, &len) == FW_ABI_EFI_OK)
		return len / 2 <= BOOT_ORDER_MAX ? len / 2 : 0;
	if (efi_port_call(FW_ABI_EFI_BOOT_ORDER, order, sizeof(order), &len) != FW_ABI_EFI_OK)
		return 0;
	for (uint32_t k = 0; k < len / 2 && k < BOOT_ORDER_MAX; k++) {
		int devfn = efi_vblk_devfn(order[k]);

		locs[n++] = devfn < 0 ? FW_ABI_EFI_LOC_NONE : (uint16_t)devfn;
	}
	return n;
}

static void boot_fallback(efi_handle parent, efi_handle *hs, uint64_t n, const char *cmdline)
{
	uint16_t locs[BOOT_ORDER_MAX];
	uint32_t len = boot_locs(locs);
	uint8_t *tried = efi_alloc(n + 1);
	size_t clen = cmdline ? strnlen(cmdline, 4095) : 0;
	char16 *opt = clen ? efi_alloc((clen + 1) * 2) : NULL;

	if (!tried)
		return;
	if (opt)
		efi_ascii_to16(opt, cmdline, clen + 1);
	/* the VMM's disks first, in its order; then every file system */
	for (uint32_t k = 0; k <= len; k++) {
		if (k < len && locs[k] == FW_ABI_EFI_LOC_NONE)
			continue;
		for (uint64_t i = 0; i < n; i++) {
			if (tried[i] || (k < len && !on_loc(hs[i], locs[k])))
				continue;
			tried[i] = 1;
			boot_file(parent, hs[i], fallback, NULL, opt,
				  opt ? (uint32_t)(clen + 1) * 2 : 0);
		}
	}
	efi_free(opt);
	efi_free(tried);
}

void efi_boot_run(efi_handle parent, const char *cmdline)
{
	uint16_t order[BOOT_ORDER_MAX];
	uint64_t size = sizeof(order), n = 0;
	efi_handle *hs = NULL;

	if (efi_bs.locate_handle_buffer(ByProtocol, &efi_simple_fs_guid, NULL, &n, &hs)) {
		efi_log("no file systems: nothing to boot");
		return;
	}
	if (efi_rt.get_variable(u"BootOrder", &efi_global_variable_guid, NULL, &size, order))
		size = 0;
	for (uint64_t k = 0; k < size / 2; k++)
		boot_option(parent, order[k], hs, n);
	boot_fallback(parent, hs, n, cmdline);
	efi_free(hs);
}
