/* SPDX-License-Identifier: MIT */
/* KubeVirt's admission rules (spec/admit*.c): the path rule, DNS-1123
 * names, and through whole resolutions the parsers (MAC addresses,
 * base64) and the name index on manifests with many entries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/admit.h"
#include "tests/lib/test.h"

static struct session S;

static int resolve(const char *text)
{
	session_free(&S);
	session_init(&S);
	if (session_load(&S, NULL, 0, text))
		return -1;
	return session_resolve(&S, NULL);
}

static unsigned int count(const char *path, const char *msg)
{
	const struct diag_msg *m;
	unsigned int n = 0;

	for (m = S.d.head; m; m = m->next)
		n += !m->warning && (!path || (m->path && strcmp(m->path, path) == 0)) &&
		     (!msg || strstr(m->msg, msg));
	return n;
}

static void test_path_rule(void)
{
	static const char *const good[] = {"/a", "/a/b", "/a/b/", "/a/.b", "/a/..b", "/a/b.."};
	static const char *const bad[] = {"a",	 "a/b", "/a/../b", "/a/./b", "//a", "/a//b", "/a//",
					  "/..", "/.",	"/a/..",   "/a/.",   "./a", "../a",  ""};
	unsigned int i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(admit_path_rule(good[i]) == NULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(admit_path_rule(bad[i]) != NULL);
		CHECK(strstr(admit_path_rule(bad[i]), "without relative components") != NULL);
	}
	CHECK_STR(admit_path_rule("/"), "must not point to root");
}

static void test_dns(void)
{
	const char *m[2];
	char long_name[80];

	CHECK(admit_dns1123_label("a", m) == 0 && admit_dns1123_label("a-0", m) == 0);
	CHECK(admit_dns1123_label("0a", m) == 0);
	CHECK(admit_dns1123_label("A", m) == 1 && strstr(m[0], "RFC 1123 label"));
	CHECK(admit_dns1123_label("-a", m) == 1 && admit_dns1123_label("a-", m) == 1);
	CHECK(admit_dns1123_label("", m) == 1);
	CHECK(admit_dns1123_label("a.b", m) == 1);
	CHECK_STR(m[0], "must not contain dots");
	memset(long_name, 'a', 64);
	long_name[64] = 0;
	CHECK(admit_dns1123_label(long_name, m) == 1);
	CHECK_STR(m[0], "must be no more than 63 characters");
	long_name[10] = '_';
	CHECK(admit_dns1123_label(long_name, m) == 2 && strstr(m[1], "RFC 1123 label"));
	long_name[63] = 0;
	CHECK(admit_dns1123_label(long_name, m) == 1);
	CHECK(admit_dns1123_subdomain("a.b-c.d", m) == 0);
	CHECK(admit_dns1123_subdomain("a..b", m) == 1 && strstr(m[0], "RFC 1123 subdomain"));
	CHECK(admit_dns1123_subdomain("a.", m) == 1);
}

#define VM(extra_ifaces, extra_vols)                                                               \
	"apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: t}\n"                  \
	"spec:\n  runStrategy: Once\n  template:\n    spec:\n      domain:\n"                      \
	"        memory: {guest: 64Mi}\n        devices:\n"                                        \
	"          disks: [{name: d, disk: {bus: virtio}}]\n" extra_ifaces                         \
	"      volumes:\n      - {name: d, emptyDisk: {capacity: 1Mi}}\n" extra_vols

static int with_mac(const char *mac)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 VM("          interfaces: [{name: default, masquerade: {}, macAddress: '%s'}]\n",
		    "") "      networks: [{name: default, pod: {}}]\n",
		 mac);
	return resolve(text);
}

static void test_mac(void)
{
	CHECK(with_mac("02:00:00:aa:bb:01") == 0);
	CHECK(with_mac("02-00-00-AA-BB-01") == 0);
	CHECK(with_mac("0200.00aa.bb01") == 0);
	CHECK(with_mac("02:00:00:aa:bb") != 0);
	CHECK(count(NULL, "malformed MAC address (02:00:00:aa:bb)") == 1);
	CHECK(with_mac("02:00:00:aa:bb:01:02:03") != 0);
	CHECK(count(NULL, "too long MAC address") == 1);
	CHECK(with_mac("02:00-00:aa:bb:01") != 0 && count(NULL, "malformed") == 1);
	CHECK(with_mac("02:00:00:aa:bb:0g") != 0 && count(NULL, "malformed") == 1);
	/* the in-pod bridge's address is reserved under masquerade */
	CHECK(with_mac("02:00:00:00:00:00") != 0 && count(NULL, "reserved") == 1);
}

static int with_b64(const char *b64)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 VM("", "      - {name: ci, cloudInitNoCloud: {userDataBase64: '%s'}}\n"), b64);
	return resolve(text);
}

/* validateAccessCredentials: one type, one source, one method, users for
 * qemuGuestAgent, a cloud-init volume of the method's kind */
static int with_creds(const char *creds)
{
	char text[2048];

	snprintf(text, sizeof(text), VM("", "%s      accessCredentials:\n%s"),
		 strstr(creds, "noCloud") ? "      - {name: ci, cloudInitNoCloud: {userData: x}}\n"
					  : "",
		 creds);
	return resolve(text);
}

#define KEY(method)                                                                                \
	"      - sshPublicKey: {source: {secret: {secretName: k}}, propagationMethod: " method "}" \
	"\n"
#define PW(method) "      - userPassword: {source: {secret: {secretName: p}}" method "}\n"

static void test_access_credentials(void)
{
	CHECK(with_creds(KEY("{qemuGuestAgent: {users: [root]}}") PW(", propagationMethod: "
								     "{qemuGuestAgent: {}}")) == 0);
	CHECK(with_creds(KEY("{noCloud: {}}")) == 0);
	CHECK(with_creds(KEY("{configDrive: {}}")) != 0);
	CHECK(
	    count("spec.template.spec.accessCredentials[0].sshPublicKey.propagationMethod",
		  "spec.template.spec.accessCredentials[0] requires a configDrive volume to exist "
		  "when the configDrive propagationMethod is in use.") == 1);
	CHECK(with_creds(KEY("{qemuGuestAgent: {users: []}}")) != 0);
	CHECK(count("spec.template.spec.accessCredentials[0].sshPublicKey.propagationMethod."
		    "qemuGuestAgent.users",
		    "requires at least one user to be present in the users list") == 1);
	CHECK(with_creds(KEY("{noCloud: {}, qemuGuestAgent: {users: [a]}}")) != 0);
	CHECK(count(NULL, "must have exactly one propagationMethod set") == 1);
	/* (a missing source or method is the schema's "Required value") */
	CHECK(with_creds(
		  "      - sshPublicKey: {source: {}, propagationMethod: {noCloud: {}}}\n") != 0);
	CHECK(count("spec.template.spec.accessCredentials[0].sshPublicKey.source",
		    "must have exactly one source set") == 1);
	CHECK(with_creds(PW(", propagationMethod: {}")) != 0);
	CHECK(count(NULL, "must have exactly one propagationMethod set") == 1);
	CHECK(with_creds("      - sshPublicKey: {source: {secret: {secretName: k}}, "
			 "propagationMethod: {qemuGuestAgent: {users: [a]}}}\n"
			 "        userPassword: {source: {secret: {secretName: p}}, "
			 "propagationMethod: {qemuGuestAgent: {}}}\n") != 0);
	CHECK(count("spec.template.spec.accessCredentials[0]",
		    "must have exactly one access credential type set") == 1);
}

static void test_base64(void)
{
	CHECK(with_b64("I2Nsb3VkLWNvbmZpZw==") == 0);
	CHECK(with_b64("I2Nsb3VkLWNvbmZpZzE=") == 0);
	CHECK(with_b64("I2Nsb3VkLWNvbmZpZzEy") == 0);
	CHECK(with_b64("I2Nsb3VkLWNvbmZpZw") != 0);
	CHECK(count("spec.template.spec.volumes[1].cloudInitNoCloud.userDataBase64",
		    "is not a valid base64 value.") == 1);
	CHECK(with_b64("I2Nsb3VkLWNvbmZpZw=a") != 0 && count(NULL, "not a valid base64") == 1);
	CHECK(with_b64("I2Nsb3VkLWNvbmZpZ*==") != 0 && count(NULL, "not a valid base64") == 1);
	CHECK(with_b64("I===") != 0 && count(NULL, "not a valid base64") == 1);
}

/* 3000 disks of one name and 3000 of another: every later one is refused
 * against the first of its name, each once (the index, not pairs) */
static void test_many_duplicates(void)
{
	size_t cap = 1 << 20, len;
	char *text = malloc(cap);
	unsigned int i;

	CHECK(text != NULL);
	if (!text)
		return;
	len = (size_t)snprintf(
	    text, cap,
	    "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: t}\n"
	    "spec:\n  runStrategy: Once\n  template:\n    spec:\n      domain:\n"
	    "        memory: {guest: 64Mi}\n        devices:\n          disks:\n");
	for (i = 0; i < 6000; i++)
		len += (size_t)snprintf(text + len, cap - len, "          - {name: %s}\n",
					i % 2 ? "b" : "a");
	snprintf(text + len, cap - len,
		 "      volumes:\n      - {name: a, emptyDisk: {capacity: 1Mi}}\n"
		 "      - {name: b, emptyDisk: {capacity: 1Mi}}\n");
	CHECK(resolve(text) != 0);
	CHECK(count(NULL, "must not have the same Name.") == 5998);
	CHECK(count("spec.template.spec.domain.devices.disks[5999].name",
		    "disks[5999] and spec.template.spec.domain.devices.disks[1] must not") == 1);
	free(text);
}

static int with_topology_key(const char *key, const char *label_value)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 VM("", "") "      topologySpreadConstraints:\n"
			    "      - maxSkew: 1\n        topologyKey: '%s'\n"
			    "        whenUnsatisfiable: ScheduleAnyway\n"
			    "        labelSelector: {matchLabels: {app: '%s'}}\n",
		 key, label_value);
	return resolve(text);
}

/* Kubernetes' qualified names (label keys) and label values */
static void test_label_names(void)
{
	char long_part[80];

	CHECK(with_topology_key("zone", "web") == 0);
	CHECK(with_topology_key("topology.kubernetes.io/zone", "") == 0);
	CHECK(with_topology_key("My.Zone_1", "a.b-c_D") == 0);
	CHECK(with_topology_key("a/b/c", "web") != 0);
	CHECK(count(NULL, "Invalid value: \"a/b/c\": a qualified name must consist of") == 1);
	CHECK(with_topology_key("/zone", "web") != 0);
	CHECK(count(NULL, "prefix part must be non-empty") == 1);
	CHECK(with_topology_key("Example.com/zone", "web") != 0);
	CHECK(count(NULL, "prefix part a lowercase RFC 1123 subdomain") == 1);
	CHECK(with_topology_key("example.com/", "web") != 0);
	CHECK(count(NULL, "name part must be non-empty") == 1);
	CHECK(with_topology_key("-zone", "web") != 0);
	CHECK(count("spec.template.spec.topologySpreadConstraints[0].topologyKey",
		    "name part must consist of alphanumeric") == 1);
	memset(long_part, 'z', 64);
	long_part[64] = 0;
	CHECK(with_topology_key(long_part, "web") != 0);
	CHECK(count(NULL, "name part must be no more than 63 characters") == 1);
	CHECK(with_topology_key("zone", "-web") != 0);
	CHECK(count("spec.template.spec.topologySpreadConstraints.labelSelector.matchLabels",
		    "a valid label must be an empty string") == 1);
	CHECK(with_topology_key("zone", long_part) != 0);
	CHECK(count(NULL, "Invalid value: \"zzzz") == 1);
}

/* quantities near 2^63 in the CPU rules: no overflow (UBSan), refused */
static void test_huge_cpu(void)
{
	CHECK(resolve("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: t}\n"
		      "spec:\n  runStrategy: Once\n  template:\n    spec:\n      domain:\n"
		      "        cpu: {dedicatedCpuPlacement: true}\n"
		      "        resources:\n          requests: {cpu: '9e18'}\n"
		      "          limits: {cpu: '9.2e18'}\n"
		      "        memory: {guest: 64Mi}\n        devices: {}\n") != 0);
	CHECK(count("spec.template.spec.domain.resources.limits.cpu",
		    "more CPUs than vmlet's limit of 1024 vCPUs") == 1);
	CHECK(count(NULL, "must be equal when DedicatedCPUPlacement is true") == 1);
}

/* the sorted checks: a repeated spread constraint is reported on each
 * earlier copy; a DataVolume template is found through either volume kind */
static void test_sorted_checks(void)
{
	CHECK(resolve(VM(
		  "", "") "      topologySpreadConstraints:\n"
			  "      - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule}\n"
			  "      - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: "
			  "ScheduleAnyway}\n"
			  "      - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: DoNotSchedule}\n"
			  "      - {maxSkew: 1, topologyKey: z, whenUnsatisfiable: "
			  "DoNotSchedule}\n") != 0);
	CHECK(count(NULL, "Duplicate value: \"{z, DoNotSchedule}\"") == 2);
	CHECK(count("spec.template.spec.topologySpreadConstraints[0].{topologyKey, "
		    "whenUnsatisfiable}",
		    NULL) == 1);
	CHECK(count("spec.template.spec.topologySpreadConstraints[2].{topologyKey, "
		    "whenUnsatisfiable}",
		    NULL) == 1);
	CHECK(resolve("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: t}\n"
		      "spec:\n  runStrategy: Once\n  dataVolumeTemplates:\n"
		      "  - metadata: {name: a}\n    spec: {storage: {}, source: {blank: {}}}\n"
		      "  - metadata: {name: b}\n    spec: {storage: {}, source: {blank: {}}}\n"
		      "  template:\n    spec:\n      domain:\n        memory: {guest: 64Mi}\n"
		      "        devices: {}\n      volumes:\n"
		      "      - {name: x, dataVolume: {name: b}}\n"
		      "      - {name: y, persistentVolumeClaim: {claimName: a}}\n") == 0);
}

int main(void)
{
	TEST_RUN(test_path_rule);
	TEST_RUN(test_dns);
	TEST_RUN(test_mac);
	TEST_RUN(test_base64);
	TEST_RUN(test_access_credentials);
	TEST_RUN(test_many_duplicates);
	TEST_RUN(test_label_names);
	TEST_RUN(test_huge_cpu);
	TEST_RUN(test_sorted_checks);
	session_free(&S);
	return test_summary();
}
