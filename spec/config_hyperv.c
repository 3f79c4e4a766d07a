/* SPDX-License-Identifier: MIT */
/*
 * config_hyperv.c - features.hyperv, clock.timer.hyperv and
 * features.kvm.hidden -> cfg->hyperv, cfg->kvm_hidden.
 *
 * KubeVirt's path to QEMU: its API defaults turn a present feature on
 * unless "enabled: false" (SetDefaults_FeatureState; spinlocks get 4096
 * retries when none are given, SetDefaults_FeatureSpinlocks); its
 * mutating webhook (SetHypervFeatureDependencies) turns on a requirement
 * left unset (evmcs -> vapic, ipi -> vpindex, tlbflush -> vpindex,
 * synictimer -> synic -> vpindex), and admission refuses one set to false
 * (spec/admit_devices.c); the converter gives libvirt each feature as on
 * or off, and libvirt gives QEMU hv-NAME for each one on, the direct and
 * extended sub-features only inside their parent. What libvirt or QEMU
 * then refuse stops the VM there, so vmlet refuses it here, with what
 * they say: hv-stimer without hv-time, hv-tlbflush-direct without
 * hv-vapic, spinlocks below 4095 retries, a vendor_id that is not 1..12
 * characters. hypervPassthrough (enabled: true) is libvirt's passthrough
 * mode, QEMU's hv-passthrough: whatever the host's KVM offers (vmm/).
 */
#include <string.h>

#include "spec/config.h"
#include "spec/diag.h"

/* A FeatureState-like node present and not "enabled: false" (key: the
 * flag's name, "enabled", or "present" for a timer). */
static bool on(const struct node *n, const char *key)
{
	return !node_is_null(n) && node_bval(node_get(n, key), true);
}

static const char *path(const struct resolver *r, const char *rest)
{
	return arena_printf(r->a, "%sdomain.%s", r->vmi_only ? "spec." : "spec.template.spec.",
			    rest);
}

static void vendor_id(const struct resolver *r, const struct node *v, struct vm_hyperv *h)
{
	const struct node *id = node_get(v, "vendorid");
	const char *s = node_sval(id);
	size_t i, n = s ? strlen(s) : 0;

	if (n == 0 || n > 12) {
		diag_err(r->d, id ? id : v, path(r, "features.hyperv.vendorid.vendorid"),
			 "libvirt wants a HyperV vendor_id of 1 to 12 characters, got %zu", n);
		return;
	}
	for (i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e) {
			diag_err(r->d, id, path(r, "features.hyperv.vendorid.vendorid"),
				 "a HyperV vendor_id of printable characters (no space)");
			return;
		}
	memcpy(h->vendor_id, s, n + 1);
}

static void spinlocks(const struct resolver *r, const struct node *sl, struct vm_hyperv *h)
{
	const struct node *n = node_get(sl, "spinlocks");
	long long v = 4096;

	h->spinlocks = true;
	if (n && node_ival(n, 0, UINT32_MAX, &v)) {
		diag_err(r->d, n, path(r, "features.hyperv.spinlocks.spinlocks"),
			 "a retry count of 4095 to 4294967295");
		return;
	}
	if (v < 4095)
		diag_err(r->d, n, path(r, "features.hyperv.spinlocks.spinlocks"),
			 "HyperV spinlock retry count must be at least 4095 (libvirt), not %lld",
			 v);
	h->spinlock_retries = (uint32_t)v;
}

/* QEMU's dependencies the webhook does not fill in. */
static void qemu_deps(const struct resolver *r, const struct node *hv, struct vm_hyperv *h)
{
	if (h->synictimer && !h->time)
		diag_err(r->d, node_get(hv, "synictimer"), path(r, "features.hyperv.synictimer"),
			 "needs clock.timer.hyperv: QEMU refuses synthetic timers (hv-stimer) "
			 "without the Hyper-V clocksource (hv-time)");
	if (h->tlbflush_direct && !h->vapic)
		diag_err(r->d, node_path(hv, "tlbflush.direct"),
			 path(r, "features.hyperv.tlbflush.direct"),
			 "needs vapic: QEMU refuses direct TLB flush (hv-tlbflush-direct) "
			 "without the virtual APIC (hv-vapic)");
}

void config_hyperv(const struct resolver *r, const struct node *dom, struct vm_config *cfg)
{
	const struct node *hv = node_path(dom, "features.hyperv");
	struct vm_hyperv *h = &cfg->hyperv;

	memset(h, 0, sizeof(*h));
	cfg->kvm_hidden = node_bval(node_path(dom, "features.kvm.hidden"), false);
	h->time = on(node_path(dom, "clock.timer.hyperv"), "present");
	/* the converter's "HypervPassthrough != nil && *Enabled" */
	h->passthrough = node_bval(node_path(dom, "features.hypervPassthrough.enabled"), false);
	if (!node_is_map(hv))
		return;
	h->relaxed = on(node_get(hv, "relaxed"), "enabled");
	h->vapic = on(node_get(hv, "vapic"), "enabled");
	h->vpindex = on(node_get(hv, "vpindex"), "enabled");
	h->runtime = on(node_get(hv, "runtime"), "enabled");
	h->synic = on(node_get(hv, "synic"), "enabled");
	h->synictimer = on(node_get(hv, "synictimer"), "enabled");
	h->reset = on(node_get(hv, "reset"), "enabled");
	h->frequencies = on(node_get(hv, "frequencies"), "enabled");
	h->reenlightenment = on(node_get(hv, "reenlightenment"), "enabled");
	h->tlbflush = on(node_get(hv, "tlbflush"), "enabled");
	h->ipi = on(node_get(hv, "ipi"), "enabled");
	h->evmcs = on(node_get(hv, "evmcs"), "enabled");
	/* the webhook's requirements, leaves first (an explicit false is
	 * admission's error) */
	h->vapic |= h->evmcs;
	h->vpindex |= h->ipi || h->tlbflush;
	h->synic |= h->synictimer;
	h->vpindex |= h->synic;
	h->synictimer_direct = h->synictimer && on(node_path(hv, "synictimer.direct"), "enabled");
	h->tlbflush_direct = h->tlbflush && on(node_path(hv, "tlbflush.direct"), "enabled");
	h->tlbflush_extended = h->tlbflush && on(node_path(hv, "tlbflush.extended"), "enabled");
	if (on(node_get(hv, "spinlocks"), "enabled"))
		spinlocks(r, node_get(hv, "spinlocks"), h);
	if (on(node_get(hv, "vendorid"), "enabled"))
		vendor_id(r, node_get(hv, "vendorid"), h);
	qemu_deps(r, hv, h);
}
