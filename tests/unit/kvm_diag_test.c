/* SPDX-License-Identifier: MIT */
/*
 * kvm_diag (vmm/kvm_diag.h): every cause of an unusable KVM device, each
 * from a made-up host: a directory with the files vmlet reads under /
 * (proc/cpuinfo, proc/modules, sys/module/NAME, sys/class/misc/kvm/dev,
 * dev/kmsg as a plain file, etc/group, the device node as a plain file),
 * and hostile contents of those files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/kvm_diag.h"

#define FLAGS_AMD   "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep svm lahf_lm npt\n"
#define FLAGS_INTEL "flags\t\t: fpu vme de pse tsc msr pae vmx est tm2 ssse3\n"
#define FLAGS_VM    "flags\t\t: fpu vme de pse tsc msr pae sse2 hypervisor lahf_lm\n"
#define FLAGS_BARE  "flags\t\t: fpu vme de pse tsc msr pae sse2 lahf_lm\n"
#define CPUINFO(f)  "processor\t: 0\nvendor_id\t: AuthenticAMD\n" f "bugs\t\t: sysret_ss_attrs\n\n"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void fresh_root(void)
{
	if (root[0])
		test_sh("rm -rf '%s'", root);
	snprintf(root, sizeof(root), "/tmp/kvm_diag_test.XXXXXX");
	CHECK(mkdtemp(root) != NULL);
}

static enum kvm_diag_cause diag(int err, struct kvm_diag *d)
{
	kvm_diag_explain(root, "/dev/kvm", err, d);
	printf("    %s: %s; %s\n", kvm_diag_cause_name(d->cause), d->what, d->todo);
	return d->cause;
}

/* a KVM driver registered its device but there is no node (a container
 * without --device, a system without udev) */
static void test_no_node(void)
{
	struct kvm_diag d;

	fresh_root();
	put("proc/cpuinfo", CPUINFO(FLAGS_AMD));
	put("sys/module/kvm_amd/parameters/nested", "1\n");
	put("sys/class/misc/kvm/dev", "10:232\n");
	CHECK(diag(ENOENT, &d) == KVM_DIAG_NO_NODE);
	CHECK(!kvm_diag_host_pvm(root));
	CHECK(strstr(d.todo, "mknod -m 0660 /dev/kvm c 10 232") != NULL);
	CHECK(strstr(d.todo, "--device /dev/kvm") != NULL);
}

/* the host: a kernel that is itself a kvm-pvm guest; kvm-pvm is
 * loaded but does not bind, no svm/vmx */
static void test_pvm_guest(void)
{
	struct kvm_diag d;

	fresh_root();
	put("proc/cpuinfo", CPUINFO(FLAGS_VM));
	put("sys/module/kvm/parameters/halt_poll_ns", "0\n");
	put("proc/modules", "kvm_pvm 98304 0 - Live 0x0000000000000000\nkvm 1142784 1 kvm_pvm\n");
	put("dev/kmsg", "6,512,350000,-;kvm-pvm: this kernel is itself a kvm-pvm guest; not "
			"binding\n");
	CHECK(diag(ENOENT, &d) == KVM_DIAG_PVM_GUEST);
	CHECK(strstr(d.what, "itself a kvm-pvm guest") != NULL);
	CHECK(kvm_diag_host_pvm(root));
	CHECK(strstr(d.todo, "make run") != NULL);
	/* the kernel log unreadable (dmesg_restrict): the loaded module without a
	 * device says the same */
	unlink(strcat(strcpy((char[128]){0}, root), "/dev/kmsg"));
	CHECK(diag(ENOENT, &d) == KVM_DIAG_PVM_GUEST);
	/* and the log alone, the module seen in /sys/module */
	fresh_root();
	put("proc/cpuinfo", CPUINFO(FLAGS_VM));
	put("dev/kmsg", "kvm-pvm: this kernel is itself a kvm-pvm guest; not binding\n");
	CHECK(diag(ENODEV, &d) == KVM_DIAG_PVM_GUEST);
	CHECK(!kvm_diag_host_pvm(root));
	/* a kvm-pvm host whose /dev/kvm works (ours): kvm_pvm in /sys/module */
	put("sys/module/kvm_pvm/parameters/nested", "1\n");
	CHECK(kvm_diag_host_pvm(root));
}

static void test_no_module(void)
{
	struct kvm_diag d;

	fresh_root();
	put("proc/cpuinfo", CPUINFO(FLAGS_AMD));
	put("proc/modules", "kvm 1142784 0 - Live 0x0\n");
	CHECK(diag(ENOENT, &d) == KVM_DIAG_NO_MODULE);
	CHECK(strstr(d.todo, "modprobe kvm_amd") != NULL);
	fresh_root();
	put("proc/cpuinfo", CPUINFO(FLAGS_INTEL));
	CHECK(diag(ENOENT, &d) == KVM_DIAG_NO_MODULE);
	CHECK(strstr(d.todo, "modprobe kvm_intel") != NULL);
	CHECK(strstr(d.what, "VT-x") != NULL);
	/* loaded (in /proc/modules) but no device: not "not loaded" */
	put("proc/modules", "kvm_intel 458752 0 - Live 0x0\nkvm 1142784 1 kvm_intel\n");
	CHECK(diag(ENOENT, &d) == KVM_DIAG_UNKNOWN);
	CHECK(strstr(d.what, "registered no KVM device") != NULL);
	/* kvm_amd is not the module for an Intel CPU */
	put("proc/modules", "kvm_amd 458752 0 - Live 0x0\n");
	CHECK(diag(ENOENT, &d) == KVM_DIAG_NO_MODULE);
}

static void test_fw_disabled(void)
{
	struct kvm_diag d;

	fresh_root();
	put("proc/cpuinfo", CPUINFO(FLAGS_INTEL));
	put("dev/kmsg", "3,400,1000,-;kvm: disabled by bios\n");
	CHECK(diag(ENOENT, &d) == KVM_DIAG_FW_DISABLED);
	CHECK(strstr(d.todo, "enable VT-x in the firmware") != NULL);
	put("proc/cpuinfo", CPUINFO(FLAGS_AMD));
	put("dev/kmsg", "3,400,1000,-;kvm_amd: SVM disabled (by BIOS) in MSR_VM_CR\n");
	CHECK(diag(ENOENT, &d) == KVM_DIAG_FW_DISABLED);
	CHECK(strstr(d.todo, "modprobe kvm_amd") != NULL);
}

static void test_no_hardware(void)
{
	struct kvm_diag d;

	fresh_root();
	put("proc/cpuinfo", CPUINFO(FLAGS_VM));
	CHECK(diag(ENOENT, &d) == KVM_DIAG_NO_NESTED);
	CHECK(strstr(d.todo, "nested virtualization") != NULL);
	put("proc/cpuinfo", CPUINFO(FLAGS_BARE));
	CHECK(diag(ENOENT, &d) == KVM_DIAG_NO_HW);
	/* "svm" only as a part of another word is no svm */
	put("proc/cpuinfo", CPUINFO("flags\t\t: fpu svmx xsvm vmxe hypervisorx\n"));
	CHECK(diag(ENOENT, &d) == KVM_DIAG_NO_HW);
	/* only the first CPU's flags count; none at all: cannot tell */
	put("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu\nprocessor\t: 1\nflags\t\t: svm\n");
	CHECK(diag(ENOENT, &d) == KVM_DIAG_NO_HW);
	put("proc/cpuinfo", "processor\t: 0\n");
	CHECK(diag(ENOENT, &d) == KVM_DIAG_UNKNOWN);
	CHECK(strstr(d.what, "cannot open /dev/kvm") != NULL);
}

static void test_permission(void)
{
	char path[128], grp[128];
	struct kvm_diag d;
	unsigned int gid;

	fresh_root();
	put("dev/kvm", "");
	snprintf(path, sizeof(path), "%s/dev/kvm", root);
	/* the node's group: 4242 when this test may give it away (root), else ours */
	gid = chown(path, (uid_t)-1, 4242) == 0 ? 4242 : (unsigned int)getegid();
	snprintf(grp, sizeof(grp), "root:x:%u:\nkvm:x:%u:alice\n", gid + 1, gid);
	put("etc/group", grp);
	CHECK(chmod(path, 0660) == 0);
	CHECK(diag(EACCES, &d) == KVM_DIAG_NO_PERMISSION);
	CHECK(strstr(d.what, "mode 0660, group kvm") != NULL);
	CHECK(strstr(d.todo, "usermod -aG kvm") != NULL);
	CHECK(chmod(path, 0600) == 0);
	CHECK(diag(EACCES, &d) == KVM_DIAG_NO_PERMISSION);
	CHECK(strstr(d.todo, "chmod 0660 /dev/kvm") != NULL);
	/* a device cgroup (container) says EPERM */
	CHECK(diag(EPERM, &d) == KVM_DIAG_NO_PERMISSION);
	CHECK(strstr(d.todo, "--device /dev/kvm") != NULL);
}

/* what the files say is copied only as checked words and numbers */
static void test_hostile(void)
{
	char path[128], grp[160], *big;
	struct kvm_diag d;
	size_t i;

	fresh_root();
	put("dev/kvm", "");
	snprintf(path, sizeof(path), "%s/dev/kvm", root);
	CHECK(chmod(path, 0660) == 0);
	snprintf(grp, sizeof(grp), "$(reboot);x:%u:\n", (unsigned int)getegid());
	put("etc/group", grp);
	CHECK(diag(EACCES, &d) == KVM_DIAG_NO_PERMISSION);
	CHECK(strstr(d.todo, "reboot") == NULL && strstr(d.what, "reboot") == NULL);
	fresh_root();
	put("sys/class/misc/kvm/dev", "10:232 && reboot\n");
	CHECK(diag(ENOENT, &d) == KVM_DIAG_NO_NODE);
	CHECK(strstr(d.todo, "c 10 232 ") != NULL && strstr(d.todo, "reboot") == NULL);
	put("sys/class/misc/kvm/dev", "; reboot\n");
	CHECK(diag(ENOENT, &d) == KVM_DIAG_NO_NODE);
	CHECK(strstr(d.todo, "reboot") == NULL);
	/* a cpuinfo far longer than what is read, without a newline, with NULs */
	big = malloc(1 << 20);
	CHECK(big != NULL);
	if (!big)
		return;
	/* "flags : svm" repeated, without a newline: the first 64 KiB read */
	for (i = 0; i + 1 < (1 << 20); i++)
		big[i] = "flags : svm "[i % 12];
	big[i] = '\0';
	put("proc/cpuinfo", big);
	put("dev/kmsg", big);
	free(big);
	CHECK(diag(ENOENT, &d) == KVM_DIAG_NO_NODE);
	CHECK(strstr(d.what, "flags") == NULL);
	fresh_root();
	CHECK(diag(ENOENT, &d) == KVM_DIAG_UNKNOWN); /* nothing readable at all */
	CHECK(diag(EMFILE, &d) == KVM_DIAG_UNKNOWN);
	CHECK(strstr(d.what, strerror(EMFILE)) != NULL);
	CHECK_STR(kvm_diag_cause_name(KVM_DIAG_COUNT), "unknown");
	CHECK_STR(kvm_diag_cause_name(KVM_DIAG_PVM_GUEST), "pvm-guest");
}

int main(void)
{
	TEST_RUN(test_no_node);
	TEST_RUN(test_pvm_guest);
	TEST_RUN(test_no_module);
	TEST_RUN(test_fw_disabled);
	TEST_RUN(test_no_hardware);
	TEST_RUN(test_permission);
	TEST_RUN(test_hostile);
	if (root[0])
		test_sh("rm -rf '%s'", root);
	return test_summary();
}
