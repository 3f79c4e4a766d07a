// SPDX-License-Identifier: MIT
/* fw_cfg: the port protocol as a firmware drives it (selector, data port,
 * file directory, DMA read/skip/select/write) against a static "guest",
 * and hostile descriptors. */
#include <errno.h>
#include <stdlib.h>

#include "tests/lib/test.h"
#include "vmm/dev/fw_cfg.h"
#include "vmm/vm/guest_mem.h"

#define RAM_SIZE (64 * 1024)

static uint8_t ram[RAM_SIZE];
static struct guest_mem mem = {.n = 1, .r = {{.gpa = 0, .size = RAM_SIZE, .host = ram}}};

static void sel(struct fw_cfg *fc, uint16_t key)
{
	fw_cfg_pio_write(fc, FW_CFG_PORT_SEL, &key, 2);
}

static void data(struct fw_cfg *fc, void *buf, size_t n)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < n; i++)
		fw_cfg_pio_read(fc, FW_CFG_PORT_DATA, p + i, 1);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/* A DMA descriptor at gpa desc; the address written as two 32-bit big-
 * endian port writes (high, then low: the low one starts it). Returns
 * the control word the device wrote back. */
static uint32_t dma(struct fw_cfg *fc, uint32_t desc, uint32_t control, uint32_t len, uint64_t addr)
{
	uint8_t hi[4], lo[4];

	put_be32(ram + desc, control);
	put_be32(ram + desc + 4, len);
	put_be32(ram + desc + 8, (uint32_t)(addr >> 32));
	put_be32(ram + desc + 12, (uint32_t)addr);
	put_be32(hi, 0);
	put_be32(lo, desc);
	fw_cfg_pio_write(fc, FW_CFG_PORT_DMA, hi, 4);
	fw_cfg_pio_write(fc, FW_CFG_PORT_DMA + 4, lo, 4);
	return be32(ram + desc);
}

static void test_signature_and_id(void)
{
	struct fw_cfg *fc;
	uint8_t buf[8];
	uint32_t id;

	CHECK(fw_cfg_create(&fc, &mem) == 0);
	sel(fc, FW_CFG_SIGNATURE);
	data(fc, buf, 5);
	CHECK(!memcmp(buf, "QEMU\0", 5)); /* zeros past the end */
	sel(fc, FW_CFG_ID);
	data(fc, &id, 4);
	CHECK_EQ_U64(id, FW_CFG_VERSION | FW_CFG_VERSION_DMA);
	/* the DMA register reads "QEMU CFG", big-endian */
	fw_cfg_pio_read(fc, FW_CFG_PORT_DMA, buf, 4);
	fw_cfg_pio_read(fc, FW_CFG_PORT_DMA + 4, buf + 4, 4);
	CHECK(!memcmp(buf, "QEMU CFG", 8));
	/* an unknown key reads zeros */
	sel(fc, 0x1234);
	memset(buf, 0xaa, sizeof(buf));
	data(fc, buf, 2);
	CHECK(buf[0] == 0 && buf[1] == 0);
	/* the interface's own keys are not for the owner to replace */
	CHECK(fw_cfg_add_item(fc, FW_CFG_ID, "x", 1) == -EINVAL);
	CHECK(fw_cfg_add_item(fc, FW_CFG_FILE_DIR, "x", 1) == -EINVAL);
	CHECK(fw_cfg_add_item(fc, FW_CFG_FILE_FIRST, "x", 1) == -EINVAL);
	fw_cfg_destroy(fc);
}

static void test_items_and_directory(void)
{
	struct fw_cfg *fc;
	uint16_t ncpu = 3, got16 = 0;
	uint8_t dir[4 + 3 * 64], buf[16];
	char name[57];

	CHECK(fw_cfg_create(&fc, &mem) == 0);
	CHECK(fw_cfg_add_item(fc, FW_CFG_NB_CPUS, &ncpu, 2) == 0);
	CHECK(fw_cfg_add_file(fc, "etc/one", "first", 5) == 0);
	CHECK(fw_cfg_add_file(fc, "bootorder", "/pci@i0cf8/disk@1\n", 18) == 0);
	CHECK(fw_cfg_add_file(fc, "bootorder", "x", 1) == -EINVAL); /* duplicate */
	memset(name, 'n', 56);
	name[56] = 0;
	CHECK(fw_cfg_add_file(fc, name, "x", 1) == -EINVAL); /* 56 bytes: no room for NUL */
	CHECK(fw_cfg_add_file(fc, "", "x", 1) == -EINVAL);
	sel(fc, FW_CFG_NB_CPUS);
	data(fc, &got16, 2);
	CHECK_EQ_U64(got16, 3);

	sel(fc, FW_CFG_FILE_DIR);
	data(fc, dir, sizeof(dir));
	CHECK_EQ_U64(be32(dir), 2);
	CHECK_EQ_U64(be32(dir + 4), 5);
	CHECK_EQ_U64(dir[8] << 8 | dir[9], FW_CFG_FILE_FIRST);
	CHECK_STR((char *)dir + 12, "etc/one");
	CHECK_EQ_U64(be32(dir + 4 + 64), 18);
	CHECK_EQ_U64(dir[8 + 64] << 8 | dir[9 + 64], FW_CFG_FILE_FIRST + 1);
	CHECK_STR((char *)dir + 12 + 64, "bootorder");
	/* past the directory: zeros */
	CHECK(dir[4 + 2 * 64] == 0);

	/* the selector restarts an item at offset 0 */
	sel(fc, FW_CFG_FILE_FIRST + 1);
	data(fc, buf, 4);
	sel(fc, FW_CFG_FILE_FIRST + 1);
	data(fc, buf, 11);
	CHECK(!memcmp(buf, "/pci@i0cf8/", 11));
	fw_cfg_destroy(fc);
}

static void test_dma(void)
{
	struct fw_cfg *fc;
	const char blob[] = "0123456789abcdef";

	CHECK(fw_cfg_create(&fc, &mem) == 0);
	CHECK(fw_cfg_add_file(fc, "etc/blob", blob, 16) == 0);
	memset(ram, 0xcc, sizeof(ram));
	/* select + read 10 */
	CHECK_EQ_U64(dma(fc, 0x100,
			 (uint32_t)FW_CFG_FILE_FIRST << 16 | FW_CFG_DMA_SELECT | FW_CFG_DMA_READ,
			 10, 0x1000),
		     0);
	CHECK(!memcmp(ram + 0x1000, "0123456789", 10));
	CHECK(ram[0x100a] == 0xcc);
	/* skip 2, read 8: 4 bytes of data, then zeros */
	CHECK_EQ_U64(dma(fc, 0x100, FW_CFG_DMA_SKIP, 2, 0), 0);
	CHECK_EQ_U64(dma(fc, 0x100, FW_CFG_DMA_READ, 8, 0x2000), 0);
	CHECK(!memcmp(ram + 0x2000, "cdef\0\0\0\0", 8));
	/* the data port continues where DMA left off, past the end: 0 */
	uint8_t b = 0xff;

	fw_cfg_pio_read(fc, FW_CFG_PORT_DATA, &b, 1);
	CHECK(b == 0);
	/* no item is writable */
	CHECK_EQ_U64(dma(fc, 0x100,
			 (uint32_t)FW_CFG_FILE_FIRST << 16 | FW_CFG_DMA_SELECT | FW_CFG_DMA_WRITE,
			 4, 0x1000),
		     FW_CFG_DMA_ERROR);
	CHECK(!memcmp(ram + 0x1000, "0123", 4));
	/* a zero-length read is fine and moves nothing */
	CHECK_EQ_U64(dma(fc, 0x100, FW_CFG_DMA_READ, 0, 0xdead0000ull), 0);
	fw_cfg_destroy(fc);
}

static void test_dma_hostile(void)
{
	struct fw_cfg *fc;
	uint8_t lo[4];

	CHECK(fw_cfg_create(&fc, &mem) == 0);
	CHECK(fw_cfg_add_file(fc, "etc/blob", "abcd", 4) == 0);
	memset(ram, 0xcc, sizeof(ram));
	/* a buffer beyond RAM, one that wraps, one that straddles the end */
	CHECK_EQ_U64(dma(fc, 0x100,
			 (uint32_t)FW_CFG_FILE_FIRST << 16 | FW_CFG_DMA_SELECT | FW_CFG_DMA_READ, 4,
			 0x100000000ull),
		     FW_CFG_DMA_ERROR);
	CHECK_EQ_U64(dma(fc, 0x100, FW_CFG_DMA_READ, 0xffffffffu, 0x10), FW_CFG_DMA_ERROR);
	CHECK_EQ_U64(dma(fc, 0x100, FW_CFG_DMA_READ, 8, RAM_SIZE - 4), FW_CFG_DMA_ERROR);
	CHECK(ram[RAM_SIZE - 4] == 0xcc);
	/* a huge skip is harmless */
	CHECK_EQ_U64(dma(fc, 0x100, FW_CFG_DMA_SKIP, 0xffffffffu, 0), 0);
	/* a descriptor outside RAM: nothing happens, nothing crashes */
	put_be32(lo, 0);
	fw_cfg_pio_write(fc, FW_CFG_PORT_DMA, lo, 4);
	put_be32(lo, RAM_SIZE - 8);
	fw_cfg_pio_write(fc, FW_CFG_PORT_DMA + 4, lo, 4);
	/* the descriptor may overlap the buffer: control is written last */
	CHECK_EQ_U64(dma(fc, 0x200,
			 (uint32_t)FW_CFG_FILE_FIRST << 16 | FW_CFG_DMA_SELECT | FW_CFG_DMA_READ, 4,
			 0x200),
		     0);
	/* odd port widths are ignored or read as ones, never out of range */
	fw_cfg_pio_write(fc, FW_CFG_PORT_SEL, lo, 1);
	fw_cfg_pio_write(fc, FW_CFG_PORT_DMA + 6, lo, 4);
	fw_cfg_destroy(fc);
}

int main(void)
{
	TEST_RUN(test_signature_and_id);
	TEST_RUN(test_items_and_directory);
	TEST_RUN(test_dma);
	TEST_RUN(test_dma_hostile);
	return test_summary();
}
