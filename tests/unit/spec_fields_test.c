/* SPDX-License-Identifier: MIT */
/* spec/fields.c and docs/fields.md: what vmlet does with each KubeVirt field
 * (warnings, refusals) and the config fields it maps: startStrategy,
 * dedicatedCpuPlacement/isolateEmulatorThread, clock, the memory rule. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/fields.h"
#include "spec/schema.h"
#include "spec/spec.h"
#include "tests/lib/test.h"

/* every message of the last resolution, one per line: "W|E PATH: MSG @LINE:COL" */
static char seen[16384];

static void collect(void *ctx, const struct spec_message *m)
{
	size_t n = strlen(seen);

	(void)ctx;
	snprintf(seen + n, sizeof(seen) - n, "%c %s: %s @%u:%u\n", m->warning ? 'W' : 'E',
		 m->path ? m->path : "-", m->msg, m->line, m->col);
}

/* Resolve a VM whose template spec is `body` (indented 6 spaces already). */
static int resolve(const char *body, struct vm_config *c)
{
	char text[4096];
	struct spec_options o = {.report = collect};

	snprintf(text, sizeof(text),
		 "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n"
		 "metadata: {name: f, namespace: default}\n"
		 "spec:\n  template:\n    spec:\n%s  runStrategy: Always\n",
		 body);
	o.manifest = text;
	seen[0] = 0;
	return spec_resolve_config(&o, c);
}

#define MEM "      domain:\n        memory: {guest: 64Mi}\n"
/* (DomainSpec.devices is required) */
#define NODEV "        devices: {}\n"

static bool has(const char *needle)
{
	return strstr(seen, needle) != NULL;
}

static void test_table(void)
{
	const struct field_rule *f;
	unsigned int i;

	CHECK(field_n_rules > 400);
	for (i = 1; i < field_n_rules; i++)
		CHECK(strcmp(field_rules[i - 1].path, field_rules[i].path) <= 0);
	f = fields_find("spec.template.spec.domain.cpu.model");
	CHECK(f && f->treatment == FIELD_IMPLEMENTED && f->values);
	CHECK(f && f[-1].path && strcmp(f[-1].path, f->path) != 0);
	CHECK(fields_find("spec.template.spec.domain.cpu.socket") == NULL);
	CHECK(fields_find("spec.template.spec.domain.launchSecurity") != NULL);
}

struct walk {
	unsigned int fields, missing;
};

/* Every field of the schema table under VirtualMachineSpec has a row;
 * fields of a non-KubeVirt type (Kubernetes, CDI) are covered by their
 * one row, their own fields are not walked. */
static int cover(const char *path, const struct schema_field *f, void *arg)
{
	const struct schema_val *v = schema_field_val(f);
	const struct schema_type *t;
	struct walk *w = arg;
	char full[512];

	if (v->kind == SK_ARRAY || v->kind == SK_MAP)
		v = schema_val_item(v);
	t = v ? schema_val_type(v) : NULL;
	snprintf(full, sizeof(full), "spec.%s", path);
	/* a list's elements ("x[]") are the list's row */
	if (strlen(full) > 2 && !strcmp(full + strlen(full) - 2, "[]"))
		full[strlen(full) - 2] = 0;
	w->fields++;
	if (!fields_find(full)) {
		test_fail(__FILE__, __LINE__, "%s: a schema field without a row in docs/fields.md",
			  full);
		w->missing++;
	}
	return t && strncmp(t->name, "v1.", 3) ? 1 : 0;
}

static void test_schema_covered(void)
{
	struct walk w = {0};

	CHECK(schema_walk(SCHEMA_T_VM_SPEC, cover, &w) == 0);
	CHECK(w.fields > 400 && w.missing == 0);
}

static void test_refused(void)
{
	struct vm_config c;

	CHECK(resolve("      architecture: arm64\n" MEM NODEV, &c) == -EINVAL);
	CHECK(has("E spec.template.spec.architecture: vmlet runs amd64 (x86_64) guests only, "
		  "not \"arm64\" @7:21"));
	/* (with EFI without secure boot, as KubeVirt asks for SEV) */
	CHECK(resolve(MEM NODEV "        launchSecurity: {sev: {}}\n"
				"        firmware: {bootloader: {efi: {secureBoot: false}}}\n",
		      &c) == -EINVAL);
	CHECK(has("E spec.template.spec.domain.launchSecurity: vmlet cannot run encrypted"));
	CHECK(!has("launchSecurity.sev")); /* one error for the whole field */
	CHECK(resolve(MEM NODEV "        cpu: {model: Haswell-noTSX}\n", &c) == -EINVAL);
	CHECK(has("E spec.template.spec.domain.cpu.model: vmlet presents the host CPU"));
	CHECK(has("\"Haswell-noTSX\""));
	CHECK(resolve(MEM
		      "        devices:\n          gpus: [{name: g, deviceName: nvidia.com/T4}]\n",
		      &c) == -EINVAL);
	CHECK(has("E spec.template.spec.domain.devices.gpus: vmlet cannot pass GPUs through"));
	CHECK(resolve(MEM "        devices:\n          hostDevices: [{name: h, deviceName: x/y}]\n",
		      &c) == -EINVAL);
	CHECK(has("E spec.template.spec.domain.devices.hostDevices:"));
	CHECK(resolve(MEM "        devices:\n          filesystems: [{name: fs, virtiofs: {}}]\n"
			  "      volumes: [{name: fs, persistentVolumeClaim: {claimName: c}}]\n",
		      &c) == -EINVAL);
	CHECK(has("E spec.template.spec.domain.devices.filesystems: vmlet has no virtiofs"));
	/* an empty list asks for nothing */
	CHECK(resolve(MEM "        devices:\n          gpus: []\n", &c) == 0);
	vm_config_release(&c);
}

static void test_implemented(void)
{
	struct vm_config c;

	CHECK(resolve("      architecture: amd64\n      startStrategy: Paused\n" MEM
		      "        cpu: {model: host-model, dedicatedCpuPlacement: true,"
		      " isolateEmulatorThread: true, cores: 1}\n"
		      "        clock: {utc: {offsetSeconds: -3600}}\n"
		      "        devices:\n          autoattachSerialConsole: false\n"
		      "          autoattachGraphicsDevice: false\n          tpm: {enabled: false}\n"
		      "          disks: [{name: a, cache: none, disk: {bus: virtio}}]\n"
		      "      volumes: [{name: a, emptyDisk: {capacity: 1Mi}}]\n",
		      &c) == 0);
	CHECK(!strchr(seen, 'W') && !strchr(seen, 'E'));
	CHECK(c.start_paused && c.dedicated_cpu_placement && c.isolate_emulator_thread);
	CHECK(!c.autoattach_serial_console);
	CHECK(c.rtc_offset_seconds == -3600 && !c.rtc_timezone);
	vm_config_release(&c);
	/* KubeVirt refuses isolateEmulatorThread without dedicated CPUs */
	CHECK(resolve(MEM NODEV "        cpu: {isolateEmulatorThread: true}\n", &c) == -EINVAL);
	CHECK(has("E spec.template.spec.domain.cpu.isolateEmulatorThread: IsolateEmulatorThread "
		  "should be only set in combination with DedicatedCPUPlacement"));
	CHECK(resolve(MEM NODEV "        cpu: {model: host-passthrough}\n"
				"        clock: {timezone: Europe/Berlin}\n",
		      &c) == 0);
	CHECK(!c.start_paused && !c.dedicated_cpu_placement && !c.isolate_emulator_thread);
	CHECK_STR(c.rtc_timezone, "Europe/Berlin");
	vm_config_release(&c);
	/* with utc too, utc wins (KubeVirt's converter), even as {} */
	CHECK(resolve(MEM NODEV
		      "        clock: {timezone: Europe/Berlin, utc: {offsetSeconds: 60}}\n",
		      &c) == 0);
	CHECK(!c.rtc_timezone && c.rtc_offset_seconds == 60);
	vm_config_release(&c);
	CHECK(resolve(MEM NODEV "        clock: {timezone: Europe/Berlin, utc: {}}\n", &c) == 0);
	CHECK(!c.rtc_timezone && c.rtc_offset_seconds == 0);
	vm_config_release(&c);
	CHECK(resolve(MEM NODEV "        clock: {utc: {offsetSeconds: 99999999}}\n", &c) ==
	      -EINVAL);
	CHECK(has("E spec.template.spec.domain.clock.utc.offsetSeconds:"));
}

static void test_differently(void)
{
	struct vm_config c;

	CHECK(resolve(
		  "      nodeSelector: {disk: ssd}\n" MEM
		  "        devices:\n          autoattachInputDevice: true\n"
		  "          tpm: {}\n"
		  "          disks:\n          - {name: a, cache: writeback, disk: {bus: virtio}}\n"
		  "          - {name: b}\n"
		  "      volumes:\n      - {name: a, emptyDisk: {capacity: 1Mi}}\n"
		  "      - {name: b, emptyDisk: {capacity: 1Mi}}\n",
		  &c) == 0);
	CHECK(has("W spec.template.spec.nodeSelector: scheduling: vmlet runs the VM on this host "
		  "@7:21"));
	CHECK(has("W spec.template.spec.domain.devices.autoattachInputDevice: vmlet has no input "
		  "device"));
	/* a TPM is implemented now (vmm/dev/tpm/): no warning, in the config */
	CHECK(!has("devices.tpm"));
	CHECK(c.tpm && !c.tpm_persistent);
	/* a disk without a bus is SATA, KubeVirt's amd64 default: no warning */
	CHECK(!has("disk.bus"));
	CHECK(c.n_disks == 2 && c.disks[0].cache == VM_CACHE_WRITEBACK);
	CHECK_STR(c.disks[0].bus, "virtio");
	CHECK_STR(c.disks[1].bus, "sata");
	vm_config_release(&c);
	CHECK(resolve(MEM "        devices:\n          disks: [{name: a, disk: {}}]\n"
			  "      volumes: [{name: a, emptyDisk: {capacity: 1Mi}}]\n",
		      &c) == 0);
	CHECK_STR(c.disks[0].bus, "sata");
	vm_config_release(&c);
	/* then read-only is refused, as KubeVirt's VMI webhook refuses it once
	 * its mutating webhook has set the bus */
	CHECK(resolve(MEM "        devices:\n          disks: [{name: a, disk: {readonly: true}}]\n"
			  "      volumes: [{name: a, emptyDisk: {capacity: 1Mi}}]\n",
		      &c) == -EINVAL);
	CHECK(has("E spec.template.spec.domain.devices.disks[0].disk.bus: sata hard-disks do not "
		  "support read-only."));
	/* a cdrom is on sata (KubeVirt's amd64 default), read-only; on scsi
	 * it is refused, a lun too, as run refuses them (no SCSI) */
	CHECK(resolve(MEM "        devices:\n          disks: [{name: a, cdrom: {}}]\n"
			  "      volumes: [{name: a, emptyDisk: {capacity: 1Mi}}]\n",
		      &c) == 0);
	CHECK(c.n_disks == 1 && c.disks[0].device == VM_DEV_CDROM && c.disks[0].read_only &&
	      c.disks[0].bus && !strcmp(c.disks[0].bus, "sata") && !c.disks[0].tray_open);
	vm_config_release(&c);
	CHECK(resolve(MEM "        devices:\n          disks: [{name: a, cdrom: {tray: open}}]\n",
		      &c) == 0);
	CHECK(c.n_disks == 1 && c.disks[0].source == VM_DISK_NONE && c.disks[0].tray_open);
	vm_config_release(&c);
	CHECK(resolve(MEM "        devices:\n          disks: [{name: a, cdrom: {bus: scsi}}]\n"
			  "      volumes: [{name: a, emptyDisk: {capacity: 1Mi}}]\n",
		      &c) == -EINVAL);
	CHECK(has(
	    "E spec.template.spec.domain.devices.disks[0].cdrom.bus: a CD-ROM on bus \"scsi\""));
	/* (on a claim: KubeVirt maps a lun to nothing else) */
	CHECK(resolve(MEM "        devices:\n          disks: [{name: a, lun: {}}]\n"
			  "      volumes: [{name: a, persistentVolumeClaim: {claimName: c}}]\n",
		      &c) == -EINVAL);
	CHECK(has("E spec.template.spec.domain.devices.disks[0].lun: vmlet has no SCSI LUN"));
	/* KubeVirt's cache modes are none, writethrough and writeback */
	CHECK(resolve(MEM "        devices:\n          disks: [{name: a, cache: unsafe}]\n"
			  "      volumes: [{name: a, emptyDisk: {capacity: 1Mi}}]\n",
		      &c) == -EINVAL);
	CHECK(has("E spec.template.spec.domain.devices.disks[0].cache: "
		  "spec.template.spec.domain.devices.disks[0].cache has invalid value unsafe"));
	/* an explicit SATA disk is an AHCI port (vmm/dev/ahci/ahci.h); SCSI is
	 * still refused */
	CHECK(resolve(MEM "        devices:\n          disks: [{name: a, disk: {bus: sata}}]\n"
			  "      volumes: [{name: a, emptyDisk: {capacity: 1Mi}}]\n",
		      &c) == 0);
	CHECK(!has("disk.bus"));
	vm_config_release(&c);
	CHECK(resolve(MEM "        devices:\n          disks: [{name: a, disk: {bus: scsi}}]\n"
			  "      volumes: [{name: a, emptyDisk: {capacity: 1Mi}}]\n",
		      &c) == -EINVAL);
	CHECK(has("E spec.template.spec.domain.devices.disks[0].disk.bus: bus \"scsi\" is not "
		  "supported"));
}

static void test_memory_required(void)
{
	struct vm_config c;

	CHECK(resolve("      domain:\n        cpu: {cores: 1}\n" NODEV, &c) == -EINVAL);
	CHECK(has("E spec.template.spec.domain.memory: no memory requested, at least one of "
		  "'spec.domain.memory.guest', 'spec.domain.memory.hugepages.size' or "
		  "'spec.domain.resources.requests.memory' must be set"));
	CHECK(resolve("      domain:\n        resources: {requests: {memory: 0}}\n" NODEV, &c) ==
	      -EINVAL);
	CHECK(has("no memory requested"));
	CHECK(resolve("      domain:\n        resources: {limits: {memory: 96Mi}}\n" NODEV, &c) ==
	      0);
	CHECK(c.memory_bytes == 96u << 20);
	vm_config_release(&c);
	CHECK(resolve("      domain:\n        resources: {requests: {memory: 80Mi}}\n" NODEV, &c) ==
	      0);
	CHECK(c.memory_bytes == 80u << 20);
	vm_config_release(&c);
}

int main(void)
{
	TEST_RUN(test_table);
	TEST_RUN(test_schema_covered);
	TEST_RUN(test_refused);
	TEST_RUN(test_implemented);
	TEST_RUN(test_differently);
	TEST_RUN(test_memory_required);
	return test_summary();
}
