// SPDX-License-Identifier: MIT
/*
 * efi_port.c - the EFI platform port for vmlet's UEFI firmware
 * (firmware/abi.h, "EFI platform port"): console output in one piece
 * (to the serial console, as if through COM1), the PCI slots in use, the
 * disks' boot order and the variable store (vmm/boot/efi_vars.h): a file when
 * the VM persists its variables (efi.persistent), else, when vmlet may
 * restart the guest, one in memory that outlives a guest's reboot. Present in every VM (vmlet's
 * firmware also runs as a plain PVH kernel, --kernel build/fw/efi.elf); the store only in EFI VMs.
 *
 * Requests run on the vCPU thread that wrote the port, under the port's
 * lock. The descriptor and buffers are guest memory: each is bounds-checked
 * through guest_mem_ptr(), the descriptor is read once, and a bad request
 * gets FW_ABI_EFI_BAD (and one warning) rather than anything else.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "firmware/abi.h"
#include "vmm/vm/bus.h"
#include "vmm/dev/devices.h"
#include "vmm/dev/pci_devices.h"
#include "vmm/vm/device.h"
#include "vmm/boot/efi_vars.h"
#include "vmm/vm/guest_mem.h"
#include "vmm/util/log.h"
#include "vmm/vm_config.h"

_Static_assert(sizeof(struct fw_abi_efi_desc) == 32, "fw_abi_efi_desc is 32 bytes");

struct efi_port {
	struct vm *vm;
	struct bus *pio;
	struct guest_mem *mem;
	pthread_mutex_t lock;
	uint16_t *order; /* disk indexes in boot order */
	unsigned int n_order;
	bool persistent; /* a store (file or memory) is open */
	struct efi_vars vars;
};

static void efi_port_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	uint32_t magic = FW_ABI_EFI_MAGIC;

	(void)dev;
	memset(data, 0xff, len);
	if (off == 0 && len == 4)
		memcpy(data, &magic, 4);
}

/* FW_ABI_EFI_BOOT_LOCS: where each disk of the boot order is (the PCI
 * devices exist by the time the firmware asks). */
static uint32_t efi_port_locs(struct efi_port *p, struct fw_abi_efi_desc *d)
{
	uint32_t n = p->n_order * 2 < d->cap ? p->n_order * 2 : d->cap & ~1u;
	uint16_t *buf = guest_mem_ptr(p->mem, d->addr, n);

	if (!buf)
		return FW_ABI_EFI_BAD;
	for (uint32_t k = 0; k < n / 2; k++) {
		int slot = pci_devices_disk_slot(p->vm, p->order[k]),
		    port = pci_devices_disk_port(p->vm, p->order[k]);
		uint16_t loc = FW_ABI_EFI_LOC_NONE;

		if (slot >= 0 && slot < 32 && port < 255)
			loc = (uint16_t)((uint32_t)slot << 3 | (port >= 0 ? (uint32_t)port + 1 : 0)
								   << 8);
		memcpy(buf + k, &loc, 2);
	}
	d->len = n;
	return FW_ABI_EFI_OK;
}

static uint32_t efi_port_op(struct efi_port *p, struct fw_abi_efi_desc *d)
{
	uint32_t n;
	void *buf;

	switch (d->op) {
	case FW_ABI_EFI_BOOT_ORDER:
		n = p->n_order * 2 < d->cap ? p->n_order * 2 : d->cap & ~1u;
		buf = guest_mem_ptr(p->mem, d->addr, n);
		if (!buf)
			return FW_ABI_EFI_BAD;
		memcpy(buf, p->order, n);
		d->len = n;
		return FW_ABI_EFI_OK;
	case FW_ABI_EFI_BOOT_LOCS:
		return efi_port_locs(p, d);
	case FW_ABI_EFI_VARS_LOAD:
		d->len = 0;
		if (!p->persistent)
			return FW_ABI_EFI_UNSUPPORTED;
		if (p->vars.len > d->cap)
			return FW_ABI_EFI_TOO_BIG;
		buf = guest_mem_ptr(p->mem, d->addr, p->vars.len);
		if (!buf)
			return FW_ABI_EFI_BAD;
		memcpy(buf, p->vars.blob, p->vars.len);
		d->len = (uint32_t)p->vars.len;
		return FW_ABI_EFI_OK;
	case FW_ABI_EFI_VARS_SAVE:
		if (!p->persistent)
			return FW_ABI_EFI_UNSUPPORTED;
		if (d->len > FW_ABI_EFI_VARS_MAX)
			return FW_ABI_EFI_TOO_BIG;
		buf = guest_mem_ptr(p->mem, d->addr, d->len);
		if (!buf)
			return FW_ABI_EFI_BAD;
		/* efi_vars_save() takes its own copy before writing */
		if (efi_vars_save(&p->vars, buf, d->len)) {
			log_warn_once("efi: cannot save the variable store '%s'", p->vars.path);
			return FW_ABI_EFI_UNSUPPORTED;
		}
		return FW_ABI_EFI_OK;
	case FW_ABI_EFI_PCI_SLOTS:
		n = device_pci_slots(p->vm);
		d->len = 0;
		if (!n)
			return FW_ABI_EFI_UNSUPPORTED;
		if (d->cap < 4)
			return FW_ABI_EFI_TOO_BIG;
		buf = guest_mem_ptr(p->mem, d->addr, 4);
		if (!buf)
			return FW_ABI_EFI_BAD;
		memcpy(buf, &n, 4);
		d->len = 4;
		return FW_ABI_EFI_OK;
	case FW_ABI_EFI_CONSOLE:
		if (d->len > FW_ABI_EFI_CONSOLE_MAX)
			return FW_ABI_EFI_TOO_BIG;
		buf = guest_mem_ptr(p->mem, d->addr, d->len);
		if (!buf)
			return FW_ABI_EFI_BAD;
		return device_console_write(p->vm, buf, d->len) ? FW_ABI_EFI_UNSUPPORTED
								: FW_ABI_EFI_OK;
	default:
		return FW_ABI_EFI_BAD;
	}
}

static void efi_port_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct efi_port *p = dev;
	struct fw_abi_efi_desc d, *g;
	uint32_t gpa;

	if (off != 0 || len != 4)
		return;
	memcpy(&gpa, data, 4);
	g = (gpa & 7) ? NULL : guest_mem_ptr(p->mem, gpa, sizeof(d));
	if (!g) {
		log_warn_once("efi: port descriptor address 0x%x is not aligned guest RAM", gpa);
		return;
	}
	memcpy(&d, g, sizeof(d)); /* one snapshot: the guest may race */
	pthread_mutex_lock(&p->lock);
	d.status = d.magic == FW_ABI_EFI_MAGIC ? efi_port_op(p, &d) : FW_ABI_EFI_BAD;
	pthread_mutex_unlock(&p->lock);
	if (d.status == FW_ABI_EFI_BAD)
		log_warn_once("efi: bad port request (op %u, %u bytes at 0x%llx)", d.op, d.len,
			      (unsigned long long)d.addr);
	memcpy(&g->status, &d.status, 4);
	memcpy(&g->len, &d.len, 4);
}

static const struct io_ops efi_port_ops = {
    .read = efi_port_read,
    .write = efi_port_write,
};

static void efi_port_destroy(void *state)
{
	struct efi_port *p = state;

	if (!p)
		return;
	bus_unregister(p->pio, FW_ABI_EFI_PORT);
	if (p->persistent)
		efi_vars_close(&p->vars);
	pthread_mutex_destroy(&p->lock);
	free(p->order);
	free(p);
}

/* Disks with a bootOrder (lowest first), then the rest in disk order. */
static int efi_port_order(struct efi_port *p, const struct vm_config *cfg)
{
	p->order = calloc(cfg->n_disks ? cfg->n_disks : 1, sizeof(*p->order));
	if (!p->order)
		return -ENOMEM;
	for (unsigned int i = 0; i < cfg->n_disks && i < 0xffff; i++) {
		unsigned int k = p->n_order++;
		uint32_t bo = cfg->disks[i].boot_order;

		for (; k && bo &&
		       (!cfg->disks[p->order[k - 1]].boot_order ||
			cfg->disks[p->order[k - 1]].boot_order > bo);
		     k--)
			p->order[k] = p->order[k - 1];
		p->order[k] = (uint16_t)i;
	}
	return 0;
}

static int efi_port_create(const struct device_env *env, unsigned int index, void **state)
{
	struct efi_port *p;
	const char *path;
	int ret;

	(void)index;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->vm = env->vm;
	p->pio = env->pio;
	p->mem = env->mem;
	p->vars.fd = -1;
	pthread_mutex_init(&p->lock, NULL);
	ret = efi_port_order(p, env->cfg);
	/* the store's path is a run option (vm_options.efi_vars) */
	path = env->fw ? env->fw->efi_vars : NULL;
	if (!ret && env->cfg->boot == VM_BOOT_EFI && env->cfg->efi_persistent && path) {
		ret = efi_vars_open(&p->vars, path);
		p->persistent = !ret;
		if (!ret)
			log_info("efi: variables persist in '%s'", path);
	} else if (!ret && env->cfg->boot == VM_BOOT_EFI && env->fw && env->fw->efi_vars_volatile) {
		/* not persistent, but kept across the guest's reboots */
		ret = efi_vars_open_fd(&p->vars, env->fw->efi_vars_fd);
		p->persistent = !ret;
	}
	if (!ret)
		ret = bus_register(env->pio, FW_ABI_EFI_PORT, 4, &efi_port_ops, p);
	if (ret) {
		if (p->persistent)
			efi_vars_close(&p->vars);
		pthread_mutex_destroy(&p->lock);
		free(p->order);
		free(p);
		return ret;
	}
	*state = p;
	return 0;
}

/* Snapshot: the port keeps no guest-visible state between two requests
 * (each is carried out before the guest's write returns); the variable
 * store is the file or memory the restoring vmlet opens, as after a
 * restart (docs/snapshot.md). */
static int efi_port_save(void *state, struct snap_buf *b)
{
	(void)state;
	(void)b;
	return 0;
}

static int efi_port_load(void *state, struct snap_cur *c)
{
	(void)state;
	(void)c;
	return 0;
}

const struct device_type efi_port_device = {
    .name = "efi-port",
    .create = efi_port_create,
    .destroy = efi_port_destroy,
    .save = efi_port_save,
    .load = efi_port_load,
};
