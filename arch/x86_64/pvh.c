/* SPDX-License-Identifier: MIT */
/*
 * pvh.c - the Xen PVH direct boot: load an ELF (ELF32 or ELF64) that carries
 * a XEN_ELFNOTE_PHYS32_ENTRY note and build its hvm_start_info.
 *
 * References: ELF gABI (program headers, note format: namesz, descsz, type,
 * name and desc each padded to 4 bytes); Xen include/public/elfnote.h
 * (XEN_ELFNOTE_PHYS32_ENTRY = 18, owner "Xen"); Xen
 * include/public/arch-x86/hvm/start_info.h (hvm_start_info version 1 with
 * memmap, hvm_modlist_entry, hvm_memmap_table_entry).
 *
 * The image is untrusted input: every offset and size is checked against
 * the file and against low RAM before anything is copied.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64/pvh.h"
#include "arch/x86_64/util.h"

/* One program header, whichever ELF class it came from. */
struct phdr {
	uint32_t type;
	uint64_t offset, paddr, filesz, memsz;
};

struct elf_view {
	const uint8_t *img;
	size_t len;
	int is64;
	uint64_t phoff;
	uint32_t phentsize, phnum;
};

static int elf_open(struct elf_view *e, const uint8_t *img, size_t len)
{
	uint16_t machine;

	e->img = img;
	e->len = len;
	if (!img || len < EI_NIDENT || memcmp(img, ELFMAG, SELFMAG))
		return -ENOEXEC;
	if (img[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	if (img[EI_CLASS] == ELFCLASS64 && len >= sizeof(Elf64_Ehdr)) {
		e->is64 = 1;
		e->phoff = arch_get_le64(img + offsetof(Elf64_Ehdr, e_phoff));
		e->phentsize = arch_get_le16(img + offsetof(Elf64_Ehdr, e_phentsize));
		e->phnum = arch_get_le16(img + offsetof(Elf64_Ehdr, e_phnum));
		if (e->phentsize != sizeof(Elf64_Phdr))
			return -ENOEXEC;
	} else if (img[EI_CLASS] == ELFCLASS32 && len >= sizeof(Elf32_Ehdr)) {
		e->is64 = 0;
		e->phoff = arch_get_le32(img + offsetof(Elf32_Ehdr, e_phoff));
		e->phentsize = arch_get_le16(img + offsetof(Elf32_Ehdr, e_phentsize));
		e->phnum = arch_get_le16(img + offsetof(Elf32_Ehdr, e_phnum));
		if (e->phentsize != sizeof(Elf32_Phdr))
			return -ENOEXEC;
	} else {
		return -ENOEXEC;
	}
	/* e_type and e_machine sit at the same offsets in both classes. */
	machine = arch_get_le16(img + offsetof(Elf64_Ehdr, e_machine));
	if (machine != EM_X86_64 && machine != EM_386)
		return -ENOEXEC;
	if (arch_get_le16(img + offsetof(Elf64_Ehdr, e_type)) != ET_EXEC)
		return -ENOEXEC;
	if (!e->phnum || e->phoff > len || (uint64_t)e->phnum * e->phentsize > len - e->phoff)
		return -ENOEXEC;
	return 0;
}

static void elf_phdr(const struct elf_view *e, uint32_t i, struct phdr *p)
{
	const uint8_t *h = e->img + e->phoff + (uint64_t)i * e->phentsize;

	if (e->is64) {
		p->type = arch_get_le32(h + offsetof(Elf64_Phdr, p_type));
		p->offset = arch_get_le64(h + offsetof(Elf64_Phdr, p_offset));
		p->paddr = arch_get_le64(h + offsetof(Elf64_Phdr, p_paddr));
		p->filesz = arch_get_le64(h + offsetof(Elf64_Phdr, p_filesz));
		p->memsz = arch_get_le64(h + offsetof(Elf64_Phdr, p_memsz));
	} else {
		p->type = arch_get_le32(h + offsetof(Elf32_Phdr, p_type));
		p->offset = arch_get_le32(h + offsetof(Elf32_Phdr, p_offset));
		p->paddr = arch_get_le32(h + offsetof(Elf32_Phdr, p_paddr));
		p->filesz = arch_get_le32(h + offsetof(Elf32_Phdr, p_filesz));
		p->memsz = arch_get_le32(h + offsetof(Elf32_Phdr, p_memsz));
	}
}

static int in_file(const struct elf_view *e, uint64_t off, uint64_t size)
{
	return off <= e->len && size <= e->len - off;
}

/* Look for the PHYS32_ENTRY note in one PT_NOTE segment: 1 found, 0 not. */
static int find_note(const struct elf_view *e, const struct phdr *p, uint32_t *entry)
{
	const uint8_t *n = e->img + p->offset;
	uint64_t pos = 0, namesz, descsz, type, desc;

	while (p->filesz - pos >= 12) {
		namesz = arch_get_le32(n + pos);
		descsz = arch_get_le32(n + pos + 4);
		type = arch_get_le32(n + pos + 8);
		pos += 12;
		if (namesz > p->filesz - pos)
			return -ENOEXEC;
		desc = pos + ((namesz + 3) & ~3ull);
		if (desc > p->filesz || descsz > p->filesz - desc)
			return -ENOEXEC;
		if (type == XEN_ELFNOTE_PHYS32_ENTRY && namesz == 4 && !memcmp(n + pos, "Xen", 4)) {
			/* Linux emits the entry as a pointer-sized value. */
			if (descsz == 4) {
				*entry = arch_get_le32(n + desc);
			} else if (descsz == 8 && !(arch_get_le64(n + desc) >> 32)) {
				*entry = arch_get_le32(n + desc);
			} else {
				return -ENOEXEC;
			}
			return 1;
		}
		pos = desc + ((descsz + 3) & ~3ull);
	}
	return 0;
}

/* Segments must land in low RAM at or above ARCH_HIGH_LOAD_GPA, away from
 * the boot structures vmlet writes below 1 MiB. */
/*
 * Zero [p, p + n), writing only the pages that are not zero already. Guest
 * RAM starts as untouched anonymous memory, which reads as zero without
 * being backed: a memset() of a segment's bss there (the probe's is 5 MiB)
 * would make the host back all of it, with THP 2 MiB at a time, before the
 * guest has used any; left alone, only the pages the guest writes are.
 */
static void zero_unless_zero(uint8_t *p, uint64_t n)
{
	while (n) {
		uint64_t chunk = 4096 - ((uintptr_t)p & 4095);

		if (chunk > n)
			chunk = n;
		if (p[0] || (chunk > 1 && memcmp(p, p + 1, chunk - 1)))
			memset(p, 0, chunk);
		p += chunk;
		n -= chunk;
	}
}

static int seg_check(const struct elf_view *e, const struct phdr *p, uint64_t ram_end)
{
	if (p->filesz > p->memsz || !in_file(e, p->offset, p->filesz))
		return -ENOEXEC;
	if (p->paddr < ARCH_HIGH_LOAD_GPA || p->paddr > ram_end || p->memsz > ram_end - p->paddr)
		return -ERANGE;
	return 0;
}

int arch_pvh_load(uint8_t *low_mem, uint64_t low_size, const uint8_t *elf, size_t elf_len,
		  uint32_t *entry)
{
	uint64_t ram_end = low_size < ARCH_MMIO_HOLE_START ? low_size : ARCH_MMIO_HOLE_START;
	struct elf_view e;
	struct phdr p;
	uint32_t i, ent = 0;
	int r, found = 0, entry_loaded = 0;

	r = elf_open(&e, elf, elf_len);
	if (r)
		return r;
	if (!low_mem)
		return -EINVAL;
	for (i = 0; i < e.phnum && !found; i++) {
		elf_phdr(&e, i, &p);
		if (p.type != PT_NOTE)
			continue;
		if (!in_file(&e, p.offset, p.filesz))
			return -ENOEXEC;
		found = find_note(&e, &p, &ent);
		if (found < 0)
			return found;
	}
	if (!found)
		return -ENOEXEC;
	/* Validate every segment before copying any. */
	for (i = 0; i < e.phnum; i++) {
		elf_phdr(&e, i, &p);
		if (p.type != PT_LOAD)
			continue;
		r = seg_check(&e, &p, ram_end);
		if (r)
			return r;
		if (ent >= p.paddr && ent - p.paddr < p.filesz)
			entry_loaded = 1;
	}
	if (!entry_loaded)
		return -ENOEXEC;
	for (i = 0; i < e.phnum; i++) {
		elf_phdr(&e, i, &p);
		if (p.type != PT_LOAD)
			continue;
		memcpy(low_mem + p.paddr, elf + p.offset, p.filesz);
		zero_unless_zero(low_mem + p.paddr + p.filesz, p.memsz - p.filesz);
	}
	*entry = ent;
	return 0;
}

int arch_cmdline_write(uint8_t *low_mem, uint64_t low_size, const char *cmdline)
{
	size_t len = cmdline ? strlen(cmdline) : 0;
	uint8_t *dst;

	if (len + 1 > ARCH_CMDLINE_MAX)
		return -E2BIG;
	dst = arch_low_ptr(low_mem, low_size, ARCH_CMDLINE_GPA, len + 1);
	if (!dst)
		return -ENOSPC;
	memcpy(dst, cmdline ? cmdline : "", len + 1);
	return 0;
}

int arch_pvh_start_info_build(uint8_t *low_mem, uint64_t low_size, const struct arch_boot_info *bi)
{
	struct arch_e820_entry e820[ARCH_E820_MAX];
	uint64_t si_size, mod_gpa, map_gpa;
	uint8_t *si, *mod, *map;
	size_t n, i;
	int r;

	r = arch_e820_build(bi->mem_bytes, e820, ARCH_E820_MAX, &n);
	if (r)
		return r;
	mod_gpa = ARCH_START_INFO_GPA + HVM_START_INFO_SIZE;
	map_gpa = mod_gpa + HVM_MODLIST_ENTRY_SIZE;
	si_size = map_gpa + n * HVM_MEMMAP_ENTRY_SIZE - ARCH_START_INFO_GPA;
	si = arch_low_ptr(low_mem, low_size, ARCH_START_INFO_GPA, si_size);
	if (!si || ARCH_START_INFO_GPA + si_size > ARCH_ZERO_PAGE_GPA)
		return -ENOSPC;
	r = arch_cmdline_write(low_mem, low_size, bi->cmdline);
	if (r)
		return r;
	memset(si, 0, si_size);
	mod = si + (mod_gpa - ARCH_START_INFO_GPA);
	map = si + (map_gpa - ARCH_START_INFO_GPA);

	arch_put_le32(si + HVM_SI_MAGIC, HVM_START_MAGIC_VALUE);
	arch_put_le32(si + HVM_SI_VERSION, 1);
	arch_put_le32(si + HVM_SI_FLAGS, 0);
	if (bi->initrd_gpa && bi->initrd_size) {
		arch_put_le32(si + HVM_SI_NR_MODULES, 1);
		arch_put_le64(si + HVM_SI_MODLIST_PADDR, mod_gpa);
		arch_put_le64(mod + 0, bi->initrd_gpa);
		arch_put_le64(mod + 8, bi->initrd_size);
	}
	arch_put_le64(si + HVM_SI_CMDLINE_PADDR, ARCH_CMDLINE_GPA);
	arch_put_le64(si + HVM_SI_RSDP_PADDR, bi->rsdp_gpa);
	arch_put_le64(si + HVM_SI_MEMMAP_PADDR, map_gpa);
	arch_put_le32(si + HVM_SI_MEMMAP_ENTRIES, (uint32_t)n);
	for (i = 0; i < n; i++) {
		uint8_t *m = map + i * HVM_MEMMAP_ENTRY_SIZE;

		arch_put_le64(m + 0, e820[i].addr);
		arch_put_le64(m + 8, e820[i].size);
		arch_put_le32(m + 16, e820[i].type);
	}
	return 0;
}
