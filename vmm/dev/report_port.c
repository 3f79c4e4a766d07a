/* SPDX-License-Identifier: MIT */
/*
 * report_port.c - the probe's fast report path (firmware/abi.h, "Fast
 * report path"): at FW_ABI_REPORT_PORT a 32-bit read returns
 * FW_ABI_REPORT_MAGIC, and a 32-bit write gives the guest-physical address
 * of a struct fw_abi_report_desc whose text vmlet appends to the captured
 * console, as if it had come through COM1 one byte (one VM exit) at a time.
 *
 * Only offered when the console is captured (`vmlet probe`): a VM whose
 * console goes to the user must not have its output diverted; there the
 * port is absent, claimed quietly by legacy.c (the probe reads it at every
 * boot to learn whether it is offered). Everything
 * the guest hands over is untrusted: the descriptor and the text are
 * bounds-checked through guest_mem_ptr() and bad ones are dropped with a
 * warning.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "firmware/abi.h"
#include "vmm/vm/bus.h"
#include "vmm/dev/devices.h"
#include "vmm/vm/device.h"
#include "vmm/vm/guest_mem.h"
#include "vmm/util/log.h"

_Static_assert(sizeof(struct fw_abi_report_desc) == 16, "fw_abi_report_desc is 16 bytes");

struct report_port {
	struct vm *vm;
	struct bus *pio;
	struct guest_mem *mem;
};

static void report_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	uint32_t magic = FW_ABI_REPORT_MAGIC;

	(void)dev;
	memset(data, 0xff, len);
	if (off == 0 && len == 4)
		memcpy(data, &magic, 4);
}

static void report_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct report_port *p = dev;
	struct fw_abi_report_desc desc;
	const void *src, *text;
	uint32_t gpa;

	if (off != 0 || len != 4) {
		log_warn_once("report: ignoring a %u-byte write at offset %llu", len,
			      (unsigned long long)off);
		return;
	}
	memcpy(&gpa, data, 4);
	src = (gpa & 7) ? NULL : guest_mem_ptr(p->mem, gpa, sizeof(desc));
	if (!src) {
		log_warn_once("report: descriptor address 0x%x is not aligned guest RAM", gpa);
		return;
	}
	memcpy(&desc, src, sizeof(desc)); /* one snapshot: the guest may race */
	text = guest_mem_ptr(p->mem, desc.addr, desc.len);
	if (desc.magic != FW_ABI_REPORT_MAGIC || desc.len > FW_ABI_REPORT_MAX || !text) {
		log_warn_once("report: bad descriptor (magic 0x%x, %u bytes at 0x%llx)", desc.magic,
			      desc.len, (unsigned long long)desc.addr);
		return;
	}
	device_console_capture(p->vm, text, desc.len);
}

static const struct io_ops report_ops = {
    .read = report_read,
    .write = report_write,
};

static void report_destroy(void *state)
{
	struct report_port *p = state;

	bus_unregister(p->pio, FW_ABI_REPORT_PORT);
	free(p);
}

static int report_create(const struct device_env *env, unsigned int index, void **state)
{
	struct report_port *p;
	int ret;

	(void)index;
	if (env->console->kind != VM_CONSOLE_CAPTURE)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	*p = (struct report_port){env->vm, env->pio, env->mem};
	ret = bus_register(env->pio, FW_ABI_REPORT_PORT, 4, &report_ops, p);
	if (ret) {
		free(p);
		return ret;
	}
	*state = p;
	return 0;
}

const struct device_type report_port_device = {
    .name = "report-port",
    .create = report_create,
    .destroy = report_destroy,
};
