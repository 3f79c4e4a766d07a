/* SPDX-License-Identifier: MIT */
/*
 * fw_cfg_fuzz.c - libFuzzer target for the fw_cfg device (vmm/dev/fw_cfg.c)
 * as a hostile guest (firmware, or a kernel poking the ports) drives it:
 * selector and data port accesses, DMA descriptors in guest RAM and the
 * DMA address register written in pieces, over items and files like the
 * ones BIOS boot adds (an empty one, one bigger than RAM).
 *
 * Guest RAM is two regions in exact-size allocations, [0, 0x2000) and
 * [0x2000, 0x3000), so ASan sees a transfer that runs off a region or
 * straddles them. Input: 2 bytes (little-endian) n, n bytes of RAM from
 * gpa 0, then operations until the input ends; op % 6: 0 select (key16),
 * 1 data reads (op >> 3: count and width), 2 DMA (descriptor gpa16: the
 * address register written high half then low half), 3 a port write (port
 * byte, width from op, value), 4 a port read (port byte, width from op),
 * 5 the guest writes RAM (off16, len8, bytes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_input.h"
#include "vmm/dev/fw_cfg.h"
#include "vmm/vm/guest_mem.h"
#include "vmm/util/log.h"

#define RAM0 0x2000u
#define RAM1 0x1000u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t big[RAM0 + RAM1 + 77];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "fw-cfg-fuzz", NULL);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13 + 1);
	return 0;
}

static struct fw_cfg *make(struct guest_mem *mem)
{
	static const uint8_t e820[40] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 1};
	uint16_t cpus = 4;
	struct fw_cfg *fc;

	if (fw_cfg_create(&fc, mem) || fw_cfg_add_item(fc, FW_CFG_NB_CPUS, &cpus, 2) ||
	    fw_cfg_add_item(fc, FW_CFG_UUID, big, 16) ||
	    fw_cfg_add_file(fc, "etc/e820", e820, sizeof(e820)) ||
	    fw_cfg_add_file(fc, "bootorder", "/pci@i0cf8/*@4\n", 15) ||
	    fw_cfg_add_file(fc, "etc/empty", NULL, 0) ||
	    fw_cfg_add_file(fc, "etc/big", big, sizeof(big)))
		abort();
	return fc;
}

static unsigned int width(uint8_t op)
{
	return 1u << (op >> 3 & 3) % 3; /* 1, 2, 4 */
}

static void ops(struct fw_cfg *fc, uint8_t *ram, const uint8_t *d, size_t n)
{
	uint8_t v[8];
	size_t i = 0;

	while (i < n) {
		uint8_t op = d[i++];
		unsigned int w = width(op);

		switch (op % 6) {
		case 0:
			if (i + 2 <= n)
				fw_cfg_pio_write(fc, FW_CFG_PORT_SEL, d + i, 2);
			i += 2;
			break;
		case 1:
			for (unsigned int k = 0; k <= (op >> 5); k++)
				fw_cfg_pio_read(fc, FW_CFG_PORT_DATA, v, w);
			break;
		case 2:
			if (i + 2 <= n) {
				uint8_t hi[4] = {0}, lo[4] = {0, 0, d[i + 1], d[i]};

				fw_cfg_pio_write(fc, FW_CFG_PORT_DMA, hi, 4);
				fw_cfg_pio_write(fc, FW_CFG_PORT_DMA + 4, lo, 4);
			}
			i += 2;
			break;
		case 3:
			if (i + 1 + w <= n)
				fw_cfg_pio_write(fc, (uint16_t)(FW_CFG_PORT_SEL + d[i] % 12),
						 d + i + 1, w);
			i += 1 + w;
			break;
		case 4:
			if (i < n)
				fw_cfg_pio_read(fc, (uint16_t)(FW_CFG_PORT_SEL + d[i] % 12), v, w);
			i++;
			break;
		default:
			fuzz_ram_write(ram, RAM0, d, n, &i);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guest_mem mem = {.n = 2, .total = RAM0 + RAM1, .page_size = 4096};
	uint8_t *ram0 = calloc(1, RAM0), *ram1 = calloc(1, RAM1);
	struct fw_cfg *fc;
	size_t n;

	if (!ram0 || !ram1)
		abort();
	mem.r[0] = (struct guest_mem_region){0, RAM0, ram0};
	mem.r[1] = (struct guest_mem_region){RAM0, RAM1, ram1};
	if (size >= 2) {
		n = data[0] | (size_t)data[1] << 8;
		n = n < size - 2 ? n : size - 2;
		memcpy(ram0, data + 2, n < RAM0 ? n : RAM0);
		fc = make(&mem);
		ops(fc, ram0, data + 2 + n, size - 2 - n);
		fw_cfg_destroy(fc);
	}
	free(ram0);
	free(ram1);
	return 0;
}
