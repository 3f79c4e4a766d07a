/* SPDX-License-Identifier: MIT */
/* spec/config.c: the resolved VMI as struct vm_config (the VMM's input),
 * volume -> host path mapping, cloud-init payloads, NICs, the library API. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spec/spec.h"
#include "tests/lib/test.h"

static const char *const manifest =
    "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n"
    "metadata:\n  name: web\n  namespace: prod\n  uid: u-1234\n"
    "spec:\n  running: true\n  instancetype:\n    name: it\n  preference:\n    name: p\n"
    "  template:\n    spec:\n      hostname: h1\n      domain:\n"
    "        firmware:\n          serial: SN1\n          kernelBoot:\n"
    "            kernelArgs: console=ttyS0\n            container:\n"
    "              image: k\n              kernelPath: /boot/vmlinuz\n"
    "              initrdPath: /boot/initrd\n"
    "        devices:\n          disks:\n          - name: root\n            bootOrder: 1\n"
    "            serial: abc\n            cache: none\n"
    "          - name: iso\n            disk: {bus: virtio, readonly: true}\n"
    "          interfaces:\n          - name: default\n            masquerade: {}\n"
    "            macAddress: 02:00:00:aa:bb:cc\n            ports:\n            - port: 80\n"
    "          - name: blue\n            bridge: {}\n"
    "      networks:\n      - name: default\n        pod: {}\n"
    "      - name: blue\n        multus:\n          networkName: ns/blue\n"
    "      volumes:\n      - name: root\n        containerDisk:\n          image: x\n"
    "      - name: iso\n        containerDisk:\n          image: y\n"
    "          path: /disk/installer.iso\n"
    "      - name: data\n        persistentVolumeClaim:\n          claimName: c\n"
    "          readOnly: true\n"
    "      - name: host\n        hostDisk:\n          path: /srv/host.img\n"
    "          type: Disk\n"
    "      - name: scratch\n        emptyDisk:\n          capacity: 1Gi\n"
    "      - name: ci\n        cloudInitNoCloud:\n"
    "          userDataBase64: I2Nsb3VkLWNvbmZpZwpob3N0bmFtZTogeAo=\n"
    "---\napiVersion: instancetype.kubevirt.io/v1beta1\n"
    "kind: VirtualMachineClusterInstancetype\nmetadata:\n  name: it\n"
    "spec:\n  cpu:\n    guest: 4\n  memory:\n    guest: 1536Mi\n    hugepages:\n"
    "      pageSize: 2Mi\n"
    "---\napiVersion: instancetype.kubevirt.io/v1beta1\n"
    "kind: VirtualMachineClusterPreference\nmetadata:\n  name: p\n"
    "spec:\n  cpu:\n    preferredCPUTopology: spread\n  devices:\n"
    "    preferredDiskBus: virtio\n    preferredInterfaceModel: virtio\n"
    "    preferredRng: {}\n    preferredNetworkInterfaceMultiQueue: true\n";

static char root[64];

static const struct vm_disk *disk(const struct vm_config *c, const char *name)
{
	for (unsigned int i = 0; i < c->n_disks; i++)
		if (strcmp(c->disks[i].name, name) == 0)
			return &c->disks[i];
	return NULL;
}

static void test_mapping(void)
{
	const char *vols[] = {"host=/dev/vdb"};
	struct spec_options o = {.manifest = manifest,
				 .disk_root = root,
				 .volume_overrides = vols,
				 .n_volume_overrides = 1};
	struct vm_config c;
	const struct vm_disk *d;
	char path[128];

	CHECK(spec_resolve_config(&o, &c) == 0);
	CHECK_STR(c.name, "web");
	CHECK_STR(c.namespace, "prod");
	CHECK_STR(c.hostname, "h1");
	CHECK_STR(c.run_strategy, "Always");
	CHECK(c.sockets == 2 && c.cores == 2 && c.threads == 1);
	CHECK_EQ_U64(c.memory_bytes, 1536ull << 20);
	CHECK_EQ_U64(c.hugepage_size, 2u << 20);
	CHECK(c.boot == VM_BOOT_KERNEL);
	snprintf(path, sizeof(path), "%s/boot/vmlinuz", root);
	CHECK_STR(c.kernel_path, path);
	CHECK_STR(c.cmdline, "console=ttyS0");
	CHECK_STR(c.firmware_serial, "SN1");
	/* KubeVirt's VM controller: CalculateLegacyUUID("web") */
	CHECK_STR(c.firmware_uuid, "d32ff544-f682-571b-8677-3762f07ab8a4");
	CHECK(c.rng);
	/* the balloon by default, without free page reporting: hugepages
	 * (from the instancetype) make the VM high-performance */
	CHECK(c.mem_balloon && !c.free_page_reporting);
	CHECK(c.net_multi_queue); /* devices.networkInterfaceMultiqueue, from the preference */
	CHECK(c.termination_grace_seconds == 30);
	CHECK_EQ_U64(c.n_disks, 6);
	d = disk(&c, "root");
	snprintf(path, sizeof(path), "%s/root/a.qcow2", root);
	CHECK(d && d->source == VM_DISK_CONTAINERDISK && d->boot_order == 1);
	CHECK_STR(d ? d->path : NULL, path);
	CHECK_STR(d ? d->bus : NULL, "virtio");
	CHECK(d && d->cache == VM_CACHE_NONE && !d->read_only);
	CHECK_STR(d ? d->serial : NULL, "abc");
	d = disk(&c, "iso");
	snprintf(path, sizeof(path), "%s/installer.iso", root);
	CHECK(d && d->device == VM_DEV_DISK && d->read_only);
	CHECK_STR(d ? d->path : NULL, path);
	d = disk(&c, "data");
	CHECK(d && d->source == VM_DISK_PVC && d->read_only); /* the claim is readOnly */
	CHECK_STR(d ? d->path : NULL, "/var/run/kubevirt-private/vmi-disks/data/disk.img");
	d = disk(&c, "host");
	CHECK_STR(d ? d->path : NULL, "/dev/vdb");
	d = disk(&c, "scratch");
	CHECK(d && d->source == VM_DISK_EMPTYDISK && d->capacity == 1ull << 30 && !d->path);
	d = disk(&c, "ci");
	CHECK(d && d->source == VM_DISK_CLOUDINIT_NOCLOUD);
	CHECK_STR(d ? d->user_data : NULL, "#cloud-config\nhostname: x\n");
	/* NoCloud: the firmware UUID is the instance-id (pkg/cloud-init) */
	CHECK_STR(d ? d->meta_instance_id : NULL, "d32ff544-f682-571b-8677-3762f07ab8a4");
	CHECK_STR(d ? d->meta_hostname : NULL, "h1");
	CHECK_STR(d ? d->meta_instance_type : NULL, "it");
	CHECK_EQ_U64(c.n_nics, 2);
	if (c.n_nics == 2) {
		CHECK(c.nics[0].binding == VM_BIND_MASQUERADE && c.nics[0].mac_set);
		CHECK(c.nics[0].mac[0] == 2 && c.nics[0].mac[5] == 0xcc);
		CHECK(c.nics[0].n_ports == 1 && c.nics[0].ports[0].port == 80);
		CHECK_STR(c.nics[0].ports[0].protocol, "TCP");
		CHECK_STR(c.nics[0].model, "virtio");
		CHECK_STR(c.nics[0].network_type, "pod");
		CHECK(c.nics[1].binding == VM_BIND_BRIDGE);
		CHECK_STR(c.nics[1].network_name, "ns/blue");
	}
	vm_config_release(&c);
}

static void test_errors(void)
{
	const char *vols[] = {"nosuch=/x"};
	struct spec_options o = {
	    .manifest = manifest, .volume_overrides = vols, .n_volume_overrides = 1};
	struct vm_config c;

	CHECK(spec_resolve_config(&o, &c) == -EINVAL);
	CHECK(c.disks == NULL && c.name == NULL);
	o.n_volume_overrides = 0;
	o.manifest = "kind: VirtualMachine\napiVersion: kubevirt.io/v1\nspec: 3\n";
	CHECK(spec_resolve_config(&o, &c) == -EINVAL);
	o.manifest = "{";
	CHECK(spec_resolve_config(&o, &c) == -EINVAL);
}

static void test_env_manifest(void)
{
	struct spec_options o = {0};
	struct vm_config c;

	unsetenv("VMLET_MANIFEST");
	CHECK(spec_resolve_config(&o, &c) == -EINVAL);
	setenv("VMLET_MANIFEST", manifest, 1);
	CHECK(spec_resolve_config(&o, &c) == 0);
	CHECK_STR(c.name, "web");
	CHECK(c.sockets * c.cores * c.threads == 4);
	vm_config_release(&c);
	unsetenv("VMLET_MANIFEST");
}

/* A small VM with the template spec's lines body (6 spaces in) and more
 * documents after it. */
static int balloon_of(const char *body, const char *more, bool *reporting)
{
	char m[2048];
	struct spec_options o = {.manifest = m};
	struct vm_config c;
	int ret;

	snprintf(m, sizeof(m),
		 "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: b}\n"
		 "spec:\n  runStrategy: Always\n%s  template:\n%s%s",
		 strstr(more, "Preference") ? "  preference: {name: p}\n" : "", body, more);
	if (spec_resolve_config(&o, &c))
		return -1;
	ret = c.mem_balloon;
	*reporting = c.free_page_reporting;
	CHECK(!c.free_page_reporting || c.mem_balloon);
	vm_config_release(&c);
	return ret;
}

/* autoattachMemBalloon and free page reporting as virt-launcher decides
 * them (manager.go isFreePageReportingEnabled, IsHighPerformanceVMI). */
static void test_balloon(void)
{
	const char *mem = "        memory: {guest: 128Mi}\n", *devs = "        devices: {}\n";
	char b[512];
	bool rep = false;

	snprintf(b, sizeof(b), "    spec:\n      domain:\n%s%s", mem, devs);
	CHECK(balloon_of(b, "", &rep) == 1 && rep); /* the default */
	snprintf(b, sizeof(b),
		 "    spec:\n      domain:\n%s        devices: {autoattachMemBalloon: false}\n",
		 mem);
	CHECK(balloon_of(b, "", &rep) == 0 && !rep);
	snprintf(b, sizeof(b),
		 "    spec:\n      domain:\n%s        devices: {autoattachMemBalloon: true}\n",
		 mem);
	CHECK(balloon_of(b, "", &rep) == 1 && rep);
	snprintf(
	    b, sizeof(b),
	    "    spec:\n      domain:\n%s%s        cpu: {dedicatedCpuPlacement: true, cores: 1}\n",
	    mem, devs);
	CHECK(balloon_of(b, "", &rep) == 1 && !rep);
	snprintf(b, sizeof(b),
		 "    spec:\n      domain:\n        memory: {guest: 128Mi, hugepages: {pageSize: "
		 "2Mi}}\n%s",
		 devs);
	CHECK(balloon_of(b, "", &rep) == 1 && !rep);
	snprintf(b, sizeof(b),
		 "    metadata:\n      annotations: {kubevirt.io/free-page-reporting-disabled: "
		 "\"true\"}\n"
		 "    spec:\n      domain:\n%s%s",
		 mem, devs);
	CHECK(balloon_of(b, "", &rep) == 1 && !rep);
	snprintf(b, sizeof(b),
		 "    metadata:\n      annotations: {kubevirt.io/free-page-reporting-disabled: "
		 "\"false\"}\n"
		 "    spec:\n      domain:\n%s%s",
		 mem, devs);
	CHECK(balloon_of(b, "", &rep) == 1 && rep);
	/* a preference's preferredAutoattachMemBalloon */
	snprintf(b, sizeof(b), "    spec:\n      domain:\n%s%s", mem, devs);
	CHECK(balloon_of(b,
			 "---\napiVersion: instancetype.kubevirt.io/v1beta1\n"
			 "kind: VirtualMachineClusterPreference\nmetadata: {name: p}\n"
			 "spec:\n  devices: {preferredAutoattachMemBalloon: false}\n",
			 &rep) == 0 &&
	      !rep);
}

int main(void)
{
	char p[128];
	FILE *f;

	snprintf(root, sizeof(root), "/tmp/vmlet-cfg.%d", (int)getpid());
	mkdir(root, 0700);
	snprintf(p, sizeof(p), "%s/root", root);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/root/a.qcow2", root);
	f = fopen(p, "w");
	if (f)
		fclose(f);
	TEST_RUN(test_mapping);
	TEST_RUN(test_errors);
	TEST_RUN(test_env_manifest);
	TEST_RUN(test_balloon);
	unlink(p);
	snprintf(p, sizeof(p), "%s/root", root);
	rmdir(p);
	rmdir(root);
	return test_summary();
}
