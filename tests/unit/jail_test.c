/* SPDX-License-Identifier: MIT */
/*
 * --jail's resource limits (vmm/sandbox/jail.h): cpu.max from vCPUs or
 * resources.limits.cpu (resolved from a manifest), memory.max from guest
 * memory plus overhead, and the cgroup leaf dance against a directory that
 * stands in for a cgroup2 one (files instead of kernel interface files):
 * leaf made, this process moved into it, controllers enabled only when
 * not already, limits written, all of it undone by leave.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spec/spec.h"
#include "tests/lib/test.h"
#include "vmm/sandbox/jail.h"
#include "vmm/util/log.h"
#include "vmm/vm_config.h"

static void test_limits_from_manifest(void)
{
	static const char *const yaml = "apiVersion: kubevirt.io/v1\n"
					"kind: VirtualMachine\n"
					"metadata: {name: j}\n"
					"spec:\n"
					"  runStrategy: Always\n"
					"  template:\n"
					"    spec:\n"
					"      domain:\n"
					"        cpu: {cores: 4}\n"
					"        memory: {guest: 1Gi}\n"
					"        resources:\n"
					"          limits: {cpu: 1500m}\n"
					"        devices: {}\n";
	struct spec_options so = {.manifest = yaml};
	struct jail_limits l;
	struct vm_config cfg;

	CHECK(spec_resolve_config(&so, &cfg) == 0);
	CHECK_EQ_U64(cfg.cpu_limit_millis, 1500);
	jail_limits(&cfg, &l);
	CHECK_EQ_U64(l.cpu_quota_us, 150000); /* 1.5 CPUs per 100 ms */
	CHECK_EQ_U64(l.memory_max, (1ull << 30) + JAIL_MEM_OVERHEAD + (1ull << 30) / 64);
	/* no limit: one CPU per vCPU */
	cfg.cpu_limit_millis = 0;
	jail_limits(&cfg, &l);
	CHECK_EQ_U64(l.cpu_quota_us, 4 * JAIL_CPU_PERIOD_US);
	/* a tiny limit is raised to the kernel's minimum quota */
	cfg.cpu_limit_millis = 1;
	jail_limits(&cfg, &l);
	CHECK_EQ_U64(l.cpu_quota_us, 1000);
	vm_config_release(&cfg);
}

static char *slurp(const char *dir, const char *name)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return test_read_file(path, NULL);
}

static void rm_files(const char *dir)
{
	static const char *const names[] = {"cgroup.procs", "cpu.max", "memory.max"};
	char path[700];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
}

static void test_cgroup_leaf(void)
{
	struct jail_limits l = {.cpu_quota_us = 200000, .memory_max = 123456789};
	char parent[] = "/tmp/vmlet-jail-test.XXXXXX", why[640] = "", pid[24], *s;
	struct jail_cgroup cg;
	struct stat st;

	CHECK(mkdtemp(parent) != NULL);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	CHECK(jail_cgroup_enter(&cg, parent, &l, why, sizeof(why)) == 0);
	CHECK(cg.active && cg.enabled_controllers);
	s = slurp(cg.leaf, "cgroup.procs");
	CHECK(s && !strcmp(s, pid)); /* moved into the leaf */
	free(s);
	s = slurp(parent, "cgroup.subtree_control");
	CHECK(s && !strcmp(s, "+cpu +memory"));
	free(s);
	s = slurp(cg.leaf, "cpu.max");
	CHECK(s && !strcmp(s, "200000 100000\n"));
	free(s);
	s = slurp(cg.leaf, "memory.max");
	CHECK(s && !strcmp(s, "123456789\n"));
	free(s);
	/* (a real cgroup's interface files go with rmdir; these do not) */
	rm_files(cg.leaf);
	jail_cgroup_leave(&cg);
	CHECK(stat(cg.leaf, &st) < 0 && errno == ENOENT);
	s = slurp(parent, "cgroup.procs");
	CHECK(s && !strcmp(s, pid)); /* moved back */
	free(s);
	s = slurp(parent, "cgroup.subtree_control");
	CHECK(s && !strcmp(s, "-cpu -memory")); /* what we enabled, disabled */
	free(s);

	/* controllers already handed down: left alone */
	{
		char path[700];
		FILE *f;

		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", parent);
		f = fopen(path, "w");
		CHECK(f && fputs("cpu memory\n", f) >= 0 && fclose(f) == 0);
	}
	CHECK(jail_cgroup_enter(&cg, parent, &l, why, sizeof(why)) == 0);
	CHECK(!cg.enabled_controllers);
	rm_files(cg.leaf);
	jail_cgroup_leave(&cg);
	rm_files(parent);
	{
		char path[700];

		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", parent);
		unlink(path);
	}
	CHECK(rmdir(parent) == 0);

	/* nowhere to make the leaf: an error that says why, nothing left */
	CHECK(jail_cgroup_enter(&cg, "/nonexistent/cgroup", &l, why, sizeof(why)) < 0);
	CHECK(strstr(why, "/nonexistent/cgroup") != NULL && !cg.active);
}

/* A link planted at a cgroup file's name (issue 28, finding 7): never
 * written through; the cgroup is refused and the link's target kept. */
static void test_cgroup_link_refused(void)
{
	struct jail_limits l = {.cpu_quota_us = 200000, .memory_max = 123456789};
	char parent[] = "/tmp/vmlet-jail-test.XXXXXX", why[640] = "", *s;
	struct jail_cgroup cg;

	CHECK(mkdtemp(parent) != NULL);
	CHECK(test_sh("cd %s && printf 'precious\\n' >victim && "
		      "ln -s victim cgroup.subtree_control",
		      parent) == 0);
	CHECK(jail_cgroup_enter(&cg, parent, &l, why, sizeof(why)) < 0);
	CHECK(!cg.active);
	s = slurp(parent, "victim");
	CHECK(s && !strcmp(s, "precious\n"));
	free(s);
	test_sh("rm -rf %s", parent);
}

int main(void)
{
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "jail-test", NULL);
	TEST_RUN(test_limits_from_manifest);
	TEST_RUN(test_cgroup_leaf);
	TEST_RUN(test_cgroup_link_refused);
	return test_summary();
}
