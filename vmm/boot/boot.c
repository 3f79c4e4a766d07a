/* SPDX-License-Identifier: MIT */
/*
 * boot.c - put the guest's first instructions in place: the boot GDT and
 * identity page tables, ACPI and SMBIOS tables, the kernel (PVH ELF or bzImage, told
 * apart by their magic), initrd and command line, and the BSP's registers.
 * The structures come from arch/ builders; this file reads the files, picks
 * addresses and makes the ioctls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "vmm/boot/bios_boot.h"
#include "vmm/boot/fw_platform.h"
#include "vmm/boot/ovmf_boot.h"
#include "vmm/boot/efi_boot.h"
#include "vmm/util/file.h"
#include "vmm/util/log.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

#define BOOT_MAX_FILE (2ull << 30)

enum { BOOT_DEFER_NONE, BOOT_DEFER_BZIMAGE, BOOT_DEFER_ALL };

enum boot_format { BOOT_FMT_UNKNOWN = 0, BOOT_FMT_PVH_ELF, BOOT_FMT_BZIMAGE };

/*
 * A kernel or initrd. In memory: data holds the whole file (len == size),
 * or, with fd >= 0, only its first len bytes: the rest is read from fd
 * straight into guest RAM once its place is known (boot_place_initrd(),
 * boot_load_bzimage()), so the bulk of the file is neither buffered nor
 * copied a second time, and guest RAM is written once.
 */
struct boot_file {
	uint8_t *data;
	size_t len;
	bool owned;
	int fd;	       /* >= 0: the file, open, for what data does not hold */
	uint64_t size; /* the file's size */
};

static struct boot_file boot_file_mem(const void *data, size_t len)
{
	return (struct boot_file){.data = (uint8_t *)data, .len = len, .fd = -1, .size = len};
}

static void boot_file_release(struct boot_file *f);
static enum boot_format boot_detect(const struct boot_file *k);

/* Read len bytes at off from fd into dst, in as few preads as the kernel
 * allows. 0 or -errno (logged; a short file is -EIO). */
static int boot_pread(int fd, uint8_t *dst, size_t len, uint64_t off, const char *what)
{
	size_t done = 0;
	ssize_t r;

	while (done < len) {
		r = pread(fd, dst + done, len - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return error_errno(r < 0 ? -errno : -EIO, "boot: cannot read the %s", what);
		done += (size_t)r;
	}
	return 0;
}

/* How much of a file of size bytes boot_read_file() buffers: nothing with
 * BOOT_DEFER_ALL, with BOOT_DEFER_BZIMAGE (the caller reads the rest into
 * guest RAM) only the setup header of a bzImage (boot_detect()'s test),
 * else the whole file. */
static size_t boot_buffered(const uint8_t *head, size_t head_len, uint64_t size, int defer)
{
	const struct boot_file h = boot_file_mem(head, head_len);

	if (defer == BOOT_DEFER_ALL)
		return 0;
	if (defer == BOOT_DEFER_BZIMAGE && boot_detect(&h) == BOOT_FMT_BZIMAGE)
		return head_len;
	return (size_t)size;
}

/* Read a kernel or initrd: beneath root when it came from the manifest
 * (kernelBoot.container, under --disk-root), a regular file only (a FIFO
 * or a device node is refused before it is opened: vmm/util/file.h).
 * defer: BOOT_DEFER_NONE (all of it in f->data), _BZIMAGE (a bzImage's
 * first ARCH_LINUX_HDR_LEN bytes only, f->fd kept open), _ALL (nothing
 * read, f->fd kept open). */
static int boot_read_file(const char *what, const char *path, const char *root, int defer,
			  struct boot_file *f)
{
	const struct file_where w = {.root = root, .follow = !root};
	size_t head, keep;
	struct stat st;
	uint8_t *grown;
	int fd, ret = 0;

	*f = boot_file_mem(NULL, 0);
	fd = file_open(&w, path, O_RDONLY);
	if (fd < 0)
		return error_errno(fd, "boot: cannot open %s '%s'%s", what, path, file_why(fd));
	if (fstat(fd, &st) || (uint64_t)st.st_size > BOOT_MAX_FILE) {
		ret = error_errno(-EINVAL, "boot: %s '%s' is not a regular file below 2 GiB", what,
				  path);
		goto out;
	}
	f->size = (uint64_t)st.st_size;
	head = defer == BOOT_DEFER_ALL ? 0 : (size_t)f->size;
	if (defer == BOOT_DEFER_BZIMAGE && head > ARCH_LINUX_HDR_LEN)
		head = ARCH_LINUX_HDR_LEN;
	f->data = malloc(head ? head : 1);
	if (!f->data) {
		ret = -ENOMEM;
		goto out;
	}
	f->owned = true;
	ret = boot_pread(fd, f->data, head, 0, what);
	f->len = head;
	keep = ret ? 0 : boot_buffered(f->data, head, f->size, defer);
	if (!ret && keep > head) { /* not a bzImage: all of it after all */
		grown = realloc(f->data, keep);
		if (!grown) {
			ret = -ENOMEM;
			goto out;
		}
		f->data = grown;
		ret = boot_pread(fd, f->data + head, keep - head, head, what);
		f->len = keep;
	}
	if (!ret && f->len < f->size) {
		f->fd = fd; /* the rest goes straight to guest RAM */
		return 0;
	}
out:
	close(fd);
	if (ret)
		boot_file_release(f);
	return ret;
}

static void boot_file_release(struct boot_file *f)
{
	if (f->owned)
		free(f->data);
	if (f->fd >= 0)
		close(f->fd);
	*f = boot_file_mem(NULL, 0);
}

static enum boot_format boot_detect(const struct boot_file *k)
{
	if (k->len >= 4 && !memcmp(k->data, "\177ELF", 4))
		return BOOT_FMT_PVH_ELF;
	/* Linux boot protocol: "HdrS" at 0x202 (Documentation/arch/x86/boot.rst) */
	if (k->len >= 0x206 && !memcmp(k->data + 0x202, "HdrS", 4))
		return BOOT_FMT_BZIMAGE;
	return BOOT_FMT_UNKNOWN;
}

static int boot_acpi(struct vm *vm, gpa_t *rsdp, size_t *used)
{
	struct arch_acpi_config c;
	uint8_t *buf = guest_mem_ptr(&vm->mem, ARCH_ACPI_GPA, ARCH_ACPI_MAX);
	int ret;

	fw_platform_acpi_config(vm, &c);
	*rsdp = 0;
	*used = 0;
	if (!vm->cfg->acpi)
		return 0;
	if (!buf)
		return error_errno(-ENOSPC, "boot: no RAM for the ACPI tables");
	ret = arch_acpi_build(buf, ARCH_ACPI_MAX, ARCH_ACPI_GPA, &c, used);
	if (ret)
		return error_errno(ret, "boot: cannot build the ACPI tables");
	*rsdp = ARCH_ACPI_GPA; /* the RSDP comes first */
	return 0;
}

int boot_place_smbios(const struct vm_config *cfg, struct guest_mem *mem, gpa_t after)
{
	const struct arch_smbios_ids ids = {cfg->firmware_serial, cfg->firmware_uuid, 0};
	gpa_t gpa = (after + 15) & ~15ull;
	uint8_t *buf;
	size_t used;
	int ret;

	if (gpa < ARCH_SMBIOS_GPA)
		gpa = ARCH_SMBIOS_GPA;
	buf = gpa < ARCH_SMBIOS_END ? guest_mem_ptr(mem, gpa, ARCH_SMBIOS_END - gpa) : NULL;
	if (!buf)
		return error_errno(-ENOSPC, "smbios: no room in the BIOS area below 1 MiB");
	ret = arch_smbios_build(buf, ARCH_SMBIOS_END - gpa, gpa, &ids, &used);
	if (ret == -EINVAL)
		error("smbios: firmware.uuid '%s' is not a UUID", cfg->firmware_uuid);
	else if (ret)
		error_errno(ret, "smbios: the tables do not fit in the BIOS area");
	return ret;
}

/* Copy the initrd to gpa (already chosen) after checking it lies in RAM. */
static int boot_place_initrd(struct vm *vm, const struct boot_file *i, gpa_t gpa)
{
	uint8_t *dst = guest_mem_ptr(&vm->mem, gpa, i->size);

	if (!gpa || !dst)
		return error_errno(
		    -ENOSPC, "boot: initrd of %llu bytes does not fit in guest RAM below 4 GiB",
		    (unsigned long long)i->size);
	if (i->len)
		memcpy(dst, i->data, i->len);
	return i->fd >= 0 ? boot_pread(i->fd, dst + i->len, i->size - i->len, i->len, "initrd") : 0;
}

/* A bzImage: from the buffer, or with only its header buffered, the
 * protected-mode kernel read from the file to its place in guest RAM. */
static int boot_load_bzimage(struct vm *vm, const struct boot_file *k, struct arch_boot_info *bi,
			     uint64_t *entry64)
{
	uint8_t *low = vm->mem.r[0].host, *dst;
	struct arch_linux_payload pl;
	int ret;

	if (k->fd < 0)
		return arch_linux_load(low, vm->mem.r[0].size, k->data, k->len, bi, entry64);
	ret =
	    arch_linux_load_hdr(low, vm->mem.r[0].size, k->data, k->len, k->size, bi, entry64, &pl);
	if (ret)
		return ret;
	dst = guest_mem_ptr(&vm->mem, pl.gpa, pl.len);
	if (!dst || pl.offset < k->len || pl.offset > k->size)
		return -ENOEXEC;
	return boot_pread(k->fd, dst, pl.len, pl.offset, "kernel");
}

/* PVH has no loader-imposed address: the top of RAM below the hole, page
 * aligned, well above the kernel image. */
static gpa_t boot_pvh_initrd_gpa(struct vm *vm, size_t kernel_len, size_t len)
{
	uint64_t low_end = vm->mem.r[0].size;
	uint64_t floor = ARCH_HIGH_LOAD_GPA + 2 * (uint64_t)kernel_len;

	if (len > low_end || low_end - len < floor)
		return 0;
	return (low_end - len) & ~0xfffull;
}

static int boot_set_regs(struct vm *vm, const struct kvm_regs *regs,
			 const struct kvm_sregs *arch_sregs)
{
	struct vcpu *bsp = &vm->vcpus[0];
	struct kvm_sregs sregs;
	uint64_t apic_base;

	if (ioctl(bsp->fd, KVM_GET_SREGS, &sregs) < 0)
		return error_errno(-errno, "boot: KVM_GET_SREGS");
	/* arch/ describes the CPU mode; the APIC base stays what KVM and the
	 * MSR setup made it */
	apic_base = sregs.apic_base;
	sregs = *arch_sregs;
	sregs.apic_base = apic_base;
	memset(sregs.interrupt_bitmap, 0, sizeof(sregs.interrupt_bitmap));
	if (ioctl(bsp->fd, KVM_SET_SREGS, &sregs) < 0)
		return error_errno(-errno, "boot: KVM_SET_SREGS");
	if (ioctl(bsp->fd, KVM_SET_REGS, regs) < 0)
		return error_errno(-errno, "boot: KVM_SET_REGS");
	return 0;
}

static int boot_load(struct vm *vm, const struct boot_file *k, const struct boot_file *i,
		     struct arch_boot_info *bi, struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	uint8_t *low = vm->mem.r[0].host;
	uint64_t low_size = vm->mem.r[0].size, entry64 = 0;
	uint32_t entry32 = 0;
	int ret;

	switch (boot_detect(k)) {
	case BOOT_FMT_PVH_ELF:
		if (i->size) {
			bi->initrd_gpa = boot_pvh_initrd_gpa(vm, k->len, i->size);
			bi->initrd_size = i->size;
			ret = boot_place_initrd(vm, i, bi->initrd_gpa);
			if (ret)
				return ret;
		}
		ret = arch_pvh_load(low, low_size, k->data, k->len, &entry32);
		if (ret)
			return error_errno(
			    ret, "boot: not a loadable PVH ELF (needs a XEN_ELFNOTE_PHYS32_ENTRY "
				 "note and segments in low RAM)");
		ret = arch_pvh_start_info_build(low, low_size, bi);
		if (ret)
			return error_errno(ret, "boot: cannot build the PVH start_info");
		arch_regs_pvh32(entry32, regs, sregs);
		return 0;
	case BOOT_FMT_BZIMAGE:
		if (i->size) {
			bi->initrd_gpa = arch_linux_initrd_gpa_hdr(k->data, k->len, k->size,
								   bi->mem_bytes, i->size);
			bi->initrd_size = i->size;
			ret = boot_place_initrd(vm, i, bi->initrd_gpa);
			if (ret)
				return ret;
		}
		ret = boot_load_bzimage(vm, k, bi, &entry64);
		if (ret)
			return error_errno(ret, "boot: cannot load the bzImage (needs boot "
						"protocol 2.06+ with a 64-bit entry)");
		arch_regs_linux64(entry64, regs, sregs);
		return 0;
	default:
		error("boot: the kernel is neither an ELF with a PVH note nor a bzImage");
		return -ENOEXEC;
	}
}

static int boot_kernel_file(struct vm *vm, struct boot_file *k)
{
	const struct vm_config *cfg = vm->cfg;

	if (vm->opt.payload) {
		*k = boot_file_mem(vm->opt.payload, vm->opt.payload_len);
		return 0;
	}
	switch (cfg->boot) {
	case VM_BOOT_KERNEL:
		if (cfg->kernel_path)
			return boot_read_file("kernel", cfg->kernel_path, cfg->kernel_root,
					      BOOT_DEFER_BZIMAGE, k);
		break;
	case VM_BOOT_EFI: {
		const void *elf;
		size_t len;
		int ret = efi_boot_check(cfg, vm->opt.firmware != NULL);

		if (ret)
			return ret;
		if (vm->opt.firmware) {
			ret =
			    boot_read_file("firmware", vm->opt.firmware, NULL, BOOT_DEFER_NONE, k);
			if (!ret && boot_detect(k) != BOOT_FMT_PVH_ELF) {
				error("efi: --firmware '%s' is not a PVH firmware (vmlet enters "
				      "firmware through PVH: an ELF with a "
				      "XEN_ELFNOTE_PHYS32_ENTRY note) nor a flash image (OVMF: "
				      "whole 4 KiB pages, at least 64 KiB)",
				      vm->opt.firmware);
				boot_file_release(k);
				ret = -ENOEXEC;
			}
			return ret;
		}
		/* vmlet's UEFI firmware is a PVH ELF like any other payload */
		ret = efi_boot_embedded(&elf, &len);
		if (ret) {
			error("boot: this vmlet has no UEFI firmware built in: use "
			      "firmware.kernelBoot or --kernel");
			return ret;
		}
		*k = boot_file_mem(elf, len);
		return 0;
	}
	case VM_BOOT_BIOS: /* vm_boot() took it */
	case VM_BOOT_NONE:
		break;
	}
	error("boot: the VM has nothing to boot: it needs a manifest (-f: BIOS, EFI or "
	      "spec.domain.firmware.kernelBoot) or --kernel");
	return -EINVAL;
}

int vm_boot(struct vm *vm)
{
	struct boot_file kernel, initrd;
	struct arch_boot_info bi;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	uint8_t *low = vm->mem.r[0].host;
	uint64_t low_size = vm->mem.r[0].size;
	size_t acpi_used = 0;
	int ret;

	initrd = boot_file_mem(NULL, 0);
	memset(&regs, 0, sizeof(regs));
	memset(&sregs, 0, sizeof(sregs));
	memset(&bi, 0, sizeof(bi));
	if (vm->opt.flash_code) {
		ret = ovmf_boot_setup(vm, &regs, &sregs);
		return ret ? ret : boot_set_regs(vm, &regs, &sregs);
	}
	if (vm->cfg->boot == VM_BOOT_BIOS && (!vm->opt.payload || vm->opt.bios_payload)) {
		ret = bios_boot_setup(vm, &regs, &sregs);
		return ret ? ret : boot_set_regs(vm, &regs, &sregs);
	}
	bi.mem_bytes = vm->mem.total;
	bi.cmdline = vm->cfg->cmdline;
	ret = boot_kernel_file(vm, &kernel);
	if (ret)
		return ret;
	if (vm->opt.module)
		initrd = boot_file_mem(vm->opt.module, vm->opt.module_len);
	else if (vm->cfg->initrd_path && !vm->opt.payload)
		ret = boot_read_file("initrd", vm->cfg->initrd_path, vm->cfg->initrd_root,
				     BOOT_DEFER_ALL, &initrd);
	if (!ret && (arch_gdt_build(low, low_size) || arch_pgtable_build(low, low_size)))
		ret = error_errno(-ENOSPC, "boot: cannot build the boot GDT and page tables");
	if (!ret)
		ret = boot_acpi(vm, &bi.rsdp_gpa, &acpi_used);
	if (!ret)
		ret = boot_place_smbios(vm->cfg, &vm->mem, ARCH_ACPI_GPA + acpi_used);
	if (!ret)
		ret = boot_load(vm, &kernel, &initrd, &bi, &regs, &sregs);
	if (!ret)
		ret = boot_set_regs(vm, &regs, &sregs);
	boot_file_release(&kernel);
	boot_file_release(&initrd);
	return ret;
}
