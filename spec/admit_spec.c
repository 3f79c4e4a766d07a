/* SPDX-License-Identifier: MIT */
/*
 * admit_spec.c - the rest of KubeVirt's VMI spec rules (spec/admit.h):
 * validate* functions of ValidateVirtualMachineInstanceSpec in
 * vmi-create-admitter.go for the hostname and subdomain, ACPI tables, CPU
 * feature policies, the start strategy, inputs, the I/O thread policy,
 * probes, access credentials, DNS, the eviction strategy, devices (GPU
 * displays, sound, video, panic devices), launchSecurity on amd64 and the
 * service account; and what the VMI create admitter adds
 * (ValidateVirtualMachineInstancePerArch with webhooks/amd64.go,
 * webhooks/hyperv.go, the utility volumes). Feature gates are assumed
 * enabled (resolution.md §19.2).
 */
#include <arpa/inet.h>
#include <string.h>

#include "spec/admit.h"

static bool one_of(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(*set, s) == 0)
			return true;
	return false;
}

static void dns_names(const struct admit *a)
{
	const struct node *h = node_get(a->spec, "hostname"), *s = node_get(a->spec, "subdomain");
	const char *m[2];
	unsigned int n;

	if (*resolve_str(h) && (n = admit_dns1123_label(resolve_str(h), m)))
		admit_err(a, h, admit_path(a, "hostname"),
			  "%s does not conform to the kubernetes DNS_LABEL rules : %s%s%s",
			  admit_path(a, "hostname"), m[0], n > 1 ? ", " : "", n > 1 ? m[1] : "");
	if (*resolve_str(s) && (n = admit_dns1123_subdomain(resolve_str(s), m)))
		admit_err(a, s, admit_path(a, "subdomain"),
			  "%s does not conform to the kubernetes DNS_SUBDOMAIN rules : %s%s%s",
			  admit_path(a, "subdomain"), m[0], n > 1 ? ", " : "", n > 1 ? m[1] : "");
	s = node_get(a->spec, "serviceAccountName");
	if (*resolve_str(s) && (n = admit_dns1123_subdomain(resolve_str(s), m)))
		admit_err(a, s, admit_path(a, "serviceAccountName"),
			  "%s is not a valid service account name: %s%s%s",
			  admit_path(a, "serviceAccountName"), m[0], n > 1 ? "; " : "",
			  n > 1 ? m[1] : "");
}

/* validateServiceAccountName's second half: the volume names the same one */
static void service_account(const struct admit *a)
{
	const char *sa = resolve_str(node_get(a->spec, "serviceAccountName"));
	const struct node *vols = node_get(a->spec, "volumes"), *v;
	unsigned int i;

	for (i = 0; *sa && node_is_seq(vols) && i < vols->n; i++) {
		v = node_get(vols->items[i], "serviceAccount");
		if (node_is_null(v) ||
		    strcmp(resolve_str(node_get(v, "serviceAccountName")), sa) == 0)
			continue;
		admit_err(a, v, admit_path(a, "serviceAccountName"),
			  "spec.serviceAccountName \"%s\" and serviceAccount volume \"%s\" must "
			  "reference the same service account",
			  sa, resolve_str(node_get(v, "serviceAccountName")));
		break;
	}
}

static void acpi_ref(const struct admit *a, const struct node *acpi, const char *key)
{
	const struct node *ref = node_get(acpi, key), *v;
	const char *fp = admit_path(a, "acpi");

	if (!*resolve_str(ref))
		return;
	v = admit_lookup_seq(a, node_get(a->spec, "volumes"), resolve_str(ref));
	if (!v)
		admit_err(a, ref, arena_printf(a->r->a, "%s.%s", fp, key),
			  "%s does not have a matching Volume.", fp);
	else if (node_is_null(node_get(v, "secret")))
		admit_err(a, ref, arena_printf(a->r->a, "%s.%s", fp, key),
			  "%s refers to Volume of unsupported type.", fp);
}

/* validateFirmwareACPI: KubeVirt's path is "spec.template.spec.acpi" */
static void acpi(const struct admit *a)
{
	const struct node *acpi = node_path(a->dom, "firmware.acpi");

	if (node_is_null(acpi))
		return;
	if (!*resolve_str(node_get(acpi, "slicNameRef")) &&
	    !*resolve_str(node_get(acpi, "msdmNameRef"))) {
		admit_err(a, acpi, admit_path(a, "acpi"),
			  "ACPI was set but no SLIC nor MSDM volume reference was set");
		return;
	}
	acpi_ref(a, acpi, "slicNameRef");
	acpi_ref(a, acpi, "msdmNameRef");
}

static void cpu_features(const struct admit *a)
{
	static const char *const ok[] = {"",	    "force",  "require", "optional",
					 "disable", "forbid", NULL};
	const struct node *fs = node_path(a->dom, "cpu.features"), *f;
	unsigned int i;

	for (i = 0; node_is_seq(fs) && i < fs->n; i++) {
		f = fs->items[i];
		if (!one_of(resolve_str(node_get(f, "policy")), ok))
			admit_err(a, node_get(f, "policy"),
				  admit_path(a, "domain.cpu.features[%u].policy", i),
				  "CPU feature %s uses policy %s that is not supported.",
				  resolve_str(node_get(f, "name")),
				  resolve_str(node_get(f, "policy")));
	}
}

static void start_strategy(const struct admit *a)
{
	const struct node *s = node_get(a->spec, "startStrategy");
	const char *p = admit_path(a, "startStrategy");

	if (node_is_null(s))
		return;
	if (strcmp(resolve_str(s), "Paused"))
		admit_err(a, s, p, "%s is set with an unrecognized option: %s", p, resolve_str(s));
	else if (!node_is_null(node_get(a->spec, "livenessProbe")))
		admit_err(
		    a, s, p,
		    "either %s or %s should be provided.Pausing VMI with LivenessProbe is not "
		    "supported",
		    p, admit_path(a, "livenessProbe"));
}

static void inputs(const struct admit *a)
{
	static const char *const buses[] = {"", "virtio", "usb", NULL};
	const struct node *in = node_path(a->dom, "devices.inputs"), *d;
	unsigned int i;

	for (i = 0; node_is_seq(in) && i < in->n; i++) {
		d = in->items[i];
		if (!one_of(resolve_str(node_get(d, "bus")), buses))
			admit_err(a, node_get(d, "bus"),
				  admit_path(a, "domain.devices.inputs[%u].bus", i),
				  "Input device can have only virtio or usb bus.");
		/* an unset type is KubeVirt's default, tablet */
		if (*resolve_str(node_get(d, "type")) &&
		    strcmp(resolve_str(node_get(d, "type")), "tablet"))
			admit_err(a, node_get(d, "type") ? node_get(d, "type") : d,
				  admit_path(a, "domain.devices.inputs[%u].type", i),
				  "Input device can have only tablet type.");
	}
}

static void io_threads(const struct admit *a)
{
	static const char *const ok[] = {"shared", "auto", "supplementalPool", NULL};
	const struct node *p = node_get(a->dom, "ioThreadsPolicy");
	long long n = 0;

	if (node_is_null(p))
		return;
	if (!one_of(resolve_str(p), ok))
		admit_err(a, p, admit_path(a, "domain.ioThreadsPolicy"),
			  "Invalid IOThreadsPolicy (%s)", resolve_str(p));
	if (strcmp(resolve_str(p), "supplementalPool") == 0 &&
	    (node_ival(node_path(a->dom, "ioThreads.supplementalPoolThreadCount"), -2147483648LL,
		       2147483647LL, &n) ||
	     n < 1))
		admit_err(a, p, admit_path(a, "domain.ioThreads.count"),
			  "the number of iothreads needs to be set and positive for the dedicated "
			  "policy");
}

static void probe(const struct admit *a, const char *which, bool pod)
{
	static const char *const handlers[] = {"httpGet", "tcpSocket", "exec", "guestAgentPing"};
	const struct node *p = node_get(a->spec, which);
	const char *fp = admit_path(a, "%s", which);
	unsigned int i, n = 0;

	if (node_is_null(p))
		return;
	for (i = 0; i < 4; i++)
		n += !node_is_null(node_get(p, handlers[i]));
	if (n > 1)
		admit_err(a, p, fp, "%s must have exactly one probe type set", fp);
	if (n < 1)
		admit_err(a, p, fp,
			  "either %s.tcpSocket, %s.exec or %s.httpGet must be set if a %s is "
			  "specified",
			  fp, fp, fp, fp);
	for (i = 0; !pod && i < 2; i++)
		if (!node_is_null(node_get(p, handlers[i])))
			admit_err(a, node_get(p, handlers[i]),
				  arena_printf(a->r->a, "%s.%s", fp, handlers[i]),
				  "%s.%s is only allowed if the Pod Network is attached", fp,
				  handlers[i]);
}

static void probes(const struct admit *a)
{
	const struct node *nets = node_get(a->spec, "networks");
	unsigned int i;
	bool pod = false;

	for (i = 0; node_is_seq(nets) && i < nets->n; i++)
		pod |= !node_is_null(node_get(nets->items[i], "pod"));
	probe(a, "readinessProbe", pod);
	probe(a, "livenessProbe", pod);
}

/* validateAccessCredentials: one credential type, one source, one method */
static void ssh_key(const struct admit *a, const struct node *k, const char *ip, bool nocloud,
		    bool cdrive)
{
	const struct node *pm = node_get(k, "propagationMethod"), *q;
	const char *pp = arena_printf(a->r->a, "%s.sshPublicKey.propagationMethod", ip);
	unsigned int methods = 0;

	if (!node_is_null(node_get(pm, "noCloud"))) {
		methods++;
		if (!nocloud)
			admit_err(a, pm, pp,
				  "%s requires a noCloud volume to exist when the noCloud "
				  "propagationMethod is in use.",
				  ip);
	}
	if (!node_is_null(node_get(pm, "configDrive"))) {
		methods++;
		if (!cdrive)
			admit_err(a, pm, pp,
				  "%s requires a configDrive volume to exist when the configDrive "
				  "propagationMethod is in use.",
				  ip);
	}
	q = node_get(pm, "qemuGuestAgent");
	if (!node_is_null(q)) {
		methods++;
		if (node_empty(node_get(q, "users")))
			admit_err(a, q, arena_printf(a->r->a, "%s.qemuGuestAgent.users", pp),
				  "%s requires at least one user to be present in the users list",
				  ip);
	}
	if (node_is_null(node_path(k, "source.secret")))
		admit_err(a, k, arena_printf(a->r->a, "%s.sshPublicKey.source", ip),
			  "%s must have exactly one source set", ip);
	if (methods != 1)
		admit_err(a, k, pp, "%s must have exactly one propagationMethod set", ip);
}

static void access_credentials(const struct admit *a)
{
	const struct node *acs = node_get(a->spec, "accessCredentials"), *ac, *k, *u;
	const struct node *vols = node_get(a->spec, "volumes");
	bool nocloud = false, cdrive = false;
	unsigned int i, n;
	const char *ip;

	for (i = 0; node_is_seq(vols) && i < vols->n; i++) {
		nocloud |= !node_is_null(node_get(vols->items[i], "cloudInitNoCloud"));
		cdrive |= !node_is_null(node_get(vols->items[i], "cloudInitConfigDrive"));
	}
	for (i = 0; node_is_seq(acs) && i < acs->n; i++) {
		ac = acs->items[i];
		ip = admit_path(a, "accessCredentials[%u]", i);
		k = node_get(ac, "sshPublicKey");
		u = node_get(ac, "userPassword");
		n = !node_is_null(k) + !node_is_null(u);
		if (!node_is_null(k))
			ssh_key(a, k, ip, nocloud, cdrive);
		if (!node_is_null(u)) {
			if (node_is_null(node_path(u, "source.secret")))
				admit_err(a, u, arena_printf(a->r->a, "%s.userPassword.source", ip),
					  "%s must have exactly one source set", ip);
			if (node_is_null(node_path(u, "propagationMethod.qemuGuestAgent")))
				admit_err(
				    a, u,
				    arena_printf(a->r->a, "%s.userPassword.propagationMethod", ip),
				    "%s must have exactly one propagationMethod set", ip);
		}
		if (n != 1)
			admit_err(a, ac, ip, "%s must have exactly one access credential type set",
				  ip);
	}
}

static bool ip_ok(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* validatePodDNSConfig (Kubernetes' rules, copied by KubeVirt; its field
 * paths are bare: "nameservers", "searchDomains", "options") */
static void dns(const struct admit *a)
{
	const struct node *pol = node_get(a->spec, "dnsPolicy"),
			  *c = node_get(a->spec, "dnsConfig");
	const struct node *ns = node_get(c, "nameservers"), *se = node_get(c, "searches");
	const struct node *op = node_get(c, "options");
	const char *cp = admit_path(a, "dnsConfig"), *m[2];
	unsigned int i, j, n;
	size_t chars = 0;

	if (strcmp(resolve_str(pol), "None") == 0) {
		if (node_is_null(c)) {
			admit_err(a, pol, cp, "must provide `dnsConfig` when `dnsPolicy` is None");
			return;
		}
		if (node_empty(ns)) {
			admit_err(
			    a, c, "nameservers",
			    "must provide at least one DNS nameserver when `dnsPolicy` is None");
			return;
		}
	}
	if (node_is_null(c))
		return;
	if (node_is_seq(ns) && ns->n > 3)
		admit_err(a, ns, "nameservers", "must not have more than 3 nameservers");
	for (i = 0; node_is_seq(ns) && i < ns->n; i++)
		if (!ip_ok(resolve_str(ns->items[i])))
			admit_err(a, ns->items[i], "nameservers", "must be valid IP address: %s",
				  resolve_str(ns->items[i]));
	if (node_is_seq(se) && se->n > 6)
		admit_err(a, se, "searchDomains", "must not have more than 6 search paths");
	for (i = 0; node_is_seq(se) && i < se->n; i++)
		chars += strlen(resolve_str(se->items[i])) + (i > 0);
	if (chars > 256)
		admit_err(a, se, "searchDomains",
			  "must not have more than 256 characters (including spaces) in the search "
			  "list");
	for (i = 0; node_is_seq(se) && i < se->n; i++)
		for (n = admit_dns1123_subdomain(resolve_str(se->items[i]), m), j = 0; j < n; j++)
			admit_err(a, se->items[i], "searchDomains", "%s", m[j]);
	for (i = 0; node_is_seq(op) && i < op->n; i++)
		if (!*resolve_str(node_get(op->items[i], "name")))
			admit_err(a, op->items[i], "options", "Option.Name must not be empty");
}

static void eviction(const struct admit *a)
{
	static const char *const ok[] = {"LiveMigrate", "LiveMigrateIfPossible", "None", "External",
					 NULL};
	const struct node *e = node_get(a->spec, "evictionStrategy");

	if (!node_is_null(e) && !one_of(resolve_str(e), ok))
		admit_err(a, e, admit_path(a, "evictionStrategy"),
			  "%s is set with an unrecognized option: %s",
			  admit_path(a, "evictionStrategy"), resolve_str(e));
}

/* ValidateVirtualMachineInstanceMetadata: labels only KubeVirt's own service
 * accounts may set (the VM's author is not one of them) */
static void restricted_labels(const struct admit *a)
{
	static const char *const restricted[] = {"kubevirt.io/created-by",
						 "kubevirt.io/migrationJobUID",
						 "kubevirt.io/nodeName",
						 "kubevirt.io/migrationTargetNodeName",
						 "kubevirt.io/schedulable",
						 "kubevirt.io/install-strategy",
						 NULL};
	const struct node *l = node_path(a->r->vmi, "metadata.labels");
	unsigned int i;

	for (i = 0; node_is_map(l) && i < l->n; i++)
		if (one_of(l->kv[i].key, restricted)) {
			admit_err(a, l->kv[i].val,
				  a->vm ? "spec.template.metadata.labels" : "metadata.labels",
				  "creation of the following reserved kubevirt.io/ labels on a VMI "
				  "object is prohibited");
			return;
		}
}

void admit_spec(const struct admit *a)
{
	restricted_labels(a);
	dns_names(a);
	service_account(a);
	acpi(a);
	cpu_features(a);
	start_strategy(a);
	inputs(a);
	io_threads(a);
	probes(a);
	access_credentials(a);
	dns(a);
	eviction(a);
	if (!node_is_null(node_get(a->spec, "utilityVolumes")))
		admit_err(
		    a, node_get(a->spec, "utilityVolumes"), admit_path(a, "utilityVolumes"),
		    "cannot create VMI with utility volumes in spec, utility volumes can only be "
		    "added via hotplug");
}
