/* SPDX-License-Identifier: MIT */
/*
 * kvm_diag.c - why the KVM device cannot be opened (see kvm_diag.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/kvm_diag.h"

#define KD_KMSG_MAX  (1u << 20) /* the kernel log read, at most */
#define KD_SMALL_MAX (64u << 10)

struct kd_host {
	bool flags_read, svm, vmx, hypervisor;
	bool misc_kvm;	 /* a KVM driver registered the device */
	bool pvm;	 /* kvm-pvm is loaded */
	bool pvm_guest;	 /* the log: this kernel is itself a kvm-pvm guest */
	bool bios_off;	 /* the log: virtualization disabled by the firmware */
	bool kvm_vendor; /* kvm_amd or kvm_intel (as the CPU has) is loaded */
	char devnum[24]; /* "10 232" (checked digits), or "" */
};

static void kd_path(char *buf, size_t size, const char *root, const char *rel)
{
	snprintf(buf, size, "%s/%s", root, rel[0] == '/' ? rel + 1 : rel);
}

/* Up to size-1 bytes of ROOT/REL, NUL-terminated (NULs inside replaced);
 * its length, or -1. A character device (/dev/kmsg) is read record by
 * record without blocking. */
static long kd_read(const char *root, const char *rel, char *buf, size_t size)
{
	char path[512];
	size_t len = 0, i;
	ssize_t n;
	int fd;

	kd_path(path, sizeof(path), root, rel);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && (errno == EINTR || errno == EPIPE)) /* EPIPE: kmsg overwritten */
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	for (i = 0; i < len; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[len] = '\0';
	return (long)len;
}

static bool kd_exists(const char *root, const char *rel)
{
	char path[512];
	struct stat st;

	kd_path(path, sizeof(path), root, rel);
	return stat(path, &st) == 0;
}

/* Module NAME loaded or built in: /sys/module/NAME, or a line of
 * /proc/modules starting with "NAME ". */
static bool kd_module(const char *root, const char *name, const char *modules)
{
	char rel[96];
	size_t n = strlen(name);
	const char *p;

	snprintf(rel, sizeof(rel), "sys/module/%s", name);
	if (kd_exists(root, rel))
		return true;
	for (p = modules; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, n) && p[n] == ' ')
			return true;
	return false;
}

/* the words svm, vmx, hypervisor on the first "flags" line of cpuinfo */
static void kd_cpu_flags(const char *cpuinfo, struct kd_host *h)
{
	const char *p = cpuinfo, *end, *w;
	size_t n;

	while (p && strncmp(p, "flags", 5)) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (!p || !(p = strchr(p, ':')))
		return;
	end = strchr(p, '\n');
	if (!end)
		end = p + strlen(p);
	h->flags_read = true;
	for (w = p + 1; w < end; w += n) {
		while (w < end && isspace((unsigned char)*w))
			w++;
		for (n = 0; w + n < end && !isspace((unsigned char)w[n]);)
			n++;
		h->svm |= n == 3 && !strncmp(w, "svm", 3);
		h->vmx |= n == 3 && !strncmp(w, "vmx", 3);
		h->hypervisor |= n == 10 && !strncmp(w, "hypervisor", 10);
	}
}

/* "MAJOR:MINOR" of /sys/class/misc/kvm/dev as "MAJOR MINOR", if it is that */
static void kd_devnum(const char *root, struct kd_host *h)
{
	char buf[32];
	unsigned int maj, min;
	char tail;

	if (kd_read(root, "sys/class/misc/kvm/dev", buf, sizeof(buf)) <= 0)
		return;
	if (sscanf(buf, "%u:%u%c", &maj, &min, &tail) >= 2 && maj < 4096 && min < (1u << 20))
		snprintf(h->devnum, sizeof(h->devnum), "%u %u", maj, min);
}

static void kd_survey(const char *root, struct kd_host *h)
{
	char *buf = malloc(KD_KMSG_MAX);

	memset(h, 0, sizeof(*h));
	h->misc_kvm = kd_exists(root, "sys/class/misc/kvm");
	kd_devnum(root, h);
	if (!buf)
		return;
	if (kd_read(root, "proc/cpuinfo", buf, KD_SMALL_MAX) > 0)
		kd_cpu_flags(buf, h);
	if (kd_read(root, "proc/modules", buf, KD_SMALL_MAX) < 0)
		buf[0] = '\0';
	h->pvm = kd_module(root, "kvm_pvm", buf);
	h->kvm_vendor = (h->svm && kd_module(root, "kvm_amd", buf)) ||
			(h->vmx && kd_module(root, "kvm_intel", buf));
	if (kd_read(root, "dev/kmsg", buf, KD_KMSG_MAX) > 0) {
		h->pvm_guest = strcasestr(buf, "itself a kvm-pvm guest") != NULL;
		h->bios_off = strcasestr(buf, "disabled by bios") || strcasestr(buf, "(by bios)");
	}
	free(buf);
}

/* the name of group GID in ROOT/etc/group, if it is a plain one; else GID */
static void kd_group(const char *root, unsigned int gid, char *name, size_t size)
{
	char *buf = malloc(KD_SMALL_MAX), *line, *save = NULL, *c1, *c2, *endp;
	size_t i, n;

	snprintf(name, size, "%u", gid);
	if (!buf || kd_read(root, "etc/group", buf, KD_SMALL_MAX) <= 0)
		goto out;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		c1 = strchr(line, ':');
		c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || !isdigit((unsigned char)c2[1]) || strtoul(c2 + 1, &endp, 10) != gid ||
		    (*endp && *endp != ':'))
			continue;
		n = (size_t)(c1 - line);
		for (i = 0; i < n; i++)
			if (!isalnum((unsigned char)line[i]) && !strchr("_-.", line[i]))
				goto out;
		if (n && n < size)
			snprintf(name, size, "%.*s", (int)n, line);
		goto out;
	}
out:
	free(buf);
}

static void kd_permission(const char *root, const char *dev, int err, struct kvm_diag *d)
{
	char path[512], group[40];
	struct stat st;

	d->cause = KVM_DIAG_NO_PERMISSION;
	kd_path(path, sizeof(path), root, dev);
	if (err == EPERM || stat(path, &st)) {
		snprintf(d->what, sizeof(d->what), "opening %s is not permitted", dev);
		snprintf(d->todo, sizeof(d->todo),
			 "in a container, allow the device (e.g. docker/podman run --device %s); "
			 "otherwise a security module (SELinux, AppArmor) denies it",
			 dev);
		return;
	}
	kd_group(root, st.st_gid, group, sizeof(group));
	snprintf(d->what, sizeof(d->what), "no permission to open %s (mode %04o, group %s)", dev,
		 (unsigned int)st.st_mode & 07777, group);
	if ((st.st_mode & 060) != 060)
		snprintf(d->todo, sizeof(d->todo),
			 "give the group read and write (as root: chgrp kvm %s && chmod 0660 %s; "
			 "udev's rule for kvm does so at boot), then add your user to that group",
			 dev, dev);
	else
		snprintf(d->todo, sizeof(d->todo),
			 "add your user to group %s (sudo usermod -aG %s \"$USER\") and log in "
			 "again, or run vmlet as root",
			 group, group);
}

/* open() said the node is missing or has no driver behind it */
static void kd_absent(const struct kd_host *h, const char *dev, int err, struct kvm_diag *d)
{
	const char *mod = h->svm ? "kvm_amd" : "kvm_intel", *ext = h->svm ? "SVM (AMD-V)" : "VT-x";

	if (h->misc_kvm && err == ENOENT) {
		d->cause = KVM_DIAG_NO_NODE;
		snprintf(d->what, sizeof(d->what),
			 "a KVM driver is loaded%s but the device node %s does not exist",
			 h->pvm ? " (kvm-pvm)" : "", dev);
		snprintf(d->todo, sizeof(d->todo),
			 "create it as root: mknod -m 0660 %s c %s && chgrp kvm %s (udev does this "
			 "at boot); in a container, pass the device in (docker/podman run --device "
			 "/dev/kvm)",
			 dev, h->devnum[0] ? h->devnum : "10 232", dev);
	} else if ((h->pvm_guest || (h->pvm && !h->misc_kvm)) && !h->svm && !h->vmx) {
		d->cause = KVM_DIAG_PVM_GUEST;
		snprintf(d->what, sizeof(d->what),
			 "this kernel is itself a kvm-pvm guest: kvm-pvm does not bind in it and "
			 "the CPU has no svm/vmx, so this machine has no KVM");
		snprintf(d->todo, sizeof(d->todo),
			 "run vmlet on a host with hardware virtualization, or in an emulated host "
			 "with a real KVM (vmlet's tests/nested: `make run` boots the example so, "
			 "minutes of CPU)");
	} else if (!h->flags_read) {
		return;
	} else if ((h->svm || h->vmx) && h->bios_off) {
		d->cause = KVM_DIAG_FW_DISABLED;
		snprintf(d->what, sizeof(d->what),
			 "the CPU has %s but the firmware turned it off (kernel log: disabled by "
			 "BIOS)",
			 ext);
		snprintf(d->todo, sizeof(d->todo),
			 "enable %s in the firmware (BIOS/UEFI) setup, then modprobe %s", ext, mod);
	} else if ((h->svm || h->vmx) && !h->kvm_vendor) {
		d->cause = KVM_DIAG_NO_MODULE;
		snprintf(d->what, sizeof(d->what), "the CPU has %s but the module %s is not loaded",
			 ext, mod);
		snprintf(d->todo, sizeof(d->todo),
			 "as root: modprobe %s (at every boot: echo %s > "
			 "/etc/modules-load.d/kvm.conf); if it fails, dmesg says why",
			 mod, mod);
	} else if (h->svm || h->vmx) {
		snprintf(d->what, sizeof(d->what),
			 "%s is loaded but registered no KVM device (its start failed)", mod);
		snprintf(d->todo, sizeof(d->todo), "dmesg | grep -i kvm says why");
	} else if (h->hypervisor) {
		d->cause = KVM_DIAG_NO_NESTED;
		snprintf(d->what, sizeof(d->what),
			 "this machine is a virtual machine and its CPU has no svm/vmx flag: its "
			 "hypervisor offers no nested virtualization");
		snprintf(
		    d->todo, sizeof(d->todo),
		    "enable nested virtualization for this VM on its host (a CPU model with "
		    "svm/vmx; kvm_amd/kvm_intel nested=1 there), or boot inside an emulated "
		    "host with a real KVM: `make run` does so with the example (tests/nested)");
	} else {
		d->cause = KVM_DIAG_NO_HW;
		snprintf(d->what, sizeof(d->what),
			 "the CPU reports no hardware virtualization (no svm/vmx flag)");
		snprintf(d->todo, sizeof(d->todo),
			 "enable SVM (AMD-V) or VT-x in the firmware (BIOS/UEFI) setup; a CPU "
			 "without it cannot run KVM");
	}
}

void kvm_diag_explain(const char *root, const char *dev, int err, struct kvm_diag *d)
{
	struct kd_host h;

	memset(d, 0, sizeof(*d));
	snprintf(d->what, sizeof(d->what), "cannot open %s: %s", dev, strerror(err));
	snprintf(d->todo, sizeof(d->todo),
		 "check that KVM works on this host (ls -l %s; dmesg | grep -i kvm)", dev);
	if (err == EACCES || err == EPERM) {
		kd_permission(root, dev, err, d);
		return;
	}
	if (err != ENOENT && err != ENODEV && err != ENXIO)
		return;
	kd_survey(root, &h);
	kd_absent(&h, dev, err, d);
}

bool kvm_diag_host_pvm(const char *root)
{
	char *buf = malloc(KD_SMALL_MAX);
	bool pvm;

	if (buf && kd_read(root, "proc/modules", buf, KD_SMALL_MAX) < 0)
		buf[0] = '\0';
	pvm = kd_module(root, "kvm_pvm", buf);
	free(buf);
	return pvm;
}

const char *kvm_diag_cause_name(enum kvm_diag_cause c)
{
	static const char *const names[KVM_DIAG_COUNT] = {
	    [KVM_DIAG_UNKNOWN] = "unknown",	    [KVM_DIAG_NO_PERMISSION] = "no-permission",
	    [KVM_DIAG_NO_NODE] = "no-node",	    [KVM_DIAG_PVM_GUEST] = "pvm-guest",
	    [KVM_DIAG_FW_DISABLED] = "fw-disabled", [KVM_DIAG_NO_MODULE] = "no-module",
	    [KVM_DIAG_NO_NESTED] = "no-nested",	    [KVM_DIAG_NO_HW] = "no-hw",
	};

	return (unsigned int)c < KVM_DIAG_COUNT ? names[c] : "unknown";
}
