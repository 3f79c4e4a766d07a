// SPDX-License-Identifier: MIT
/*
 * payload.c - a PVH ELF handed over as the PVH module instead of a disk
 * image (`vmlet probe` on an EFI VM: the probe, from memory the VMM
 * provides). The firmware reserves its segments' memory before anything
 * is allocated, sets itself up as for any boot, then does what an OS
 * loader would: ExitBootServices, the segments copied in place (bss
 * zeroed), and the payload entered the PVH way with the VMM's start_info,
 * its module list emptied and " vmlet.efi=0x<system table>" added to the
 * command line so the payload can look at the firmware it ran under.
 */
#include "firmware/efi/fw.h"
#include "firmware/lib/cpu.h"
#include "firmware/lib/pvh.h"

#define PT_LOAD	    1
#define PT_NOTE	    4
#define MAX_PHDRS   16
#define CMDLINE_MAX 4096

struct elf64_ehdr {
	uint8_t ident[16];
	uint16_t type, machine;
	uint32_t version;
	uint64_t entry, phoff, shoff;
	uint32_t flags;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct elf64_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, paddr, filesz, memsz, align;
};

static const uint8_t *pl_elf;
static uint64_t pl_size;
static uint32_t pl_entry;

extern char __fw_start[], __fw_end[];
void efi_pvh_jump(uint32_t entry, uint32_t start_info) FW_NORETURN;

static const struct elf64_phdr *phdr(uint16_t i)
{
	const struct elf64_ehdr *e = (const void *)pl_elf;

	return (const struct elf64_phdr *)(pl_elf + e->phoff +
					   (uint64_t)i * sizeof(struct elf64_phdr));
}

/* XEN_ELFNOTE_PHYS32_ENTRY in a PT_NOTE segment: the entry, 0 if none. */
static uint32_t pvh_note(const struct elf64_phdr *p)
{
	for (uint64_t off = 0; off + 12 <= p->filesz;) {
		const uint32_t *n = (const uint32_t *)(pl_elf + p->offset + off);
		uint64_t name = (n[0] + 3) & ~3ull, desc = (n[1] + 3) & ~3ull;

		if (off + 12 + name + desc > p->filesz)
			break;
		if (n[2] == XEN_ELFNOTE_PHYS32_ENTRY && n[0] == 4 && !memcmp(n + 3, "Xen", 4) &&
		    n[1] >= 4)
			return *(const uint32_t *)((const uint8_t *)(n + 3) + name);
		off += 12 + name + desc;
	}
	return 0;
}

/* Every segment inside the file and in low RAM clear of the firmware. */
static bool pl_valid(void)
{
	const struct elf64_ehdr *e = (const void *)pl_elf;
	uint64_t lo = (uintptr_t)__fw_start, hi = (uintptr_t)__fw_end;

	if (pl_size < sizeof(*e) || memcmp(e->ident, "\177ELF\2\1", 6) || e->phnum > MAX_PHDRS ||
	    e->phentsize != sizeof(struct elf64_phdr) || e->phoff > pl_size ||
	    (uint64_t)e->phnum * sizeof(struct elf64_phdr) > pl_size - e->phoff)
		return false;
	pl_entry = 0;
	for (uint16_t i = 0; i < e->phnum; i++) {
		const struct elf64_phdr *p = phdr(i);

		if (p->type != PT_LOAD && p->type != PT_NOTE)
			continue;
		if (p->offset > pl_size || p->filesz > pl_size - p->offset)
			return false;
		if (p->type == PT_NOTE && !pl_entry)
			pl_entry = pvh_note(p);
		if (p->type == PT_LOAD &&
		    (p->filesz > p->memsz || p->paddr < 0x100000 || p->memsz > 0x40000000 ||
		     p->paddr + p->memsz > 0x40000000 ||
		     (p->paddr < hi && p->paddr + p->memsz > lo)))
			return false;
	}
	return pl_entry != 0;
}

bool efi_payload_claim(const void *mod, uint64_t size)
{
	const struct elf64_ehdr *e = mod;

	if (pl_elf || size < 4 || memcmp(mod, "\177ELF", 4))
		return false;
	pl_elf = mod;
	pl_size = size;
	if (!pl_valid()) {
		efi_log("payload: not a PVH ELF that fits below 1 GiB beside the firmware");
		pl_elf = NULL;
		return true; /* an ELF all the same: not a disk */
	}
	for (uint16_t i = 0; i < e->phnum; i++)
		if (phdr(i)->type == PT_LOAD)
			mem_set(&efi_mem, phdr(i)->paddr & ~0xfffull,
				(phdr(i)->paddr & 0xfff) + phdr(i)->memsz, EfiLoaderData);
	return true;
}

static uint64_t payload_cpl0(void *si)
{
	efi_payload_start((uint32_t)(uintptr_t)si);
	return 0;
}

void efi_payload_start(uint32_t start_info)
{
	static char cmdline[CMDLINE_MAX];
	struct hvm_start_info *si = (void *)(uintptr_t)start_info;
	const struct elf64_ehdr *e = (const void *)pl_elf;
	const char *old = si->cmdline_paddr ? (const char *)(uintptr_t)si->cmdline_paddr : "";

	if (!pl_elf)
		return;
	if (fw_cpl() == 3) { /* it leaves boot services and long mode: CPL0 */
		efi_cpl0(payload_cpl0, si);
		return;
	}
	fw_snprintf(cmdline, sizeof(cmdline), "%s vmlet.efi=0x%llx", old,
		    (unsigned long long)(uintptr_t)&efi_st);
	efi_log("payload: starting the PVH ELF module at %x", pl_entry);
	if (efi_bs.exit_boot_services(NULL, efi_mem.key))
		return;
	for (uint16_t i = 0; i < e->phnum; i++) {
		const struct elf64_phdr *p = phdr(i);

		if (p->type != PT_LOAD)
			continue;
		memmove((void *)(uintptr_t)p->paddr, pl_elf + p->offset, p->filesz);
		memset((uint8_t *)(uintptr_t)p->paddr + p->filesz, 0, p->memsz - p->filesz);
	}
	si->cmdline_paddr = (uintptr_t)cmdline;
	si->nr_modules = 0;
	si->modlist_paddr = 0;
	efi_pvh_jump(pl_entry, start_info);
}
