/* SPDX-License-Identifier: MIT */
/*
 * device.c - the device table. vm_create() instantiates these in this
 * order and destroys them in reverse; the order is the only place where
 * "which devices does a vmlet VM have" is written down. Also
 * device_request_exit(), a device's way to end the VM (device_vm.c has
 * the rest of device.h's VM-facing functions).
 */
#include <errno.h>
#include <stdlib.h>

#include "vmm/dev/devices.h"
#include "vmm/dev/flash.h"
#include "vmm/dev/pci_devices.h"
#include "vmm/dev/tpm/tpm_dev.h"
#include "vmm/vm/device.h"
#include "vmm/util/log.h"
#include "vmm/vm/vm.h"

static const struct device_type *const device_types[] = {
    &legacy_ports_device, /* port 0x80, 0xe9 debugcon, 0xf4 debug exit */
    &rtc_device,	  /* CMOS RTC 0x70/0x71 */
    &i8042_device,	  /* 0x60/0x64: reset line only */
    &serial8250_device,	  /* COM1 0x3f8, IRQ 4 */
    &acpi_pm_device,	  /* PM1a event/control, power button, S5 */
    &report_port_device,  /* probe's fast report port (captured console only) */
    &efi_port_device,	  /* EFI firmware's boot order and variable store */
    &fw_cfg_device,	  /* 0x510-0x51b firmware configuration (BIOS, OVMF VMs) */
    &flash_device,	  /* OVMF VMs: code and variable flash below 4 GiB */
    &tpm_device,	  /* devices.tpm: TPM 2.0 CRB at 0xfed40000, swtpm */
    &pci_devices_device,  /* PCI host + virtio-blk/net/rng functions */
};

#define N_TYPES (sizeof(device_types) / sizeof(device_types[0]))

int device_create_all(const struct device_env *env, struct device_instance **out, unsigned int *n)
{
	struct device_instance *devs = NULL, *grown;
	unsigned int i, k, count, used = 0;
	void *state;
	int ret;

	for (i = 0; i < N_TYPES; i++) {
		const struct device_type *t = device_types[i];

		count = t->count ? t->count(env->cfg) : 1;
		for (k = 0; k < count; k++) {
			state = NULL;
			ret = t->create(env, k, &state);
			if (ret) {
				error_errno(ret, "%s: cannot create device %u", t->name, k);
				goto out_destroy;
			}
			if (!state)
				continue;
			grown = realloc(devs, (used + 1) * sizeof(*devs));
			if (!grown) {
				if (t->destroy)
					t->destroy(state);
				ret = -ENOMEM;
				goto out_destroy;
			}
			devs = grown;
			devs[used++] = (struct device_instance){t, state};
		}
	}
	*out = devs;
	*n = used;
	return 0;
out_destroy:
	device_destroy_all(devs, used);
	return ret;
}

void device_quiesce_all(struct device_instance *devs, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (devs[i].type->quiesce && devs[i].state)
			devs[i].type->quiesce(devs[i].state);
}

void device_destroy_all(struct device_instance *devs, unsigned int n)
{
	while (n-- > 0)
		if (devs[n].type->destroy)
			devs[n].type->destroy(devs[n].state);
	free(devs);
}

void device_request_exit(struct vm *vm, enum vm_exit_reason reason)
{
	vm_request_exit(vm, reason);
}
