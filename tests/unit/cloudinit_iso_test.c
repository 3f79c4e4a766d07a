// SPDX-License-Identifier: MIT
/*
 * Seed images inspected with isoinfo (genisoimage) and blkid: labels,
 * Joliet names, file contents, and the ISO 9660 tree. Skips without
 * isoinfo.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/disk/cloudinit.h"
#include "vmm/vm_config.h"

static char dir[64];

/* Run a shell command, return its stdout (malloc'd) or NULL. */
static char *run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *run(const char *fmt, ...)
{
	char cmd[1024], *buf = calloc(1, 65536);
	size_t n = 0;
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	if (!p || !buf) {
		free(buf);
		return NULL;
	}
	n = fread(buf, 1, 65535, p);
	buf[n] = 0;
	pclose(p);
	return buf;
}

static void check_extract(const char *img, const char *path, const char *want)
{
	char *got = run("isoinfo -J -i %s -x '%s'", img, path);

	if (!got || strcmp(got, want))
		test_fail(__FILE__, __LINE__, "%s: got \"%s\", want \"%s\"", path,
			  got ? got : "(null)", want);
	free(got);
}

static void test_nocloud(void)
{
	struct vm_disk d = {.name = "cloudinitdisk", .source = VM_DISK_CLOUDINIT_NOCLOUD};
	char path[64], *out;
	int fd;

	d.user_data = "#cloud-config\npassword: fedora\nchpasswd: { expire: False }\n";
	d.network_data = "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n";
	d.meta_instance_id = "5a9fc181-957e-5c32-9e5a-2de5e9673531";
	d.meta_hostname = "testvm";
	fd = cloudinit_write_fd(&d, dir);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	/* the seed has no name (nothing in dir anyone could swap or link):
	 * the commands read it through this process's descriptor */
	out = run("ls -A %s", dir);
	CHECK_STR(out, "");
	free(out);
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), fd);
	out = run("isoinfo -d -i %s", path);
	CHECK(out && strstr(out, "Volume id: CIDATA"));
	CHECK(out && strstr(out, "Joliet with UCS level 3 found"));
	free(out);
	out = run("blkid -p -o value -s LABEL %s", path);
	CHECK(out && !strcmp(out, "cidata\n"));
	free(out);
	out = run("isoinfo -J -f -i %s | sort", path);
	CHECK_STR(out, "/meta-data\n/network-config\n/user-data\n");
	free(out);
	check_extract(path, "/user-data", d.user_data);
	check_extract(path, "/network-config", d.network_data);
	check_extract(path, "/meta-data",
		      "instance-id: \"5a9fc181-957e-5c32-9e5a-2de5e9673531\"\n"
		      "local-hostname: \"testvm\"\n");
	/* the plain ISO 9660 tree is there too */
	out = run("isoinfo -f -i %s | sort", path);
	CHECK_STR(out, "/META_DATA.;1\n/NETWORK_CONFIG.;1\n/USER_DATA.;1\n");
	free(out);
	close(fd);
}

static void test_config_drive(void)
{
	struct vm_disk d = {.name = "cd", .source = VM_DISK_CLOUDINIT_CONFIGDRIVE};
	char path[64], *out, big[5000];
	int fd;

	/* a user-data of more than one sector, and a quote to escape */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	d.user_data = big;
	d.meta_instance_id = "id-\"1\"";
	d.meta_uuid = "5a9fc181-957e-5c32-9e5a-2de5e9673531";
	d.meta_hostname = "my-host";
	d.meta_instance_type = "u1.small";
	fd = cloudinit_write_fd(&d, dir);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), fd);
	out = run("blkid -p -o value -s LABEL %s", path);
	CHECK(out && !strcmp(out, "config-2\n"));
	free(out);
	out = run("isoinfo -J -f -i %s | sort", path);
	CHECK_STR(out, "/openstack\n/openstack/latest\n/openstack/latest/meta_data.json\n"
		       "/openstack/latest/user_data\n");
	free(out);
	check_extract(path, "/openstack/latest/user_data", big);
	check_extract(path, "/openstack/latest/meta_data.json",
		      "{\"instance_type\":\"u1.small\",\"instance_id\":\"id-\\\"1\\\"\","
		      "\"hostname\":\"my-host\","
		      "\"uuid\":\"5a9fc181-957e-5c32-9e5a-2de5e9673531\"}\n");
	out = run("isoinfo -J -i %s -x /openstack/latest/meta_data.json | "
		  "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"instance_id\"])'",
		  path);
	CHECK(out && strstr(out, "id-\"1\"\n"));
	free(out);
	close(fd);
}

/* accessCredentials with noCloud / configDrive: the keys in the meta-data
 * (KubeVirt's public-keys / public_keys), escaped: a key file whose text
 * would end the YAML scalar or the JSON string stays one value */
static void test_public_keys(void)
{
	char *keys[] = {"ssh-ed25519 AAAAC3Nz a@b\n", "ssh-rsa AAAAB3 \"x\"\ninstance-id: evil"};
	struct vm_disk d = {.name = "c", .source = VM_DISK_CLOUDINIT_NOCLOUD, .user_data = "hi"};
	char path[64], *out;
	int fd;

	d.meta_instance_id = "iid";
	d.meta_public_keys = keys;
	d.n_meta_public_keys = 2;
	fd = cloudinit_write_fd(&d, dir);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), fd);
	check_extract(path, "/meta-data",
		      "instance-id: \"iid\"\n"
		      "public-keys:\n"
		      "  \"0\": \"ssh-ed25519 AAAAC3Nz a@b\\n\"\n"
		      "  \"1\": \"ssh-rsa AAAAB3 \\\"x\\\"\\ninstance-id: evil\"\n");
	out = run("isoinfo -J -i %s -x /meta-data | python3 -c 'import sys, yaml; "
		  "m = yaml.safe_load(sys.stdin); print(m[\"instance-id\"], "
		  "len(m[\"public-keys\"]))' 2>/dev/null",
		  path);
	if (out && *out)
		CHECK_STR(out, "iid 2\n");
	free(out);
	close(fd);
	d.source = VM_DISK_CLOUDINIT_CONFIGDRIVE;
	fd = cloudinit_write_fd(&d, dir);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), fd);
	out = run("isoinfo -J -i %s -x /openstack/latest/meta_data.json | python3 -c "
		  "'import json,sys; m = json.load(sys.stdin); print(m[\"instance_id\"], "
		  "m[\"public_keys\"][\"1\"].count(\"\\n\"), sorted(m[\"public_keys\"]))'",
		  path);
	CHECK_STR(out, "iid 1 ['0', '1']\n");
	free(out);
	close(fd);
}

static void test_reproducible_and_bad_input(void)
{
	struct vm_disk d = {.name = "c", .source = VM_DISK_CLOUDINIT_NOCLOUD, .user_data = "hi"};
	struct iso9660_file clash[] = {{"a", "x", 1}, {"a/b", "y", 1}};
	uint8_t *a = NULL, *b = NULL;
	size_t la = 0, lb = 0;

	CHECK(cloudinit_build(&d, &a, &la) == 0);
	CHECK(cloudinit_build(&d, &b, &lb) == 0);
	CHECK(la == lb && la % 2048 == 0 && a && b && !memcmp(a, b, la));
	/* the root record in the primary descriptor: no stray bytes in its
	 * extended-attribute, file-unit-size and gap fields */
	CHECK(a && a[16 * 2048 + 156] == 34 && a[16 * 2048 + 157] == 0 &&
	      a[16 * 2048 + 156 + 26] == 0 && a[16 * 2048 + 156 + 27] == 0);
	free(a);
	free(b);
	CHECK(iso9660_build("x", clash, 2, &a, &la) < 0);
	d.source = VM_DISK_HOSTDISK;
	CHECK(cloudinit_build(&d, &a, &la) < 0);
}

int main(void)
{
	if (system("isoinfo -version >/dev/null 2>&1 && blkid -V >/dev/null 2>&1")) {
		printf("skip: isoinfo or blkid not installed\n");
		return 77;
	}
	snprintf(dir, sizeof(dir), "/tmp/vmlet-ci.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	TEST_RUN(test_nocloud);
	TEST_RUN(test_config_drive);
	TEST_RUN(test_public_keys);
	TEST_RUN(test_reproducible_and_bad_input);
	rmdir(dir);
	return test_summary();
}
