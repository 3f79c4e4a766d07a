/* SPDX-License-Identifier: MIT */
/*
 * admit_devices.c - KubeVirt's device rules (spec/admit.h):
 * validateMDEVRamFB, validateSoundDevices, validateVideoConfig,
 * validatePanicDevices and validateLaunchSecurity of vmi-create-admitter.go
 * (launchSecurity through webhooks/amd64.go ValidateLaunchSecurityAmd64,
 * its feature gates assumed enabled), and what the VMI create admitter adds:
 * webhooks/hyperv.go (feature dependencies, hypervPassthrough) and
 * validateVirtualMachineInstanceSpecVolumeDisks (containerPath volumes).
 * Those VMI rules name KubeVirt's VMI paths ("spec.domain...") in their
 * messages, as KubeVirt prints them when it creates the VMI.
 */
#include <string.h>

#include "spec/admit.h"

static bool on(const struct node *n, const char *key, bool def)
{
	return node_bval(node_get(n, key), def);
}

static void gpus(const struct admit *a)
{
	const struct node *g = node_path(a->dom, "devices.gpus"), *d;
	unsigned int i, n = 0;

	for (i = 0; node_is_seq(g) && i < g->n; i++) {
		d = node_path(g->items[i], "virtualGPUOptions.display");
		n += !node_is_null(d) && on(d, "enabled", true) &&
		     on(node_get(d, "ramFB"), "enabled", true);
	}
	if (n > 1)
		admit_err(a, g, admit_path(a, "GPUs"),
			  "configuring multiple displays with ramfb is not valid ");
}

static void sound(const struct admit *a)
{
	const struct node *s = node_path(a->dom, "devices.sound");
	const char *m = resolve_str(node_get(s, "model"));

	if (node_is_null(s))
		return;
	if (*m && strcmp(m, "ich9") && strcmp(m, "ac97"))
		admit_err(a, node_get(s, "model"), admit_path(a, "Sound"),
			  "Sound device type is not supported. Options: 'ich9' or 'ac97'");
	if (!*resolve_str(node_get(s, "name")))
		admit_err(a, s, admit_path(a, "Sound"), "Sound device requires a name field.");
}

static void video(const struct admit *a)
{
	const struct node *v = node_path(a->dom, "devices.video");

	if (!node_is_null(v) &&
	    !node_is_null(node_path(a->dom, "devices.autoattachGraphicsDevice")) &&
	    !on(node_get(a->dom, "devices"), "autoattachGraphicsDevice", true))
		admit_err(a, v, admit_path(a, "video"),
			  "Video configuration is not allowed when autoattachGraphicsDevice is set "
			  "to false");
}

static void panic_devices(const struct admit *a, const char *arch)
{
	const struct node *p = node_path(a->dom, "devices.panicDevices"), *m;
	unsigned int i;

	if (node_empty(p))
		return;
	if (strcmp(arch, "s390x") == 0)
		admit_err(a, p, admit_path(a, "domain.devices.panicDevices"),
			  "custom panic devices are not supported on s390x architecture");
	for (i = 0; node_is_seq(p) && i < p->n; i++) {
		m = node_get(p->items[i], "model");
		if (!node_is_null(m) && strcmp(resolve_str(m), "hyperv") &&
		    strcmp(resolve_str(m), "isa") && strcmp(resolve_str(m), "pvpanic"))
			admit_err(a, m, admit_path(a, "domain.devices.panicDevices[%u].model", i),
				  "invalid PanicDeviceModel(%s)", resolve_str(m));
	}
}

/* ValidateLaunchSecurityAmd64 after its feature-gate check */
static void launch_security(const struct admit *a, const struct node *ls)
{
	static const char *const kinds[][2] = {{"sev", "SEV"}, {"snp", "SNP"}, {"tdx", "TDX"}};
	const char *lp = admit_path(a, "launchSecurity"), *type = NULL;
	const struct node *efi = node_path(a->dom, "firmware.bootloader.efi");
	const struct node *ifs = node_path(a->dom, "devices.interfaces");
	unsigned int i, n = 0;
	bool sev = !node_is_null(node_get(ls, "sev")), snp = !node_is_null(node_get(ls, "snp"));
	bool tdx = !node_is_null(node_get(ls, "tdx"));

	for (i = 0; i < 3; i++)
		if (!node_is_null(node_get(ls, kinds[i][0])) && ++n)
			type = kinds[i][1];
	if (n != 1) {
		admit_err(a, ls, lp, "One and only one launchSecurity type can be set");
		return;
	}
	if (tdx && !node_is_null(node_path(a->dom, "features.smm")) &&
	    on(node_path(a->dom, "features.smm"), "enabled", true))
		admit_err(a, ls, lp, "TDX does not work along with SMM");
	if (node_is_null(efi))
		admit_err(a, ls, lp, "%s requires OVMF (UEFI)", type);
	if (!node_is_null(efi) && (sev || snp) && on(efi, "secureBoot", true))
		admit_err(a, ls, lp, "%s does not work along with SecureBoot", type);
	if (!node_is_null(efi) && (snp || tdx) && on(efi, "persistent", false))
		admit_err(a, ls, lp, "%s does not work along with Persistent EFI variables", type);
	if (sev && strcmp(resolve_str(node_get(a->spec, "startStrategy")), "Paused") &&
	    !node_is_null(node_path(ls, "sev.attestation")))
		admit_err(a, ls, lp, "SEV attestation requires VMI StartStrategy 'Paused'");
	for (i = 0; node_is_seq(ifs) && i < ifs->n; i++)
		if (!node_is_null(node_get(ifs->items[i], "bootOrder")))
			admit_err(a, ls, lp, "%s does not work with bootable NICs: %s", type,
				  resolve_str(node_get(ifs->items[i], "name")));
}

/* webhooks/hyperv.go: an enabled feature whose requirement is disabled.
 * KubeVirt's defaults enable a requirement left unset (and vmx for evmcs,
 * SetHypervFeatureDependencies), so only an explicit "enabled: false"
 * fails. KubeVirt builds the field twice ("spec.domain.features.hyperv" +
 * ".domain.features.hyperv"): its messages are kept. */
static void hyperv(const struct admit *a)
{
	static const char *const deps[][2] = {{"evmcs", "vapic"},
					      {"ipi", "vpindex"},
					      {"tlbflush", "vpindex"},
					      {"synictimer", "synic"},
					      {"synic", "vpindex"}};
	static const char kf[] = "spec.domain.features.hyperv.domain.features.hyperv";
	const struct node *h = node_path(a->dom, "features.hyperv"), *f, *req;
	unsigned int i;

	if (node_is_null(h))
		return;
	if (!node_is_null(node_path(a->dom, "features.hypervPassthrough")))
		admit_err(
		    a, h, admit_path(a, "domain.features.hyperv"),
		    "Cannot explicitly set hyperV features if HypervPassthrough is being used. "
		    "Please use either HyperV or HypervPassthrough.");
	for (i = 0; i < sizeof(deps) / sizeof(deps[0]); i++) {
		f = node_get(h, deps[i][0]);
		req = node_get(h, deps[i][1]);
		if (!on(f, "enabled", false) || node_is_null(node_get(req, "enabled")) ||
		    on(req, "enabled", true))
			continue;
		admit_err(a, f, admit_path(a, "domain.features.hyperv.%s", deps[i][0]),
			  "'%s.%s' requires '%s.%s', which was disabled.", kf, deps[i][0], kf,
			  deps[i][1]);
	}
}

/* validateVirtualMachineInstanceSpecVolumeDisks: after the default disks
 * (§9) only a containerPath volume can be unmapped or mismapped */
static void container_paths(const struct admit *a)
{
	const struct node *vols = node_get(a->spec, "volumes"), *v, *cp;
	const struct node *fs = node_path(a->dom, "devices.filesystems");
	const struct node *disks = node_path(a->dom, "devices.disks");
	static const char *const reserved[] = {"/var/run/kubevirt", "/var/run/libvirt"};
	struct admit_ix fsix, dix;
	const char *name;
	unsigned int i, k;

	admit_index(a, fs, "name", &fsix);
	admit_index(a, disks, "name", &dix);
	for (i = 0; node_is_seq(vols) && i < vols->n; i++) {
		v = vols->items[i];
		cp = node_get(v, "containerPath");
		if (node_is_null(cp))
			continue;
		name = resolve_str(node_get(v, "name"));
		if (admit_lookup(&dix, name))
			admit_err(
			    a, v, admit_path(a, "domain.volumes[%u]", i),
			    "ContainerPath volume '%s' must be mapped to a filesystem, not a disk",
			    name);
		if (!admit_lookup(&fsix, name))
			admit_err(
			    a, v, admit_path(a, "domain.volumes[%u]", i),
			    "ContainerPath volume '%s' must have a matching filesystem defined in "
			    "spec.domain.devices.filesystems",
			    name);
		for (k = 0; k < 2; k++)
			if (strncmp(resolve_str(node_get(cp, "path")), reserved[k],
				    strlen(reserved[k])) == 0) {
				admit_err(
				    a, node_get(cp, "path"),
				    admit_path(a, "domain.volumes[%u].containerPath.path", i),
				    "ContainerPath volume '%s' uses reserved path prefix '%s'",
				    name, reserved[k]);
				break;
			}
	}
}

void admit_devices(const struct admit *a)
{
	const struct node *archn = node_get(a->spec, "architecture");
	const char *arch = *resolve_str(archn) ? resolve_str(archn) : "amd64";
	const struct node *ls = node_get(a->dom, "launchSecurity");

	gpus(a);
	sound(a);
	video(a);
	panic_devices(a, arch);
	if (!node_is_null(ls) && strcmp(arch, "amd64") == 0)
		launch_security(a, ls);
	else if (!node_is_null(ls) && strcmp(arch, "s390x"))
		admit_err(a, archn, admit_path(a, "architecture"),
			  "No launchSecurity support for architecture: %s", arch);
	hyperv(a);
	container_paths(a);
}
