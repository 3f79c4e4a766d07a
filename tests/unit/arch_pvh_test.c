/* SPDX-License-Identifier: MIT */
/* PVH ELF loading and hvm_start_info (arch/x86_64/pvh.c). */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "arch/arch.h"
#include "tests/lib/bytes.h"
#include "tests/lib/test.h"

#define MEM_SIZE (4u << 20)

struct img_opts {
	int is64;
	int note_descsz; /* 4 or 8; 0 = no note */
	uint32_t entry;
	uint64_t paddr; /* of the one PT_LOAD */
	uint64_t memsz; /* >= 64 */
	int other_note_first;
};

/*
 * A minimal ELF: header, 2 program headers (PT_NOTE, PT_LOAD), the note(s),
 * then 64 bytes of payload 0xa5. Returns its length.
 */
static size_t make_elf(uint8_t *b, const struct img_opts *o)
{
	size_t ehsz = o->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phsz = o->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t note_off = ehsz + 2 * phsz, pos = note_off, load_off;

	memset(b, 0, 4096);
	if (o->other_note_first) { /* a GNU build-id-like note to skip over */
		uint32_t h[3] = {4, 5, 3};

		memcpy(b + pos, h, 12);
		memcpy(b + pos + 12, "GNU", 4);
		pos += 12 + 4 + 8;
	}
	if (o->note_descsz) {
		uint32_t h[3] = {4, (uint32_t)o->note_descsz, 18};
		uint64_t e = o->entry;

		memcpy(b + pos, h, 12);
		memcpy(b + pos + 12, "Xen", 4);
		memcpy(b + pos + 16, &e, (size_t)o->note_descsz);
		pos += 16 + (size_t)o->note_descsz;
	}
	load_off = (pos + 15) & ~(size_t)15;
	memset(b + load_off, 0xa5, 64);

	memcpy(b, ELFMAG, SELFMAG);
	b[EI_DATA] = ELFDATA2LSB;
	b[EI_VERSION] = EV_CURRENT;
	if (o->is64) {
		Elf64_Ehdr eh = {0};
		Elf64_Phdr ph[2] = {{0}};

		memcpy(eh.e_ident, b, EI_NIDENT);
		eh.e_ident[EI_CLASS] = ELFCLASS64;
		eh.e_type = ET_EXEC;
		eh.e_machine = EM_X86_64;
		eh.e_phoff = ehsz;
		eh.e_phentsize = (uint16_t)phsz;
		eh.e_phnum = 2;
		eh.e_ehsize = (uint16_t)ehsz;
		ph[0].p_type = PT_NOTE;
		ph[0].p_offset = note_off;
		ph[0].p_filesz = pos - note_off;
		ph[1].p_type = PT_LOAD;
		ph[1].p_offset = load_off;
		ph[1].p_paddr = o->paddr;
		ph[1].p_vaddr = o->paddr + 0xffffffff80000000ull;
		ph[1].p_filesz = 64;
		ph[1].p_memsz = o->memsz;
		memcpy(b, &eh, sizeof(eh));
		memcpy(b + ehsz, ph, sizeof(ph));
	} else {
		Elf32_Ehdr eh = {0};
		Elf32_Phdr ph[2] = {{0}};

		memcpy(eh.e_ident, b, EI_NIDENT);
		eh.e_ident[EI_CLASS] = ELFCLASS32;
		eh.e_type = ET_EXEC;
		eh.e_machine = EM_386;
		eh.e_phoff = (uint32_t)ehsz;
		eh.e_phentsize = (uint16_t)phsz;
		eh.e_phnum = 2;
		ph[0].p_type = PT_NOTE;
		ph[0].p_offset = (uint32_t)note_off;
		ph[0].p_filesz = (uint32_t)(pos - note_off);
		ph[1].p_type = PT_LOAD;
		ph[1].p_offset = (uint32_t)load_off;
		ph[1].p_paddr = (uint32_t)o->paddr;
		ph[1].p_filesz = 64;
		ph[1].p_memsz = (uint32_t)o->memsz;
		memcpy(b, &eh, sizeof(eh));
		memcpy(b + ehsz, ph, sizeof(ph));
	}
	return load_off + 64;
}

static void check_loaded(const struct img_opts *o)
{
	uint8_t img[4096];
	uint8_t *mem = calloc(1, MEM_SIZE);
	size_t len = make_elf(img, o);
	uint32_t entry = 0;

	memset(mem + o->paddr, 0xee, o->memsz); /* bss must be cleared */
	CHECK_EQ_U64(arch_pvh_load(mem, MEM_SIZE, img, len, &entry), 0);
	CHECK_EQ_U64(entry, o->entry);
	CHECK_EQ_U64(mem[o->paddr], 0xa5);
	CHECK_EQ_U64(mem[o->paddr + 63], 0xa5);
	CHECK_EQ_U64(mem[o->paddr + 64], 0);
	CHECK_EQ_U64(mem[o->paddr + o->memsz - 1], 0);
	CHECK_EQ_U64(mem[o->paddr + o->memsz], 0);
	free(mem);
}

static void test_load_ok(void)
{
	struct img_opts o = {1, 8, 0x100010, 0x100000, 4096, 0};

	check_loaded(&o);
	o.note_descsz = 4;
	o.other_note_first = 1;
	check_loaded(&o);
	o.is64 = 0;
	o.paddr = 0x200000;
	o.entry = 0x200000;
	check_loaded(&o);
}

/*
 * A bss over memory that reads as zero is not written: its pages after the
 * first are mapped read-only (a write would fault, as a memset() of the
 * whole bss did), and the load still succeeds. A page of it that is not
 * zero (a reboot's leftovers) is cleared.
 */
static void test_bss_untouched(void)
{
	struct img_opts o = {1, 8, 0x100010, 0x100000, 5 * 4096 + 100, 0};
	uint8_t img[4096];
	size_t len = make_elf(img, &o);
	uint8_t *mem =
	    mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t entry = 0;

	CHECK(mem != MAP_FAILED);
	if (mem == MAP_FAILED)
		return;
	memset(mem + o.paddr + 100, 0x77, 4096 - 100); /* dirty, in the first page */
	mem[o.paddr + 3 * 4096 + 5] = 0x55;	       /* one dirty byte further on */
	CHECK_EQ_U64(mprotect(mem + o.paddr + 4096, 2 * 4096, PROT_READ), 0);
	CHECK_EQ_U64(mprotect(mem + o.paddr + 4 * 4096, 2 * 4096, PROT_READ), 0);
	CHECK_EQ_U64(arch_pvh_load(mem, MEM_SIZE, img, len, &entry), 0);
	CHECK_EQ_U64(mem[o.paddr + 63], 0xa5);
	for (uint64_t i = 64; i < o.memsz; i++)
		if (mem[o.paddr + i]) {
			CHECK_EQ_U64(i, 0); /* the bss byte that stayed set */
			break;
		}
	munmap(mem, MEM_SIZE);
}

static int load(const struct img_opts *o, size_t trunc)
{
	uint8_t img[4096];
	uint8_t *mem = calloc(1, MEM_SIZE);
	size_t len = make_elf(img, o);
	uint32_t entry = 0;
	int r;

	if (trunc)
		len = trunc;
	r = arch_pvh_load(mem, MEM_SIZE, img, len, &entry);
	free(mem);
	return r;
}

static void test_load_rejects(void)
{
	const struct img_opts good = {1, 4, 0x100000, 0x100000, 128, 0};
	struct img_opts o;

	CHECK_EQ_U64(load(&good, 0), 0);
	o = good, o.note_descsz = 0; /* no PVH note */
	CHECK_EQ_U64(load(&o, 0), (uint64_t)-ENOEXEC);
	o = good, o.paddr = 0x8000; /* over vmlet's boot structures */
	CHECK_EQ_U64(load(&o, 0), (uint64_t)-ERANGE);
	o = good, o.paddr = MEM_SIZE - 64, o.entry = MEM_SIZE - 64; /* bss past RAM */
	CHECK_EQ_U64(load(&o, 0), (uint64_t)-ERANGE);
	o = good, o.entry = 0x100000 + 64; /* entry outside the loaded bytes */
	CHECK_EQ_U64(load(&o, 0), (uint64_t)-ENOEXEC);
	o = good, o.memsz = 32; /* filesz > memsz */
	CHECK_EQ_U64(load(&o, 0), (uint64_t)-ENOEXEC);
	o = good, o.note_descsz = 8, o.entry = 0x100000; /* ok as 8 bytes */
	CHECK_EQ_U64(load(&o, 0), 0);
	/* Every truncation is rejected, never read past the end. */
	for (size_t t = 1; t < 200; t++)
		CHECK(load(&good, t) < 0);
	CHECK_EQ_U64(arch_pvh_load(NULL, 0, (const uint8_t *)"junk", 4, NULL), (uint64_t)-ENOEXEC);
}

static void test_start_info(void)
{
	uint8_t *mem = calloc(1, MEM_SIZE);
	struct arch_boot_info bi = {
	    .mem_bytes = 64u << 20,
	    .cmdline = "console=ttyS0 panic=-1",
	    .initrd_gpa = 0x3000000,
	    .initrd_size = 12345,
	    .rsdp_gpa = ARCH_ACPI_GPA,
	};
	const uint8_t *si = mem + ARCH_START_INFO_GPA, *map, *mod;
	struct arch_e820_entry e[ARCH_E820_MAX];
	size_t n;

	CHECK_EQ_U64(arch_pvh_start_info_build(mem, MEM_SIZE, &bi), 0);
	CHECK_EQ_U64(rd32(si + 0), 0x336ec578);
	CHECK_EQ_U64(rd32(si + 4), 1);
	CHECK_EQ_U64(rd32(si + 12), 1);
	CHECK_EQ_U64(rd64(si + 24), ARCH_CMDLINE_GPA);
	CHECK_STR((const char *)mem + ARCH_CMDLINE_GPA, bi.cmdline);
	CHECK_EQ_U64(rd64(si + 32), ARCH_ACPI_GPA);
	mod = mem + rd64(si + 16);
	CHECK_EQ_U64(rd64(mod), 0x3000000);
	CHECK_EQ_U64(rd64(mod + 8), 12345);
	CHECK_EQ_U64(arch_e820_build(bi.mem_bytes, e, ARCH_E820_MAX, &n), 0);
	CHECK_EQ_U64(rd32(si + 48), n);
	CHECK(rd64(si + 40) + 24 * n <= ARCH_ZERO_PAGE_GPA);
	map = mem + rd64(si + 40);
	for (size_t i = 0; i < n; i++) {
		CHECK_EQ_U64(rd64(map + 24 * i), e[i].addr);
		CHECK_EQ_U64(rd64(map + 24 * i + 8), e[i].size);
		CHECK_EQ_U64(rd32(map + 24 * i + 16), e[i].type);
	}

	/* No initrd, no cmdline. */
	bi.initrd_gpa = 0;
	bi.cmdline = NULL;
	CHECK_EQ_U64(arch_pvh_start_info_build(mem, MEM_SIZE, &bi), 0);
	CHECK_EQ_U64(rd32(si + 12), 0);
	CHECK_EQ_U64(rd64(si + 16), 0);
	CHECK_EQ_U64(mem[ARCH_CMDLINE_GPA], 0);

	/* A command line longer than its buffer is refused. */
	char *huge = malloc(ARCH_CMDLINE_MAX + 1);
	memset(huge, 'x', ARCH_CMDLINE_MAX);
	huge[ARCH_CMDLINE_MAX] = 0;
	bi.cmdline = huge;
	CHECK_EQ_U64(arch_pvh_start_info_build(mem, MEM_SIZE, &bi), (uint64_t)-E2BIG);
	free(huge);
	free(mem);
}

/* Deterministic mutation: random byte changes in the headers and notes of
 * valid images never crash the loader (the sanitizer build checks reads)
 * and anything it accepts has its entry inside a loaded segment. */
static void test_mutations(void)
{
	static uint8_t img[4096];
	uint8_t *mem = calloc(1, MEM_SIZE);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int accepted = 0;

	for (int iter = 0; iter < 20000; iter++) {
		struct img_opts o = {iter & 1, 4 << (iter & 2 ? 1 : 0), 0x100020, 0x100000, 4096,
				     iter & 4};
		size_t len = make_elf(img, &o);
		uint32_t entry = 0;
		int r;

		for (int k = 0; k < 1 + (iter % 4); k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			img[(x >> 8) % len] = (uint8_t)x;
		}
		r = arch_pvh_load(mem, MEM_SIZE, img, len, &entry);
		CHECK(r <= 0);
		if (!r) {
			accepted++;
			CHECK(entry >= ARCH_HIGH_LOAD_GPA && entry < MEM_SIZE);
		}
	}
	CHECK(accepted > 0); /* some mutations hit bytes that do not matter */
	free(mem);
}

int main(void)
{
	TEST_RUN(test_load_ok);
	TEST_RUN(test_bss_untouched);
	TEST_RUN(test_mutations);
	TEST_RUN(test_load_rejects);
	TEST_RUN(test_start_info);
	return test_summary();
}
