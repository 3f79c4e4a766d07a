/* SPDX-License-Identifier: MIT */
/* The resolution pipeline (spec/resolve*.c), step by step, on manifests
 * written here: topology, conflicts, preferences, requirements, revisions,
 * inference, presets, validation, error locations. */
#include <stdarg.h>
#include <stdlib.h>

#include "spec/resolve.h"
#include "tests/lib/test.h"

#define VM_HEAD                                                                                    \
	"apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n"                            \
	"  name: vm\n  namespace: default\n  uid: vm-uid\n"

#define IT(name, guest, mem, extra)                                                                \
	"---\napiVersion: instancetype.kubevirt.io/v1beta1\n"                                      \
	"kind: VirtualMachineClusterInstancetype\nmetadata:\n  name: " name                        \
	"\n  uid: it-uid\n  generation: 3\nspec:\n  cpu:\n    guest: " guest                       \
	"\n  memory:\n    guest: " mem "\n" extra

#define PREF(name, body)                                                                           \
	"---\napiVersion: instancetype.kubevirt.io/v1beta1\n"                                      \
	"kind: VirtualMachineClusterPreference\nmetadata:\n  name: " name                          \
	"\n  uid: p-uid\n  generation: 1\nspec:\n" body

static struct session S;

static int resolve(const char *text)
{
	int ret;

	session_free(&S);
	session_init(&S);
	ret = session_load(&S, NULL, 0, text);
	if (!ret)
		ret = session_resolve(&S, NULL);
	session_report(&S, stdout); /* in the test log, for whoever reads it */
	return ret;
}

static const struct node *vmi(const char *path)
{
	return node_path(S.r.vmi, path);
}

static const char *vmi_text(const char *path)
{
	return node_text(vmi(path));
}

/* a VMI annotation (keys contain dots) */
static const char *ann(const char *key)
{
	return node_text(node_get(node_path(S.r.vmi, "metadata.annotations"), key));
}

/* some error (or warning) mentions both strings */
static bool said(const char *path, const char *msg)
{
	const struct diag_msg *m;

	for (m = S.d.head; m; m = m->next)
		if ((!path || (m->path && strstr(m->path, path))) && (!msg || strstr(m->msg, msg)))
			return true;
	for (m = S.cl.d.head; m; m = m->next)
		if ((!path || (m->path && strstr(m->path, path))) && (!msg || strstr(m->msg, msg)))
			return true;
	return false;
}

/* the first error of loading (decoding) or else of resolution */
static const struct diag_msg *first_error(void)
{
	const struct diag_msg *m;

	for (m = S.cl.d.head; m; m = m->next)
		if (!m->warning)
			return m;
	for (m = S.d.head; m; m = m->next)
		if (!m->warning)
			return m;
	return NULL;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	static char bufs[4][4096];
	static unsigned int next;
	char *buf = bufs[next++ % 4];
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, sizeof(bufs[0]), f, ap);
	va_end(ap);
	return buf;
}

static int num(const char *path)
{
	const char *t = vmi_text(path);

	return t ? atoi(t) : -1;
}

/* replace the first old by new in text (large enough) */
static void replace(char *text, const char *old, const char *new)
{
	char *p = strstr(text, old);
	char tail[8192];

	if (!p)
		return;
	snprintf(tail, sizeof(tail), "%s", p + strlen(old));
	sprintf(p, "%s%s", new, tail);
}

static const char *vm_with(const char *matchers, const char *domain)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf),
		 VM_HEAD "spec:\n%s  template:\n    metadata:\n      labels:\n        app: x\n"
			 "    spec:\n      domain:\n        devices: {}\n%s"
			 "      volumes:\n      - name: root\n        containerDisk:\n"
			 "          image: img\n  runStrategy: Always\n",
		 matchers, domain);
	return buf;
}

static void test_topology_table(void)
{
	static const struct {
		const char *pref;
		unsigned int guest, s, c, t;
	} cases[] = {
	    {"", 4, 4, 1, 1},
	    {"    preferredCPUTopology: cores\n", 4, 1, 4, 1},
	    {"    preferredCPUTopology: threads\n", 2, 1, 1, 2},
	    {"    preferredCPUTopology: any\n", 6, 6, 1, 1},
	    {"    preferredCPUTopology: preferCores\n", 3, 1, 3, 1},
	    {"    preferredCPUTopology: spread\n", 6, 3, 2, 1},
	    {"    preferredCPUTopology: spread\n    spreadOptions:\n      ratio: 3\n", 12, 4, 3, 1},
	    {"    preferredCPUTopology: spread\n    spreadOptions:\n      across: "
	     "SocketsCoresThreads\n",
	     8, 2, 2, 2},
	    {"    preferredCPUTopology: spread\n    spreadOptions:\n      across: CoresThreads\n",
	     6, 1, 3, 2},
	    {"    preferredCPUTopology: cores\n", 1, 1, 1, 1},
	};
	char text[16384];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%s%s%s",
			 vm_with("  instancetype:\n    name: it\n  preference:\n    name: p\n", ""),
			 fmt(IT("it", "%u", "1Gi", ""), cases[i].guest),
			 fmt(PREF("p", "  cpu:\n%s"), cases[i].pref));
		CHECK(resolve(text) == 0);
		CHECK_EQ_U64(num("spec.domain.cpu.sockets"), cases[i].s);
		CHECK_EQ_U64(num("spec.domain.cpu.cores"), cases[i].c);
		CHECK_EQ_U64(num("spec.domain.cpu.threads"), cases[i].t);
	}
}

static void test_spread_divisibility(void)
{
	char text[16384];

	snprintf(text, sizeof(text), "%s%s%s",
		 vm_with("  instancetype:\n    name: it\n  preference:\n    name: p\n", ""),
		 IT("it", "5", "1Gi", ""), PREF("p", "  cpu:\n    preferredCPUTopology: spread\n"));
	CHECK(resolve(text) != 0);
	CHECK(said("instancetype.spec.cpu.guest", "5 vCPUs provided by the instance type"));
	CHECK(S.d.head && S.d.head->line == 33); /* the instancetype's guest: line */
}

static void test_conflicts_collected(void)
{
	char text[16384];
	const struct diag_msg *m;
	static const char *const order[] = {
	    "spec.template.spec.nodeSelector",
	    "spec.template.spec.domain.resources.requests.cpu",
	    "spec.template.spec.domain.cpu.sockets",
	    "spec.template.spec.domain.memory.guest",
	    "annotations.team",
	};
	unsigned int i = 0;

	snprintf(
	    text, sizeof(text), "%s%s",
	    vm_with("  instancetype:\n    name: it\n",
		    "        cpu:\n          sockets: 2\n          model: Haswell\n"
		    "        memory:\n          guest: 1Gi\n          maxGuest: 2Gi\n"
		    "        resources:\n          requests:\n            cpu: 1\n"),
	    IT("it", "2", "1Gi", "  nodeSelector:\n    zone: a\n  annotations:\n    team: x\n"));
	/* template nodeSelector and an annotation that differs */
	strcat(text, "");
	{
		char *p = strstr(text, "      volumes:");
		char tail[2048];

		snprintf(tail, sizeof(tail), "%s", p);
		sprintf(p, "      nodeSelector:\n        zone: b\n%s", tail);
		p = strstr(text, "        app: x\n");
		snprintf(tail, sizeof(tail), "%s", p + strlen("        app: x\n"));
		sprintf(p, "        app: x\n      annotations:\n        team: y\n%s", tail);
	}
	CHECK(resolve(text) != 0);
	for (m = S.d.head; m; m = m->next) {
		if (m->warning)
			continue;
		CHECK(strstr(m->msg, "conflicts with selected instance type it") != NULL);
		CHECK(i < 5 && strcmp(m->path, order[i]) == 0);
		CHECK(m->line > 0 && m->file && strcmp(m->file, "<manifest>") == 0);
		i++;
	}
	CHECK_EQ_U64(i, 5); /* memory: only the first conflict (guest, not maxGuest) */
}

static void test_instancetype_fields(void)
{
	char text[16384];

	snprintf(
	    text, sizeof(text), "%s%s",
	    vm_with("  instancetype:\n    name: it\n", "        cpu:\n          maxSockets: 2\n"),
	    IT("it", "2", "1Gi",
	       "    overcommitPercent: 15\n    maxGuest: 4Gi\n  schedulerName: s\n"
	       "  gpus:\n  - name: g\n    deviceName: d\n  ioThreads:\n"
	       "    supplementalPoolThreadCount: 4\n"));
	/* the IT memory block: move overcommit/maxGuest under memory (IT macro ends there) */
	CHECK(resolve(text) == 0);
	CHECK_STR(vmi_text("spec.domain.memory.guest"), "1Gi");
	CHECK_STR(vmi_text("spec.domain.resources.requests.memory"), "912680576");
	CHECK_STR(vmi_text("spec.domain.memory.maxGuest"), "4Gi");
	CHECK_STR(vmi_text("spec.schedulerName"), "s");
	CHECK_STR(vmi_text("spec.domain.ioThreads.supplementalPoolThreadCount"), "4");
	CHECK(node_is_seq(vmi("spec.domain.devices.gpus")));
	CHECK_STR(vmi("spec.domain.memory.guest")->origin, "instancetype it");
	CHECK_STR(ann("kubevirt.io/cluster-instancetype-name"), "it");
}

static void test_preference_fill_only(void)
{
	char text[16384];
	const struct node *disks, *ifs;

	snprintf(
	    text, sizeof(text), "%s%s",
	    vm_with("  preference:\n    name: p\n",
		    "        cpu:\n          cores: 2\n        memory:\n          guest: 2Gi\n"
		    "        features:\n          acpi:\n            enabled: true\n"),
	    PREF("p",
		 "  devices:\n    preferredDiskBus: virtio\n"
		 "    preferredDiskDedicatedIoThread: true\n"
		 "    preferredInterfaceModel: virtio\n    preferredRng: {}\n"
		 "  features:\n    preferredAcpi:\n      enabled: false\n    preferredSmm: {}\n"
		 "  firmware:\n    preferredEfi:\n      secureBoot: true\n"
		 "  preferredTerminationGracePeriodSeconds: 60\n"
		 "  annotations:\n    a: pref\n"));
	CHECK(resolve(text) == 0);
	disks = vmi("spec.domain.devices.disks");
	CHECK(node_is_seq(disks) && disks->n == 1);
	CHECK_STR(node_text(node_path(disks->items[0], "disk.bus")), "virtio");
	CHECK(node_bval(node_get(disks->items[0], "dedicatedIOThread"), false));
	ifs = vmi("spec.domain.devices.interfaces");
	CHECK(node_is_seq(ifs) && ifs->n == 1);
	CHECK_STR(node_text(node_get(ifs->items[0], "model")), "virtio");
	CHECK(node_is_map(node_get(ifs->items[0], "bridge")));
	CHECK(node_is_map(vmi("spec.domain.devices.rng")));
	CHECK_STR(vmi_text("spec.domain.features.acpi.enabled"), "false"); /* overwrites */
	CHECK_STR(vmi_text("spec.domain.cpu.cores"), "2");		   /* VM kept */
	CHECK_STR(vmi_text("spec.terminationGracePeriodSeconds"), "60");
	CHECK_STR(ann("a"), "pref");
	CHECK_STR(ann("kubevirt.io/cluster-preference-name"), "p");
	CHECK(node_is_map(vmi("spec.domain.firmware.bootloader.efi")));
	CHECK(node_is_null(vmi("spec.domain.resources.requests.memory")));
}

static void test_requirements(void)
{
	char text[16384];

	snprintf(text, sizeof(text), "%s%s",
		 vm_with("  preference:\n    name: p\n",
			 "        cpu:\n          sockets: 1\n          cores: 2\n"
			 "        memory:\n          guest: 512Mi\n"),
		 PREF("p", "  requirements:\n    memory:\n      guest: 1Gi\n"));
	CHECK(resolve(text) != 0);
	CHECK(said("spec.template.spec.domain.memory",
		   "insufficient Memory resources of 512Mi provided by VirtualMachine, preference "
		   "requires 1Gi"));

	snprintf(text, sizeof(text), "%s%s",
		 vm_with("  preference:\n    name: p\n", "        cpu:\n          cores: 2\n"),
		 PREF("p", "  cpu:\n    preferredCPUTopology: any\n  requirements:\n    cpu:\n"
			   "      guest: 3\n"));
	CHECK(resolve(text) != 0);
	CHECK(
	    said("spec.template.spec.domain.cpu.threads",
		 /* raw values: sockets and threads unset count 0 */
		 "0 vCPU provided by VirtualMachine, preference requires 3 vCPU provided as cores, "
		 "sockets and threads"));

	snprintf(text, sizeof(text), "%s%s%s",
		 vm_with("  instancetype:\n    name: it\n  preference:\n    name: p\n", ""),
		 IT("it", "2", "1Gi", ""),
		 PREF("p", "  requirements:\n    cpu:\n      guest: 2\n    architecture: amd64\n"));
	CHECK(resolve(text) == 0);
}

static void test_revisions(void)
{
	char text[16384];
	struct node *list;

	snprintf(text, sizeof(text), "%s%s", vm_with("  instancetype:\n    name: it\n", ""),
		 IT("it", "2", "1Gi", ""));
	CHECK(resolve(text) == 0);
	CHECK_STR(node_text(node_path(S.r.vm, "status.instancetypeRef.controllerRevisionRef.name")),
		  "vm-it-v1beta1-it-uid-3");
	list = session_list(&S);
	CHECK(node_is_seq(node_get(list, "items")) && node_get(list, "items")->n == 3);
	CHECK_STR(node_text(node_path(node_get(list, "items")->items[2], "data.spec.cpu.guest")),
		  "2");
	CHECK_STR(node_text(node_path(node_get(list, "items")->items[2], "metadata.ownerReferences")
				->items[0]
				->kv[3]
				.val),
		  "vm-uid");

	/* a pinned revision wins over the live object */
	snprintf(text, sizeof(text), "%s%s%s",
		 vm_with("  instancetype:\n    name: it\n    revisionName: rev1\n", ""),
		 IT("it", "8", "8Gi", ""),
		 "---\napiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: rev1\n"
		 "data:\n  apiVersion: instancetype.kubevirt.io/v1beta1\n"
		 "  kind: VirtualMachineClusterInstancetype\n  metadata:\n    name: it\n"
		 "  spec:\n    cpu:\n      guest: 3\n    memory:\n      guest: 3Gi\n");
	CHECK(resolve(text) == 0);
	CHECK_STR(vmi_text("spec.domain.cpu.sockets"), "3");
	CHECK_STR(vmi_text("spec.domain.memory.guest"), "3Gi");

	/* a v1alpha1 payload does not decode any more */
	snprintf(text, sizeof(text), "%s%s",
		 vm_with("  instancetype:\n    name: it\n    revisionName: rev1\n", ""),
		 "---\napiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: rev1\n"
		 "data:\n  apiVersion: instancetype.kubevirt.io/v1alpha1\n"
		 "  kind: VirtualMachineClusterInstancetype\n  spec: {}\n");
	CHECK(resolve(text) != 0);
	CHECK(said("spec.instancetype.revisionName",
		   "failed to decode object in ControllerRevision"));
}

static void test_inference(void)
{
	const char *pvc = "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n"
			  "  name: claim\n  labels:\n"
			  "    instancetype.kubevirt.io/default-instancetype: it\n";
	char text[16384];

	snprintf(text, sizeof(text), "%s%s%s",
		 vm_with("  instancetype:\n    inferFromVolume: root\n", ""),
		 IT("it", "2", "1Gi", ""), pvc);
	replace(text, "containerDisk:\n          image: img\n",
		"persistentVolumeClaim:\n          claimName: claim\n");
	CHECK(resolve(text) == 0);
	CHECK_STR(node_text(node_path(S.r.vm, "spec.instancetype.name")), "it");
	CHECK(node_path(S.r.vm, "spec.instancetype.inferFromVolume") == NULL);

	/* the container disk cannot carry labels: Ignore drops the matcher */
	snprintf(text, sizeof(text), "%s%s",
		 vm_with("  instancetype:\n    inferFromVolume: root\n"
			 "    inferFromVolumeFailurePolicy: Ignore\n",
			 "        memory:\n          guest: 1Gi\n"),
		 IT("it", "2", "1Gi", ""));
	CHECK(resolve(text) == 0);
	CHECK(node_path(S.r.vm, "spec.instancetype") == NULL);
	CHECK(said("spec.instancetype.inferFromVolume", "as type is not supported"));

	snprintf(text, sizeof(text), "%s",
		 vm_with("  instancetype:\n    inferFromVolume: nope\n", ""));
	CHECK(resolve(text) != 0);
	CHECK(said(NULL, "unable to find volume nope to infer defaults"));
}

static void test_presets(void)
{
	const char *preset = "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\n"
			     "metadata:\n  name: ps\n  namespace: default\nspec:\n  selector:\n"
			     "    matchExpressions:\n    - key: app\n      operator: In\n"
			     "      values: [x, y]\n  domain:\n    cpu:\n      cores: 4\n"
			     "    features:\n      apic: {}\n";
	char text[16384];

	snprintf(
	    text, sizeof(text), "%s%s",
	    vm_with("",
		    "        cpu:\n          cores: 2\n        memory:\n          guest: 1Gi\n"),
	    preset);
	CHECK(resolve(text) == 0);
	CHECK_STR(vmi_text("spec.domain.cpu.cores"), "2"); /* differs: skipped */
	CHECK(node_is_map(vmi("spec.domain.features.apic")));
	CHECK_STR(ann("virtualmachinepreset.kubevirt.io/ps"), "kubevirt.io/v1");
	CHECK(said(NULL, "Some settings were not applied"));

	/* the selector does not match */
	snprintf(text, sizeof(text), "%s%s", vm_with("", "        memory:\n          guest: 1Gi\n"),
		 preset);
	*strstr(text, "app: x") = 'b';
	CHECK(resolve(text) == 0);
	CHECK(node_is_null(vmi("spec.domain.features")));
}

static void test_validation(void)
{
	char text[16384];

	snprintf(text, sizeof(text), "%s",
		 vm_with("", "        memory:\n          guest: 1Gi\n        machine:\n"
			     "          type: virt-8.0\n        firmware:\n          bootloader:\n"
			     "            efi: {}\n"));
	CHECK(resolve(text) != 0);
	CHECK(said("spec.template.spec.domain", "SecureBoot requires SMM"));
	CHECK(said("spec.template.spec.domain.machine.type", "is not supported: virt-8.0"));

	snprintf(
	    text, sizeof(text), "%s",
	    vm_with(
		"",
		"        memory:\n          guest: 1Gi\n        cpu:\n          sockets: -1\n"));
	CHECK(resolve(text) != 0);
	CHECK(said("spec.template.spec.domain.cpu.sockets", "must be an integer between 0"));
	CHECK(first_error() && first_error()->line == 18 && first_error()->col == 20);
}

static void test_seed_era_forms(void)
{
	const char *text =
	    "apiVersion: kubevirt.io/v1alpha1\nkind: VirtualMachine\nmetadata:\n  name: old\n"
	    "  labels:\n    f: w\nspec:\n  domain:\n    resources:\n      requests:\n"
	    "        memory: 64Mi\n---\napiVersion: kubevirt.io/v1alpha1\n"
	    "kind: VirtualMachinePreset\nmetadata:\n  name: ps\nspec:\n  selector:\n"
	    "    matchLabels:\n      f: w\n  domain:\n    cpu:\n      cores: 3\n";

	CHECK(resolve(text) == 0);
	CHECK(S.r.vmi_only);
	CHECK_STR(vmi_text("spec.domain.cpu.cores"), "3");
	CHECK(said(NULL, "seed-era"));
}

/* KubeVirt's key is devices.networkInterfaceMultiqueue (lower-case q): the
 * preference fills it only when the VM leaves it unset, and no other
 * spelling appears in the VMI. */
static void test_network_multiqueue(void)
{
	char text[16384];
	const struct node *devs;

	snprintf(text, sizeof(text), "%s%s",
		 vm_with("  preference:\n    name: p\n", "        memory:\n          guest: 1Gi\n"),
		 PREF("p", "  devices:\n    preferredNetworkInterfaceMultiQueue: true\n"));
	replace(text, "devices: {}", "devices:\n          networkInterfaceMultiqueue: false");
	CHECK(resolve(text) == 0);
	devs = vmi("spec.domain.devices");
	CHECK_STR(node_text(node_get(devs, "networkInterfaceMultiqueue")), "false");
	CHECK(node_get(devs, "networkInterfaceMultiQueue") == NULL);
	CHECK_STR(node_get(devs, "networkInterfaceMultiqueue")->origin, "VM vm");

	replace(text, "devices:\n          networkInterfaceMultiqueue: false", "devices: {}");
	CHECK(resolve(text) == 0);
	devs = vmi("spec.domain.devices");
	CHECK_STR(node_text(node_get(devs, "networkInterfaceMultiqueue")), "true");
	CHECK_STR(node_get(devs, "networkInterfaceMultiqueue")->origin, "preference p");
	CHECK(node_get(devs, "networkInterfaceMultiQueue") == NULL);
}

int main(void)
{
	session_init(&S);
	TEST_RUN(test_topology_table);
	TEST_RUN(test_spread_divisibility);
	TEST_RUN(test_conflicts_collected);
	TEST_RUN(test_instancetype_fields);
	TEST_RUN(test_preference_fill_only);
	TEST_RUN(test_requirements);
	TEST_RUN(test_revisions);
	TEST_RUN(test_inference);
	TEST_RUN(test_presets);
	TEST_RUN(test_validation);
	TEST_RUN(test_seed_era_forms);
	TEST_RUN(test_network_multiqueue);
	session_free(&S);
	return test_summary();
}
