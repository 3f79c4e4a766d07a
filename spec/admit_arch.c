/* SPDX-License-Identifier: MIT */
/*
 * admit_arch.c - ValidateVirtualMachineInstancePerArch of the VMI create
 * admitter (spec/admit.h): the settings each architecture allows
 * (pkg/virt-api/webhooks/amd64.go, arm64.go, s390x.go) and an unknown
 * architecture. An unset architecture is KubeVirt's default, amd64 (§0.1).
 */
#include <string.h>

#include "spec/admit.h"

static bool in(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(*set, s) == 0)
			return true;
	return false;
}

static void video_type(const struct admit *a, const char *arch, const char *const *ok)
{
	const struct node *v = node_path(a->dom, "devices.video");
	const char *t = resolve_str(node_get(v, "type"));

	if (!node_is_null(v) && !in(t, ok))
		admit_err(a, node_get(v, "type") ? node_get(v, "type") : v,
			  admit_path(a, "domain.devices.video.type"),
			  "video model '%s' is not supported on %s architecture", t, arch);
}

/* the only watchdog model an architecture has (i6300esb, diag288) */
static void watchdog_only(const struct admit *a, const char *model, const char *msg)
{
	const struct node *wd = node_path(a->dom, "devices.watchdog");
	const char *other = strcmp(model, "i6300esb") ? "i6300esb" : "diag288";

	if (!node_is_null(wd) &&
	    (node_is_null(node_get(wd, model)) || !node_is_null(node_get(wd, other))))
		admit_err(a, wd, admit_path(a, "domain.devices.watchdog"), "%s", msg);
}

static void arm64_bus(const struct admit *a, const struct node *d, unsigned int i)
{
	static const char *const ok[] = {"", "virtio", "scsi", NULL};
	static const char *const targets[] = {"disk", "cdrom", "lun"};
	const struct node *t;
	unsigned int k;

	for (k = 0; k < 3; k++) {
		t = node_get(d, targets[k]);
		if (!node_is_null(t) && !in(resolve_str(node_get(t, "bus")), ok))
			admit_err(
			    a, node_get(t, "bus"),
			    admit_path(a, "domain.devices.disks[%u].%s.bus", i, targets[k]),
			    "Arm64 not support this disk bus type, please use virtio or scsi");
	}
}

static void arm64(const struct admit *a)
{
	static const char *const video[] = {"virtio", "ramfb", NULL};
	const struct node *disks = node_path(a->dom, "devices.disks");
	const char *model = resolve_str(node_path(a->dom, "cpu.model"));
	unsigned int i;

	if (!node_is_null(node_path(a->dom, "firmware.bootloader.bios")))
		admit_err(a, node_path(a->dom, "firmware.bootloader.bios"),
			  admit_path(a, "domain.firmware.bootloader.bios"),
			  "Arm64 does not support bios boot, please change to uefi boot");
	if (*model && strcmp(model, "host-passthrough"))
		admit_err(a, node_path(a->dom, "cpu.model"), admit_path(a, "domain.cpu.model"),
			  "currently, host-passthrough is the only model supported on Arm64");
	for (i = 0; node_is_seq(disks) && i < disks->n; i++)
		arm64_bus(a, disks->items[i], i);
	if (!node_is_null(node_path(a->dom, "devices.watchdog")))
		admit_err(a, node_path(a->dom, "devices.watchdog"),
			  admit_path(a, "domain.devices.watchdog"),
			  "Arm64 not support Watchdog device");
	if (!node_is_null(node_path(a->dom, "devices.sound")))
		admit_err(a, node_path(a->dom, "devices.sound"),
			  admit_path(a, "domain.devices.sound"), "Arm64 not support sound device");
	video_type(a, "arm64", video);
}

void admit_arch(const struct admit *a)
{
	static const char *const amd64_video[] = {"vga",   "cirrus", "virtio",
						  "ramfb", "bochs",  NULL};
	static const char *const s390x_video[] = {"virtio", NULL};
	const struct node *archn = node_get(a->spec, "architecture");
	const char *arch = *resolve_str(archn) ? resolve_str(archn) : "amd64";

	if (strcmp(arch, "amd64") == 0) {
		watchdog_only(a, "i6300esb", "amd64 only supports I6300ESB watchdog device");
		video_type(a, "amd64", amd64_video);
	} else if (strcmp(arch, "s390x") == 0) {
		watchdog_only(a, "diag288", "s390x only supports Diag288 watchdog device");
		video_type(a, "s390x", s390x_video);
	} else if (strcmp(arch, "arm64") == 0) {
		arm64(a);
	} else {
		admit_err(a, archn, admit_path(a, "architecture"), "unsupported architecture: %s",
			  arch);
	}
}
