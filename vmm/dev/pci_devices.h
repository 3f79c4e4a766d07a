/* SPDX-License-Identifier: MIT */
/*
 * pci_devices.h - the device-table entry for the PCI bus and its
 * functions (vmm/dev/pci_devices.c): host bridge, virtio-blk per disk,
 * virtio-net or e1000e per interface, virtio-rng. Disk order, names and serials
 * follow the resolved VMI; an unsupported bus, device type or volume kind
 * fails VM creation with an error naming the disk.
 */
#ifndef VMLET_PCI_DEVICES_H
#define VMLET_PCI_DEVICES_H

#include "vmm/vm/device.h"

extern const struct device_type pci_devices_device;

struct vm;
struct virtio_net;

/* The q35 chipset of an OVMF VM (NULL: none). */
struct q35;
struct q35 *pci_devices_q35(struct vm *vm);
/* The VM's i-th virtio-net (interface order), NULL when it has none. */
struct virtio_net *pci_devices_nic(struct vm *vm, unsigned int i);
/* The bus-0 device number of the VM's i-th disk (disk order), -ENOENT. */
int pci_devices_disk_slot(struct vm *vm, unsigned int i);
/* The AHCI port of the VM's i-th disk when it is on bus sata, else -1. */
int pci_devices_disk_port(struct vm *vm, unsigned int i);

#endif /* VMLET_PCI_DEVICES_H */
