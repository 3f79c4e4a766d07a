// SPDX-License-Identifier: MIT
/*
 * sandbox_compile.c - one thread role's seccomp filter (sandbox_rules.h):
 * the allowlists of sandbox_rules.c, and for the vCPU the read/write rules
 * of the fds open now (sandbox_fds.c), through libseccomp into raw BPF
 * that sandbox.c installs with one seccomp(2) call.
 */
#include <errno.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/sandbox/sandbox.h"
#include "vmm/sandbox/sandbox_rules.h"
#include "vmm/util/log.h"

static int add_ruleset(scmp_filter_ctx ctx, const struct sandbox_ruleset *set, unsigned int *count)
{
	unsigned int i;

	for (i = 0; i < set->n; i++) {
		const struct sandbox_rule *r = &set->rules[i];
		uint32_t action = r->err ? SCMP_ACT_ERRNO(r->err) : SCMP_ACT_ALLOW;
		struct scmp_arg_cmp cmp = {
		    .arg = (unsigned int)r->arg,
		    .op = r->op,
		    .datum_a = r->a == SANDBOX_DATUM_PID ? (uint64_t)getpid() : r->a,
		    .datum_b = r->b,
		};
		int err;

		if (r->arg < 0)
			err = seccomp_rule_add(ctx, action, r->nr, 0);
		else
			err = seccomp_rule_add(ctx, action, r->nr, 1, cmp);
		if (err && err != -EEXIST) {
			char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, r->nr);

			error_errno(err, "sandbox: %s rule for %s", set->name, name ? name : "?");
			free(name);
			return err;
		}
		(*count)++;
	}
	return 0;
}

/* Export ctx's BPF through a memfd into a malloc'd sock_fprog. */
static int export_bpf(scmp_filter_ctx ctx, struct sock_fprog *prog)
{
	struct sock_filter *buf = NULL;
	struct stat st;
	int fd, err;

	fd = memfd_create("vmlet-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return error_errno(-errno, "sandbox: memfd_create");
	err = seccomp_export_bpf(ctx, fd);
	if (err) {
		error_errno(err, "sandbox: seccomp_export_bpf");
		goto out;
	}
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size % sizeof(*buf) ||
	    st.st_size / sizeof(*buf) > BPF_MAXINSNS) {
		err = error_errno(-EINVAL, "sandbox: bad BPF program size");
		goto out;
	}
	buf = malloc(st.st_size);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	if (pread(fd, buf, st.st_size, 0) != st.st_size) {
		err = error_errno(-EIO, "sandbox: reading the BPF program");
		free(buf);
		goto out;
	}
	prog->filter = buf;
	prog->len = (unsigned short)(st.st_size / sizeof(*buf));
	err = 0;
out:
	close(fd);
	return err;
}

/* The vCPU's read/write rules for the fds open now (sandbox_fds.c). */
static int add_vcpu_fd_rules(scmp_filter_ctx ctx, unsigned int *count)
{
	struct sandbox_ruleset set = {.name = "vcpu-fds"};
	struct sandbox_rule *rules = NULL;
	int err;

	err = sandbox_vcpu_fd_rules(&rules, &set.n, &sandbox_test_denied_fd);
	if (err)
		return error_errno(err, "sandbox: the vCPU's file descriptors");
	set.rules = rules;
	err = add_ruleset(ctx, &set, count);
	free(rules);
	return err;
}

int sandbox_compile(enum thread_role role, const struct sandbox_opts *o, struct sock_fprog *prog,
		    unsigned int *n_rules)
{
	uint32_t def = o->seccomp == SANDBOX_SECCOMP_LOG ? SCMP_ACT_LOG : SCMP_ACT_KILL_PROCESS;
	scmp_filter_ctx ctx;
	unsigned int count = 0;
	int err, r;

	ctx = seccomp_init(def);
	if (!ctx)
		return error_errno(-ENOMEM, "sandbox: seccomp_init");
	/* We set no_new_privs ourselves and load the program ourselves. */
	err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (!err)
		err = add_ruleset(ctx, &sandbox_rules_common, &count);
	if (!err)
		err = add_ruleset(ctx, &sandbox_rules_role[role], &count);
	if (!err && role == THREAD_MAIN && o->late_roles) {
		err = add_ruleset(ctx, &sandbox_rules_thread_start, &count);
		for (r = 1; !err && r < THREAD_ROLE_COUNT; r++)
			if (o->late_roles & SANDBOX_ROLE_BIT(r))
				err = add_ruleset(ctx, &sandbox_rules_role[r], &count);
	}
	if (!err)
		err = add_ruleset(ctx, &sandbox_rules_sanitizer, &count);
	if (!err && role == THREAD_VCPU)
		err = add_vcpu_fd_rules(ctx, &count);
	if (!err)
		err = export_bpf(ctx, prog);
	seccomp_release(ctx);
	*n_rules = count;
	return err;
}
