/* SPDX-License-Identifier: MIT */
/*
 * jail.c - --jail: limits, cgroup v2 leaf, rlimits and the pivot into the
 * jail directory (see jail.h).
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmm/sandbox/jail.h"
#include "vmm/util/log.h"
#include "vmm/vm_config.h"

void jail_limits(const struct vm_config *cfg, struct jail_limits *out)
{
	uint64_t vcpus = vm_config_vcpus(cfg);

	if (!vcpus)
		vcpus = 1;
	/* millicores * period / 1000 */
	out->cpu_quota_us = cfg->cpu_limit_millis
				? cfg->cpu_limit_millis * (JAIL_CPU_PERIOD_US / 1000)
				: vcpus * JAIL_CPU_PERIOD_US;
	if (out->cpu_quota_us < 1000) /* the kernel's minimum quota */
		out->cpu_quota_us = 1000;
	out->memory_max = cfg->memory_bytes + JAIL_MEM_OVERHEAD + cfg->memory_bytes / 64;
}

/* ---- cgroup v2 ----------------------------------------------------------- */

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[640];
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* cgroup interface files (plain files in tests): never through a link */
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n < 0)
		err = -errno;
	else if ((size_t)n != strlen(text))
		err = -EIO;
	close(fd);
	return err;
}

static int read_file(const char *dir, const char *name, char *buf, size_t len)
{
	char path[640];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* Is word one of the space-separated words of list? */
static bool has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ') && (p[wl] == 0 || p[wl] == ' ' || p[wl] == '\n'))
			return true;
		p += wl;
	}
	return false;
}

static int move_self(const char *dir)
{
	char pid[24];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	return write_file(dir, "cgroup.procs", pid);
}

int jail_cgroup_enter(struct jail_cgroup *cg, const char *parent, const struct jail_limits *l,
		      char *why, size_t why_len)
{
	char ctl[256] = "", val[64];
	int err;

	memset(cg, 0, sizeof(*cg));
	snprintf(cg->parent, sizeof(cg->parent), "%s", parent);
	snprintf(cg->leaf, sizeof(cg->leaf), "%s/vmlet-%d", parent, (int)getpid());
	if (mkdir(cg->leaf, 0755) < 0) {
		err = -errno;
		snprintf(why, why_len, "cannot create %s: %s", cg->leaf, strerror(-err));
		return err;
	}
	err = move_self(cg->leaf);
	if (err) {
		snprintf(why, why_len, "cannot move into %s: %s", cg->leaf, strerror(-err));
		rmdir(cg->leaf);
		return err;
	}
	cg->active = true;
	read_file(parent, "cgroup.subtree_control", ctl, sizeof(ctl));
	if (!has_word(ctl, "cpu") || !has_word(ctl, "memory")) {
		err = write_file(parent, "cgroup.subtree_control", "+cpu +memory");
		if (err) {
			snprintf(why, why_len,
				 "cannot enable cpu and memory below %s (%s): other processes "
				 "share it, or it is not delegated",
				 parent, strerror(-err));
			goto undo;
		}
		cg->enabled_controllers = true;
	}
	snprintf(val, sizeof(val), "%llu %d\n", (unsigned long long)l->cpu_quota_us,
		 JAIL_CPU_PERIOD_US);
	err = write_file(cg->leaf, "cpu.max", val);
	if (!err) {
		snprintf(val, sizeof(val), "%llu\n", (unsigned long long)l->memory_max);
		err = write_file(cg->leaf, "memory.max", val);
	}
	if (err) {
		snprintf(why, why_len, "cannot set the limits in %s: %s", cg->leaf, strerror(-err));
		goto undo;
	}
	return 0;
undo:
	jail_cgroup_leave(cg);
	return err;
}

void jail_cgroup_leave(struct jail_cgroup *cg)
{
	if (!cg->active)
		return;
	cg->active = false;
	/* a process may not sit in a cgroup that hands controllers down */
	if (cg->enabled_controllers)
		write_file(cg->parent, "cgroup.subtree_control", "-cpu -memory");
	if (move_self(cg->parent) || rmdir(cg->leaf))
		log_warn("jail: cgroup %s left behind: %s", cg->leaf, strerror(errno));
}

int jail_cgroup_find(char *dir, size_t len, char *why, size_t why_len)
{
	char line[512] = "", ctl[256] = "";
	struct statfs fs;
	FILE *f;

	if (statfs("/sys/fs/cgroup", &fs) < 0 || fs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(why, why_len, "/sys/fs/cgroup is not a cgroup v2 (unified) mount");
		return -ENOTSUP;
	}
	f = fopen("/proc/self/cgroup", "re");
	if (!f) {
		snprintf(why, why_len, "cannot read /proc/self/cgroup");
		return -errno;
	}
	while (fgets(line, sizeof(line), f) && strncmp(line, "0::", 3))
		;
	fclose(f);
	if (strncmp(line, "0::", 3)) {
		snprintf(why, why_len, "no cgroup v2 entry in /proc/self/cgroup");
		return -ENOTSUP;
	}
	line[strcspn(line, "\n")] = 0;
	snprintf(dir, len, "/sys/fs/cgroup%s", strcmp(line + 3, "/") ? line + 3 : "");
	if (read_file(dir, "cgroup.controllers", ctl, sizeof(ctl)) || !has_word(ctl, "cpu") ||
	    !has_word(ctl, "memory")) {
		snprintf(why, why_len, "%s does not offer the cpu and memory controllers", dir);
		return -ENOTSUP;
	}
	if (access(dir, W_OK) < 0) {
		snprintf(why, why_len, "%s is not writable", dir);
		return -EACCES;
	}
	return 0;
}

void jail_setup_limits(struct jail_cgroup *cg, const struct vm_config *cfg)
{
	struct jail_limits l;
	char dir[512], why[640];

	memset(cg, 0, sizeof(*cg));
	jail_limits(cfg, &l);
	if (jail_cgroup_find(dir, sizeof(dir), why, sizeof(why)) ||
	    jail_cgroup_enter(cg, dir, &l, why, sizeof(why))) {
		log_warn("jail: no cgroup limits: %s", why);
		return;
	}
	log_info("jail: cgroup %s: cpu.max %llu %d, memory.max %llu", cg->leaf,
		 (unsigned long long)l.cpu_quota_us, JAIL_CPU_PERIOD_US,
		 (unsigned long long)l.memory_max);
}

/* ---- the worker ---------------------------------------------------------- */

static int jail_rlimits(void)
{
	struct rlimit core = {0, 0}, nofile;

	if (setrlimit(RLIMIT_CORE, &core) < 0)
		return error_errno(-errno, "jail: RLIMIT_CORE");
	if (getrlimit(RLIMIT_NOFILE, &nofile) < 0)
		return error_errno(-errno, "jail: RLIMIT_NOFILE");
	if (nofile.rlim_max > JAIL_NOFILE)
		nofile.rlim_max = JAIL_NOFILE;
	if (nofile.rlim_cur > nofile.rlim_max)
		nofile.rlim_cur = nofile.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
		return error_errno(-errno, "jail: RLIMIT_NOFILE");
	return 0;
}

int jail_enter(const char *dir)
{
	int err;

	/* Only the init of the namespaces the lifecycle made for this run:
	 * anywhere else the mount changes below would reach the host's
	 * mount namespace. */
	if (getpid() != 1)
		return error_errno(-EPERM, "jail: not in the run's own namespaces");
	err = jail_rlimits();
	if (err)
		return err;
	/* A network namespace of its own, empty (not even lo up): abstract
	 * unix sockets (systemd's, container runtimes') are per network
	 * namespace, so none of the host's is reachable. Only now, not at
	 * clone: taps are created in the namespace that opens /dev/net/tun,
	 * and passt's supervisor was forked in setup; the sockets and fds
	 * opened so far keep the host's namespace. */
	if (unshare(CLONE_NEWNET) < 0)
		return error_errno(-errno, "jail: new network namespace");
	/* nothing we mount from here on reaches the host's namespace */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return error_errno(-errno, "jail: making mounts private");
	/* the new root must be a mount point: bind it onto itself, then
	 * make it read-only, nosuid, nodev, noexec */
	if (mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) < 0)
		return error_errno(-errno, "jail: bind-mounting %s", dir);
	if (mount(NULL, dir, NULL,
		  MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return error_errno(-errno, "jail: remounting %s read-only", dir);
	/* pivot_root(".", "."): the old root ends up stacked on the new
	 * one, and is then detached */
	if (chdir(dir) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return error_errno(-errno, "jail: pivot_root into %s", dir);
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return error_errno(-errno, "jail: detaching the host's tree");
	log_info("jail: confined to %s (new mount, PID, IPC and network namespaces)", dir);
	return 0;
}
