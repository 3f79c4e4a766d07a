/* SPDX-License-Identifier: MIT */
/*
 * bzImage loading (arch/x86_64/linux.c) with synthetic images built here
 * from the boot protocol (Documentation/arch/x86/boot.rst), and with a real
 * kernel when one is on the machine ($VMLET_TEST_BZIMAGE, build/vmlinuz or
 * /boot/vmlinuz-*), skipped otherwise.
 */
#include <errno.h>
#include <glob.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "tests/lib/bytes.h"
#include "tests/lib/test.h"

#define MiB	 (1ull << 20)
#define MEM	 (64 * MiB)
#define SETUP	 4 /* setup_sects */
#define KSIZE	 8192
#define IMG_SIZE ((SETUP + 1) * 512 + KSIZE)

static uint8_t *mem;

/* low RAM up to the end of the command line: the zero page and cmdline */
#define BP_COPY (ARCH_CMDLINE_GPA + ARCH_CMDLINE_MAX)

/* A bzImage as a 2.15 kernel would look: setup header, then the kernel. */
static void make_bzimage(uint8_t *img)
{
	memset(img, 0, IMG_SIZE);
	img[0x1f1] = SETUP;
	put16(img + 0x1fe, 0xaa55);
	img[0x200] = 0xeb; /* jmp */
	img[0x201] = 0x6a; /* header ends at 0x202 + 0x6a = 0x26c */
	memcpy(img + 0x202, "HdrS", 4);
	put16(img + 0x206, 0x020f);
	img[0x211] = 0x01; /* LOADED_HIGH */
	put32(img + 0x214, 0x100000);
	put32(img + 0x22c, 0x7fffffff); /* initrd_addr_max */
	put32(img + 0x230, 0x200000);	/* kernel_alignment */
	img[0x234] = 1;			/* relocatable */
	put16(img + 0x236, 0x0003);	/* XLF_KERNEL_64 | CAN_BE_LOADED_ABOVE_4G */
	put32(img + 0x238, 2047);	/* cmdline_size */
	put64(img + 0x258, 0x1000000);	/* pref_address */
	put32(img + 0x260, 0x800000);	/* init_size */
	for (size_t i = (SETUP + 1) * 512; i < IMG_SIZE; i++)
		img[i] = (uint8_t)(i * 7);
}

static void test_load(void)
{
	static uint8_t img[IMG_SIZE];
	struct arch_boot_info bi = {MEM, "console=ttyS0 earlyprintk=serial", 0, 0, ARCH_ACPI_GPA};
	const uint8_t *bp = mem + ARCH_ZERO_PAGE_GPA;
	struct arch_e820_entry e[ARCH_E820_MAX];
	uint64_t entry = 0;
	size_t n;

	make_bzimage(img);
	bi.initrd_size = 100000;
	bi.initrd_gpa = arch_linux_initrd_gpa(img, IMG_SIZE, MEM, bi.initrd_size);
	/* Highest page-aligned start below the end of the 64 MiB of RAM. */
	CHECK_EQ_U64(bi.initrd_gpa, (MEM - 100000) & ~0xfffull);
	memset(mem, 0xcc, MEM);
	CHECK_EQ_U64(arch_linux_load(mem, MEM, img, IMG_SIZE, &bi, &entry), 0);
	CHECK_EQ_U64(entry, 0x100200);
	CHECK(!memcmp(mem + 0x100000, img + (SETUP + 1) * 512, KSIZE));
	/* Zero page: header copied, loader fields filled, the rest zeroed. */
	CHECK(!memcmp(bp + 0x1f1, img + 0x1f1, 0x210 - 0x1f1));
	CHECK_EQ_U64(bp[0x210], 0xff); /* type_of_loader */
	CHECK_EQ_U64(rd32(bp + 0x202), rd32(img + 0x202));
	CHECK_EQ_U64(rd32(bp + 0x228), ARCH_CMDLINE_GPA);
	CHECK_STR((const char *)mem + ARCH_CMDLINE_GPA, bi.cmdline);
	CHECK_EQ_U64(rd32(bp + 0x218), bi.initrd_gpa);
	CHECK_EQ_U64(rd32(bp + 0x21c), 100000);
	CHECK_EQ_U64(rd64(bp + 0x070), ARCH_ACPI_GPA);
	CHECK_EQ_U64(bp[0x000], 0);
	CHECK_EQ_U64(bp[0xfff], 0);
	CHECK_EQ_U64(bp[0x26c], 0); /* past the copied header */
	CHECK_EQ_U64(arch_e820_build(MEM, e, ARCH_E820_MAX, &n), 0);
	CHECK_EQ_U64(bp[0x1e8], n);
	for (size_t i = 0; i < n; i++) {
		CHECK_EQ_U64(rd64(bp + 0x2d0 + 20 * i), e[i].addr);
		CHECK_EQ_U64(rd64(bp + 0x2d0 + 20 * i + 8), e[i].size);
		CHECK_EQ_U64(rd32(bp + 0x2d0 + 20 * i + 16), e[i].type);
	}

	/* Protocol 2.13: no acpi_rsdp_addr field yet. */
	put16(img + 0x206, 0x020d);
	bi.initrd_gpa = 0;
	CHECK_EQ_U64(arch_linux_load(mem, MEM, img, IMG_SIZE, &bi, &entry), 0);
	CHECK_EQ_U64(rd64(bp + 0x070), 0);
	CHECK_EQ_U64(rd32(bp + 0x218), 0);
}

static int load_mut(void (*mut)(uint8_t *), const struct arch_boot_info *bi, size_t len)
{
	static uint8_t img[IMG_SIZE];
	uint64_t entry;

	make_bzimage(img);
	if (mut)
		mut(img);
	return arch_linux_load(mem, MEM, img, len, bi, &entry);
}

static void m_flag(uint8_t *i)
{
	put16(i + 0x1fe, 0x1234);
}
static void m_hdrs(uint8_t *i)
{
	memcpy(i + 0x202, "HdrX", 4);
}
static void m_v205(uint8_t *i)
{
	put16(i + 0x206, 0x0205);
}
static void m_v20b(uint8_t *i)
{
	put16(i + 0x206, 0x020b);
}
static void m_nox64(uint8_t *i)
{
	put16(i + 0x236, 0x0002);
}
static void m_zimage(uint8_t *i)
{
	i[0x211] = 0;
}
static void m_setup(uint8_t *i)
{
	i[0x1f1] = 200;
}
static void m_hdrend(uint8_t *i)
{
	i[0x201] = 0xff;
}
static void m_init(uint8_t *i)
{
	put32(i + 0x260, 0x4000000);
}
static void m_initrdmax(uint8_t *i)
{
	put32(i + 0x22c, 0x1ffffff);
}

static void test_rejects(void)
{
	struct arch_boot_info bi = {MEM, NULL, 0, 0, 0};
	static char cl[3000];
	static uint8_t img[IMG_SIZE];

	CHECK_EQ_U64(load_mut(NULL, &bi, IMG_SIZE), 0);
	CHECK_EQ_U64(load_mut(m_flag, &bi, IMG_SIZE), (uint64_t)-ENOEXEC);
	CHECK_EQ_U64(load_mut(m_hdrs, &bi, IMG_SIZE), (uint64_t)-ENOEXEC);
	CHECK_EQ_U64(load_mut(m_v205, &bi, IMG_SIZE), (uint64_t)-ENOEXEC);
	CHECK_EQ_U64(load_mut(m_v20b, &bi, IMG_SIZE), (uint64_t)-ENOEXEC);
	CHECK_EQ_U64(load_mut(m_nox64, &bi, IMG_SIZE), (uint64_t)-ENOEXEC);
	CHECK_EQ_U64(load_mut(m_zimage, &bi, IMG_SIZE), (uint64_t)-ENOEXEC);
	CHECK_EQ_U64(load_mut(m_setup, &bi, IMG_SIZE), (uint64_t)-ENOEXEC);
	/* A header running into the zero page's e820 table (0x2d0) is bogus. */
	CHECK_EQ_U64(load_mut(m_hdrend, &bi, IMG_SIZE), (uint64_t)-ENOEXEC);
	/* 16 MiB pref_address + 64 MiB init_size does not fit 64 MiB of RAM. */
	CHECK_EQ_U64(load_mut(m_init, &bi, IMG_SIZE), (uint64_t)-ENOMEM);
	for (size_t t = 0; t < 0x300; t += 3)
		CHECK(load_mut(NULL, &bi, t) < 0);
	/* Command line longer than cmdline_size (2047). */
	memset(cl, 'a', 2048);
	bi.cmdline = cl;
	CHECK_EQ_U64(load_mut(NULL, &bi, IMG_SIZE), (uint64_t)-E2BIG);
	cl[2047] = 0;
	CHECK_EQ_U64(load_mut(NULL, &bi, IMG_SIZE), 0);
	/* initrd over the decompressed kernel, past RAM, past initrd_addr_max. */
	bi.initrd_size = 4096;
	bi.initrd_gpa = 0x1000000;
	CHECK_EQ_U64(load_mut(NULL, &bi, IMG_SIZE), (uint64_t)-ERANGE);
	bi.initrd_gpa = MEM - 2048;
	CHECK_EQ_U64(load_mut(NULL, &bi, IMG_SIZE), (uint64_t)-ERANGE);
	bi.initrd_gpa = 0x2000000;
	CHECK_EQ_U64(load_mut(m_initrdmax, &bi, IMG_SIZE), (uint64_t)-ERANGE);
	CHECK_EQ_U64(load_mut(NULL, &bi, IMG_SIZE), 0);

	/* initrd placement limits. */
	make_bzimage(img);
	m_initrdmax(img);
	CHECK_EQ_U64(arch_linux_initrd_gpa(img, IMG_SIZE, MEM, 4096), 0x2000000 - 4096);
	/* Too big to sit above the 16 + 8 MiB the kernel claims. */
	make_bzimage(img);
	CHECK_EQ_U64(arch_linux_initrd_gpa(img, IMG_SIZE, MEM, 41 * MiB), 0);
	CHECK(arch_linux_initrd_gpa(img, IMG_SIZE, MEM, 40 * MiB) >= 24 * MiB);
	/* With 8 GiB the limit is initrd_addr_max, else the MMIO hole. */
	CHECK_EQ_U64(arch_linux_initrd_gpa(img, IMG_SIZE, 8ull << 30, 4096), 0x80000000 - 4096);
	put32(img + 0x22c, 0xffffffff);
	CHECK_EQ_U64(arch_linux_initrd_gpa(img, IMG_SIZE, 8ull << 30, 4096),
		     ARCH_MMIO_HOLE_START - 4096);
	CHECK_EQ_U64(arch_linux_initrd_gpa((const uint8_t *)"junk", 4, MEM, 4096), 0);
}

/* A real kernel, when the machine has one: only header parsing and the
 * zero page are checked (it is never run here). */
static void test_real_kernel(void)
{
	const char *path = getenv("VMLET_TEST_BZIMAGE");
	struct arch_boot_info bi = {512 * MiB, "console=ttyS0", 0, 0, ARCH_ACPI_GPA};
	uint8_t *big, *img;
	size_t len = 0;
	uint64_t entry = 0;
	glob_t g = {0};

	/* build/vmlinuz is where the smoke-test fetch script leaves its kernel. */
	if (!path && !glob("build/vmlinuz", 0, NULL, &g) && g.gl_pathc)
		path = g.gl_pathv[0];
	if (!path && !glob("/boot/vmlinuz-*", GLOB_APPEND, NULL, &g) && g.gl_pathc)
		path = g.gl_pathv[0];
	if (!path) {
		globfree(&g);
		SKIP("no bzImage: VMLET_TEST_BZIMAGE, build/vmlinuz, /boot/vmlinuz-*");
	}
	img = (uint8_t *)test_read_file(path, &len);
	big = calloc(1, 512 * MiB);
	CHECK(img && big);
	if (img && big) {
		bi.initrd_size = 1 * MiB;
		bi.initrd_gpa = arch_linux_initrd_gpa(img, len, bi.mem_bytes, bi.initrd_size);
		CHECK(bi.initrd_gpa != 0);
		CHECK_EQ_U64(arch_linux_load(big, 512 * MiB, img, len, &bi, &entry), 0);
		CHECK_EQ_U64(entry, 0x100200);
		CHECK_EQ_U64(big[ARCH_ZERO_PAGE_GPA + 0x210], 0xff);
		CHECK(!memcmp(big + ARCH_ZERO_PAGE_GPA + 0x202, "HdrS", 4));
		/* from its header alone: the payload is the rest of the file */
		struct arch_linux_payload pl = {0};
		uint64_t e2 = 0;

		CHECK_EQ_U64(arch_linux_load_hdr(big, 512 * MiB, img, ARCH_LINUX_HDR_LEN, len, &bi,
						 &e2, &pl),
			     0);
		CHECK_EQ_U64(e2, entry);
		CHECK_EQ_U64(pl.offset + pl.len, len);
		CHECK(!memcmp(big + pl.gpa, img + pl.offset, pl.len));
		printf("  %s: protocol %#x, %zu bytes\n", path,
		       big[ARCH_ZERO_PAGE_GPA + 0x206] | big[ARCH_ZERO_PAGE_GPA + 0x207] << 8, len);
	}
	free(big);
	free(img);
	globfree(&g);
}

/* Deterministic mutation of the setup header: no crash, no out-of-bounds
 * read (sanitizer build), and an accepted image loads inside RAM. */
static void test_mutations(void)
{
	static uint8_t img[IMG_SIZE];
	struct arch_boot_info bi = {MEM, "console=ttyS0", 0x3000000, 4096, ARCH_ACPI_GPA};
	uint64_t x = 0x2545f4914f6cdd1dull;
	int accepted = 0;

	for (int iter = 0; iter < 20000; iter++) {
		uint64_t entry = 0;
		size_t len = IMG_SIZE - (size_t)(iter % 3) * 1500;
		int r;

		make_bzimage(img);
		for (int k = 0; k < 1 + (iter % 3); k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			img[0x1f1 + (x >> 8) % (0x270 - 0x1f1)] = (uint8_t)x;
		}
		r = arch_linux_load(mem, MEM, img, len, &bi, &entry);
		CHECK(r <= 0);
		if (!r) {
			accepted++;
			CHECK_EQ_U64(entry, 0x100200);
		}
		(void)arch_linux_initrd_gpa(img, len, MEM, 1 << 20);
	}
	CHECK(accepted > 0);
}

/*
 * arch_linux_load_hdr() given only the file's first ARCH_LINUX_HDR_LEN
 * bytes (boot.c then reads the rest straight into guest RAM) decides as
 * arch_linux_load() does with the whole image: the same result for valid
 * and mutated headers, the same zero page and command line, and the payload
 * it names (file range and gpa) is the one arch_linux_load() copies.
 */
static void test_load_from_header(void)
{
	static uint8_t img[IMG_SIZE];
	struct arch_boot_info bi = {MEM, "console=ttyS0", 0x3000000, 4096, ARCH_ACPI_GPA};
	uint8_t *zp = malloc(BP_COPY);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int accepted = 0;

	CHECK(zp != NULL);
	for (int iter = 0; zp && iter < 3000; iter++) {
		struct arch_linux_payload pl = {0};
		uint64_t e1 = 0, e2 = 0;
		size_t len = IMG_SIZE - (size_t)(iter % 3) * 1500;
		int r1, r2;

		make_bzimage(img);
		for (int k = 0; iter && k < 1 + (iter % 3); k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			img[0x1f1 + (x >> 8) % (0x270 - 0x1f1)] = (uint8_t)x;
		}
		memset(mem, 0xcc, BP_COPY);
		r2 = arch_linux_load_hdr(mem, MEM, img, ARCH_LINUX_HDR_LEN, len, &bi, &e2, &pl);
		memcpy(zp, mem, BP_COPY);
		memset(mem, 0xcc, BP_COPY);
		r1 = arch_linux_load(mem, MEM, img, len, &bi, &e1);
		CHECK_EQ_U64(r2, r1);
		CHECK_EQ_U64(arch_linux_initrd_gpa_hdr(img, ARCH_LINUX_HDR_LEN, len, MEM, 1 << 20),
			     arch_linux_initrd_gpa(img, len, MEM, 1 << 20));
		if (r1 || r2)
			continue;
		accepted++;
		CHECK_EQ_U64(e2, e1);
		CHECK(!memcmp(zp, mem, BP_COPY)); /* zero page and command line */
		CHECK_EQ_U64(pl.gpa, 0x100000);
		CHECK_EQ_U64(pl.offset + pl.len, len);
		CHECK(!memcmp(mem + pl.gpa, img + pl.offset, pl.len));
	}
	CHECK(accepted > 0);
	free(zp);
}

int main(void)
{
	mem = calloc(1, MEM);
	TEST_RUN(test_load);
	TEST_RUN(test_rejects);
	TEST_RUN(test_mutations);
	TEST_RUN(test_load_from_header);
	TEST_RUN(test_real_kernel);
	free(mem);
	return test_summary();
}
