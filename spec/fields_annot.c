// SPDX-License-Identifier: MIT
/*
 * fields_annot.c - the annotations of a VMI that change its domain or its
 * host setup in KubeVirt (virt-launcher's converter and manager, the
 * virt-launcher pod that CRI-O runs), and what vmlet does with each
 * (fields.h): nothing to say where vmlet already gives the guest what the
 * annotation asks, a warning where it does something else, an error where
 * the guest would miss what it was given. Other annotations (labels of
 * KubeVirt's own bookkeeping, migration and test knobs) change no guest.
 */
#include <errno.h>
#include <strings.h>

#include "spec/fields.h"

struct annot_rule {
	const char *key;
	const char *same; /* a value with which vmlet does what KubeVirt does
			   * (compared ignoring case), NULL: none */
	bool refused;	  /* an error rather than a warning */
	const char *text; /* what vmlet does instead */
};

static const struct annot_rule annot_rules[] = {
    /* converter/compute/controllers.go: a pcie-root with pcihole64 0 */
    {"kubevirt.io/disablePCIHole64", "true", false,
     "vmlet's PCI host bridge has no 64-bit MMIO window whatever this says (as with \"true\")"},
    /* converter.go, manager.go: devices on pcie.0 instead of root ports */
    {"kubevirt.io/placePCIDevicesOnRootComplex", "true", false,
     "vmlet puts every device on its PCI root bus whatever this says (as with \"true\")"},
    {"kubevirt.io/pci-interface-slot-count", NULL, false,
     "vmlet reserves no PCI slots for hotplugged interfaces"},
    {"kubevirt.io/pci-topology-version", NULL, false,
     "vmlet's PCI layout is its own (root bus only, no PCIe root ports)"},
    /* converter/compute/qemu_cmd.go: -fw_cfg name=opt/com.coreos/config */
    {"kubevirt.io/ignitiondata", NULL, true,
     "vmlet has no fw_cfg device: the guest would not get its Ignition config"},
    /* pkg/hooks: sidecars that rewrite the domain */
    {"hooks.kubevirt.io/hookSidecars", NULL, false,
     "vmlet runs no hook sidecars: the domain changes they would make are missing"},
    /* converter/vcpu: one more emulator CPU to fill the core */
    {"alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity", NULL, false,
     "isolateEmulatorThread pins vmlet's other threads to one CPU, never two"},
    {"kubevirt.io/vga-display-efi-x86", NULL, false,
     "vmlet has no graphics device (VGA/VNC): the console is the serial port"},
    /* CRI-O's high-performance runtime class, on the virt-launcher pod */
    {"cpu-load-balancing.crio.io", NULL, false,
     "no CRI-O: the kernel's load balancing over the vCPUs' host CPUs stays as the host has it"},
    {"irq-load-balancing.crio.io", NULL, false,
     "no CRI-O: host interrupts may still be routed to the vCPUs' host CPUs"},
    {"cpu-quota.crio.io", NULL, false,
     "no CRI-O: under --jail vmlet's CPU quota stays (limits.cpu, else one CPU per vCPU)"},
};

int fields_check_annotations(const struct resolver *r)
{
	const struct node *an = node_path(r->vmi, "metadata.annotations"), *v;
	const char *where =
	    r->vmi_only ? "metadata.annotations" : "spec.template.metadata.annotations";
	int ret = 0;

	for (size_t i = 0; i < sizeof(annot_rules) / sizeof(annot_rules[0]); i++) {
		const struct annot_rule *a = &annot_rules[i];
		const char *path;

		v = node_get(an, a->key);
		if (!v || (a->same && !strcasecmp(resolve_str(v), a->same)))
			continue;
		path = arena_printf(r->a, "%s[%s]", where, a->key);
		if (a->refused) {
			diag_err(r->d, v, path, "%s", a->text);
			ret = -EINVAL;
		} else {
			diag_warn(r->d, v, path, "%s", a->text);
		}
	}
	return ret;
}
