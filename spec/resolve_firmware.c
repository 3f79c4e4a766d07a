// SPDX-License-Identifier: MIT
/*
 * resolve_firmware.c - the firmware UUID KubeVirt's VM controller gives a
 * VirtualMachine without one (pkg/virt-controller/watch/vm: firmware.go
 * FirmwareController.Sync patches the VM, vm.go setupStableFirmwareUUID
 * the VMI it creates): CalculateLegacyUUID(vm.Name), a UUID version 5
 * of the VM's name, so the guest's SMBIOS system UUID (and cloud-init's
 * instance-id) stay the same across restarts.
 *
 * KubeVirt's VM mutating webhook gives a VM a random UUID (and serial)
 * when it is created and stores it in the VM; vmlet keeps no VM object
 * between runs, so it takes the stable derivation the controller applies
 * to a VM stored without one. A VirtualMachineInstance on its own gets
 * nothing here (KubeVirt leaves its spec alone; libvirt then draws a
 * random UUID, as config_from_resolution() does).
 */
#include "spec/resolve.h"
#include "spec/uuid.h"

void firmware_uuid_default(struct resolver *r, struct node *tmpl)
{
	struct node *fw;
	char u[UUID_STR_LEN];

	if (!node_is_map(tmpl) || *resolve_str(node_path(tmpl, "spec.domain.firmware.uuid")))
		return;
	uuid_kubevirt_legacy(r->name, u);
	if (!u[0])
		return;
	fw = node_get_map(r->a, node_get_map(r->a, node_get_map(r->a, tmpl, "spec"), "domain"),
			  "firmware");
	node_set(r->a, fw, "uuid", node_str(r->a, u))->origin = "default";
}
