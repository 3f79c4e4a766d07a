// SPDX-License-Identifier: MIT
/*
 * efi_pe_test - the EFI firmware's PE32+ loader (firmware/efi/pe.c) on
 * images built here: tests/efi/hello.c linked by GNU ld's PE32+ backend
 * (real DIR64 base relocations) and by the gnu-efi objcopy route. objdump's
 * report (header fields, interpreted .reloc contents) and nm's symbol
 * addresses are the oracle. Damaged images must fail cleanly.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "tests/lib/test.h"
#include "tests/unit/efi_test_sh.h"

#include "firmware/efi/pe.c"

static char tmpdir[64];

#define BASE 0x140000000ull

/* hello.c -> PE32+ with GNU ld (i386pep). Returns the file or NULL. */
static uint8_t *build_ld_pe(size_t *len, char *path, size_t pathlen)
{
	if (system("ld -V 2>/dev/null | grep -q i386pep") ||
	    system("test -f /usr/include/efi/efi.h"))
		return NULL;
	snprintf(path, pathlen, "%s/h.efi", tmpdir);
	if (sh("gcc -I/usr/include/efi -I/usr/include/efi/x86_64 -O2 -ffreestanding -fno-ident "
	       "-fno-stack-protector -fshort-wchar -mno-red-zone -mgeneral-regs-only -fno-pic "
	       "-fno-asynchronous-unwind-tables -mcmodel=large -c tests/efi/hello.c -o %s/h.o && "
	       "ld -m i386pep --subsystem 10 -e efi_main --image-base 0x%llx "
	       "--enable-reloc-section -nostdlib %s/h.o -o %s",
	       tmpdir, BASE, tmpdir, path))
		return NULL;
	return (uint8_t *)test_read_file(path, len);
}

/* One "Name\t\tHEX" value from objdump -p. */
static uint64_t objdump_field(const char *path, const char *name)
{
	char cmd[512], line[256];
	unsigned long long v = ~0ull;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "objdump -p %s", path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		size_t n = strlen(name);

		if (!strncmp(line, name, n) && (line[n] == '\t' || line[n] == ' '))
			v = strtoull(line + n, NULL, 16);
	}
	if (p)
		pclose(p);
	return v;
}

/* DIR64 fixup RVAs as objdump interprets the .reloc section. */
static int objdump_dir64(const char *path, uint32_t *rvas, int max)
{
	char cmd[512], line[256];
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "objdump -p %s", path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		unsigned int r, o, a;

		if (sscanf(line, " reloc %u offset %x [%x]", &r, &o, &a) == 3 &&
		    strstr(line, "DIR64") && n < max)
			rvas[n++] = a;
	}
	if (p)
		pclose(p);
	return n;
}

static uint64_t nm_addr(const char *path, const char *sym)
{
	char cmd[512], line[256], name[128], t;
	unsigned long long v, found = ~0ull;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s", path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %127s", &v, &t, name) == 3 && !strcmp(name, sym))
			found = v;
	if (p)
		pclose(p);
	return found;
}

static void test_pe_ld_relocated(void)
{
	char path[128];
	size_t len;
	uint8_t *f = build_ld_pe(&len, path, sizeof(path));
	struct pe_image pe;
	uint32_t rvas[64];

	if (!f)
		SKIP("GNU ld without i386pep, or gnu-efi headers missing");
	CHECK(pe_parse(f, len, &pe) == 0);
	CHECK_EQ_U64(pe.image_base, objdump_field(path, "ImageBase"));
	CHECK_EQ_U64(pe.image_base, BASE);
	CHECK_EQ_U64(pe.entry_rva, objdump_field(path, "AddressOfEntryPoint"));
	CHECK_EQ_U64(pe.size_of_image, objdump_field(path, "SizeOfImage"));
	CHECK_EQ_U64(pe.size_of_headers, objdump_field(path, "SizeOfHeaders"));
	CHECK_EQ_U64(pe.subsystem, PE_SUBSYS_EFI_APP);
	CHECK_EQ_U64(pe.entry_rva, nm_addr(path, "efi_main") - BASE);

	int nrel = objdump_dir64(path, rvas, 64);
	uint8_t *at_base = malloc(pe.size_of_image), *moved = malloc(pe.size_of_image);
	uint64_t load = 0x7ff123450000ull, delta = load - BASE;

	CHECK(nrel >= 2);
	memset(at_base, 0xa5, pe.size_of_image); /* what the loader must clear */
	memset(moved, 0x5a, pe.size_of_image);
	CHECK(pe_load(f, len, &pe, at_base, BASE) == 0);
	CHECK_EQ_U64(pe_load(f, len, &pe, moved, load), nrel);
	/* the pointer in .data now points at the string in the moved image */
	uint64_t ptr_rva = nm_addr(path, "hello_ptr") - BASE,
		 msg_rva = nm_addr(path, "hello_msg") - BASE;

	CHECK_EQ_U64(le64(at_base + ptr_rva), BASE + msg_rva);
	CHECK_EQ_U64(le64(moved + ptr_rva), load + msg_rva);
	CHECK(!memcmp(moved + msg_rva, "h\0e\0l\0l\0o\0", 10));
	/* every objdump-listed site moved by delta; nothing else changed */
	for (int i = 0; i < nrel; i++) {
		CHECK_EQ_U64(le64(moved + rvas[i]) - le64(at_base + rvas[i]), delta);
		put_le64(moved + rvas[i], le64(at_base + rvas[i]));
	}
	CHECK(!memcmp(moved, at_base, pe.size_of_image));
	/* headers and each section's bytes are those of the file */
	CHECK(!memcmp(at_base, f, pe.size_of_headers));
	for (unsigned int i = 0; i < pe.n_sections; i++) {
		const uint8_t *s = f + pe.sections_off + 40 * i;
		uint32_t vs = le32(s + 8), raw = le32(s + 16), n = vs && vs < raw ? vs : raw;

		CHECK(!memcmp(at_base + le32(s + 12), f + le32(s + 20), n));
		/* the rest of the section up to the next page is zero */
		for (uint32_t k = le32(s + 12) + n; k < pe.size_of_image && (k & 4095); k++)
			if (at_base[k]) {
				CHECK(!"section tail not zeroed");
				break;
			}
	}
	free(at_base);
	free(moved);
	free(f);
}

/* gnu-efi's route (objcopy --target efi-app-x86_64) carries a placeholder
 * .reloc (its crt0 relocates itself): it must load anywhere. */
static void test_pe_gnu_efi(void)
{
	char path[128];
	size_t len;
	struct pe_image pe;

	snprintf(path, sizeof(path), "%s/g.efi", tmpdir);
	int rc = system("test -f /usr/lib/crt0-efi-x86_64.o");

	if (rc)
		SKIP("gnu-efi not installed");
	CHECK(sh("tests/efi/build-efi.sh tests/efi/hello.c %s", path) == 0);
	uint8_t *f = (uint8_t *)test_read_file(path, &len);

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(pe_parse(f, len, &pe) == 0);
	CHECK_EQ_U64(pe.entry_rva, objdump_field(path, "AddressOfEntryPoint"));
	CHECK_EQ_U64(pe.size_of_image, objdump_field(path, "SizeOfImage"));
	CHECK_EQ_U64(pe.image_base, objdump_field(path, "ImageBase"));
	uint8_t *img = malloc(pe.size_of_image);

	CHECK(pe_load(f, len, &pe, img, 0x200000) >= 0);
	CHECK_EQ_U64(pe.entry_rva, nm_addr(path, "_start") - 0);
	free(img);
	free(f);
}

/* Handcrafted damage: each must be refused, none may be read past. */
static void test_pe_malformed(void)
{
	char path[128];
	size_t len;
	uint8_t *f = build_ld_pe(&len, path, sizeof(path));
	struct pe_image pe;

	if (!f)
		SKIP("GNU ld without i386pep");
	uint32_t lfanew = le32(f + 0x3c);
	uint8_t *opt = f + lfanew + 24, *sect;
	uint8_t *img;

	CHECK(pe_parse(f, len, &pe) == 0);
	sect = f + pe.sections_off;
	CHECK(pe_parse(f, 0x3f, &pe) == -FW_EBADMSG);
	CHECK(pe_parse(f, lfanew + 20, &pe) == -FW_EBADMSG);

#define MUTATE(p, bytes, val, want)                                                                \
	do {                                                                                       \
		uint8_t save_[8];                                                                  \
		memcpy(save_, (p), bytes);                                                         \
		if (bytes == 2) {                                                                  \
			(p)[0] = (uint8_t)(val);                                                   \
			(p)[1] = (uint8_t)((val) >> 8);                                            \
		} else {                                                                           \
			put_le32((p), (uint32_t)(val));                                            \
		}                                                                                  \
		CHECK(pe_parse(f, len, &pe) == (want));                                            \
		memcpy((p), save_, bytes);                                                         \
	} while (0)

	MUTATE(f + 0x3c, 4, 0xfffffff0u, -FW_EBADMSG);	 /* e_lfanew */
	MUTATE(f + lfanew + 4, 2, 0x14c, -FW_ENOTSUP);	 /* i386 */
	MUTATE(opt, 2, 0x10b, -FW_ENOTSUP);		 /* PE32 */
	MUTATE(f + lfanew + 20, 2, 8, -FW_EBADMSG);	 /* tiny optional header */
	MUTATE(opt + 16, 4, 0x10000000, -FW_EBADMSG);	 /* entry outside */
	MUTATE(opt + 56, 4, 0, -FW_EBADMSG);		 /* SizeOfImage 0 */
	MUTATE(opt + 56, 4, 0x7fffffff, -FW_EBADMSG);	 /* huge */
	MUTATE(opt + 60, 4, 0x100000, -FW_EBADMSG);	 /* headers > file */
	MUTATE(opt + 112 + 36, 4, len + 1, -FW_EBADMSG); /* cert dir past file */
	MUTATE(opt + 112 + 36, 4, 0x1000000, -FW_EBADMSG);
	MUTATE(f + lfanew + 6, 2, 0x4000, -FW_EBADMSG); /* sections beyond file */
	MUTATE(sect + 12, 4, 0xfffff000u, -FW_EBADMSG); /* section VA */
	MUTATE(sect + 8, 4, 0x7fffffff, -FW_EBADMSG);	/* VirtualSize */
	MUTATE(sect + 20, 4, 0x7ffffff0, -FW_EBADMSG);	/* PointerToRawData */
	MUTATE(sect + 16, 4, 0x100000, -FW_EBADMSG);	/* SizeOfRawData */

	/* relocation tables that lie */
	CHECK(pe_parse(f, len, &pe) == 0);
	img = malloc(pe.size_of_image);
	uint32_t roff = 0;

	for (unsigned int i = 0; i < pe.n_sections; i++)
		if (le32(f + pe.sections_off + 40 * i + 12) == pe.reloc_rva)
			roff = le32(f + pe.sections_off + 40 * i + 20);
	CHECK(roff != 0);
	uint8_t *rel = f + roff, save[12];

	memcpy(save, rel, 12);
	put_le32(rel + 4, 4); /* block size < 8 */
	CHECK(pe_load(f, len, &pe, img, 0x1000000) == -FW_EBADMSG);
	memcpy(rel, save, 12);
	put_le32(rel + 4, 0x100000); /* block past the directory */
	CHECK(pe_load(f, len, &pe, img, 0x1000000) == -FW_EBADMSG);
	memcpy(rel, save, 12);
	put_le32(rel, pe.size_of_image - 4); /* DIR64 target straddles the end */
	rel[8] = 0, rel[9] = 0xa0;
	CHECK(pe_load(f, len, &pe, img, 0x1000000) == -FW_EBADMSG);
	memcpy(rel, save, 12);
	rel[9] = 0x70; /* unknown relocation type */
	CHECK(pe_load(f, len, &pe, img, 0x1000000) == -FW_EBADMSG);
	memcpy(rel, save, 12);
	CHECK(pe_load(f, len, &pe, img, 0x1000000) > 0);
	/* no relocation directory, not marked stripped: position independent */
	uint8_t save_dir[8];

	memcpy(save_dir, opt + 112 + 40, 8);
	memset(opt + 112 + 40, 0, 8);
	CHECK(pe_parse(f, len, &pe) == 0 && pe.reloc_size == 0);
	CHECK(pe_load(f, len, &pe, img, 0x1000000) == 0);
	memcpy(opt + 112 + 40, save_dir, 8);
	/* marked stripped, it can only run where it was linked */
	f[lfanew + 22] |= 1;
	CHECK(pe_parse(f, len, &pe) == 0 && pe.relocs_stripped);
	CHECK(pe_load(f, len, &pe, img, 0x1000000) == -FW_ENOTSUP);
	CHECK(pe_load(f, len, &pe, img, BASE) == 0);
	free(img);
	free(f);
}

/* Random damage in the headers and the relocation table. */
static void test_pe_random_damage(void)
{
	char path[128];
	size_t len;
	uint8_t *orig = build_ld_pe(&len, path, sizeof(path)), *f;
	unsigned int seed = 99, parsed = 0;

	if (!orig)
		SKIP("GNU ld without i386pep");
	f = malloc(len);
	for (int iter = 0; iter < 3000; iter++) {
		struct pe_image pe;

		memcpy(f, orig, len);
		for (int k = 0; k < 1 + iter % 6; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % (iter & 1 ? 0x200 : len);

			seed = seed * 1103515245u + 12345u;
			f[at] = (uint8_t)(seed >> 16);
		}
		if (pe_parse(f, len, &pe) || pe.size_of_image > (16u << 20))
			continue;
		parsed++;
		uint8_t *img = malloc(pe.size_of_image);

		pe_load(f, len, &pe, img, 0x5550000 + (uint64_t)(iter & 0xff) * 0x1000);
		free(img);
	}
	CHECK(parsed > 300);
	free(f);
	free(orig);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/efi_pe_test.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	TEST_RUN(test_pe_ld_relocated);
	TEST_RUN(test_pe_gnu_efi);
	TEST_RUN(test_pe_malformed);
	TEST_RUN(test_pe_random_damage);
	sh("rm -rf %s", tmpdir);
	return test_summary();
}
