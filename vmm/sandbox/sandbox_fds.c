/* SPDX-License-Identifier: MIT */
/*
 * sandbox_fds.c - the file descriptors a vCPU thread may read and write
 * (see sandbox_rules.h): everything vmlet holds open when the vCPU filter
 * is built is classified, and read/write is allowed on
 *
 *   - stdout and stderr (the console on stdout, log lines);
 *   - eventfds (kicks to I/O threads and the event loop, irqfds, the
 *     pause gate);
 *   - regular files opened for appending (the console file, the EFI
 *     variable store: records are only ever appended);
 *   - every number that is not open then (a control client attached to
 *     the console is accepted later);
 *
 * and nowhere else: not on a disk image or host block device, /dev/kvm or
 * a KVM fd, a tap, passt's stream or any other socket, a pipe. The allowed
 * numbers become aligned power-of-two blocks, one masked comparison each
 * (libseccomp takes one comparison per argument and rule).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/sandbox/sandbox_rules.h"

#define FD_SPACE (UINT64_C(1) << 31) /* fd numbers are ints */

/* May a vCPU thread read and write fd? */
static bool fd_for_vcpu(int dir, int fd)
{
	char name[16], link[64];
	struct stat st;
	ssize_t n;
	int fl;

	if (fd == STDOUT_FILENO || fd == STDERR_FILENO)
		return true;
	snprintf(name, sizeof(name), "%d", fd);
	n = readlinkat(dir, name, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = 0;
		if (!strcmp(link, "anon_inode:[eventfd]"))
			return true;
	}
	fl = fcntl(fd, F_GETFL);
	return fl >= 0 && (fl & O_APPEND) && !fstat(fd, &st) && S_ISREG(st.st_mode);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The open fds a vCPU may not use, sorted; *n of them. */
static int denied_fds(int **out, unsigned int *n)
{
	unsigned int cap = 64;
	int *fds = malloc(cap * sizeof(*fds)), dfd;
	struct dirent *de;
	DIR *d;

	*n = 0;
	d = opendir("/proc/self/fd");
	if (!fds || !d) {
		free(fds);
		if (d)
			closedir(d);
		return -ENOMEM;
	}
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd == dfd || fd_for_vcpu(dfd, fd))
			continue;
		if (*n == cap) {
			int *p = realloc(fds, 2 * cap * sizeof(*fds));

			if (!p) {
				closedir(d);
				free(fds);
				return -ENOMEM;
			}
			fds = p;
			cap *= 2;
		}
		fds[(*n)++] = fd;
	}
	closedir(d);
	qsort(fds, *n, sizeof(*fds), cmp_int);
	*out = fds;
	return 0;
}

/* Append rules allowing read and write on [lo, hi) as aligned blocks. */
static int add_range(struct sandbox_rule **rules, unsigned int *n, unsigned int *cap, uint64_t lo,
		     uint64_t hi)
{
	while (lo < hi) {
		uint64_t size = lo ? lo & -lo : FD_SPACE;

		while (lo + size > hi)
			size >>= 1;
		if (*n + 2 > *cap) {
			struct sandbox_rule *p = realloc(*rules, 2 * *cap * sizeof(**rules));

			if (!p)
				return -ENOMEM;
			*rules = p;
			*cap *= 2;
		}
		for (int i = 0; i < 2; i++)
			(*rules)[(*n)++] = (struct sandbox_rule){
			    .nr = i ? SCMP_SYS(write) : SCMP_SYS(read),
			    .arg = 0,
			    .op = SCMP_CMP_MASKED_EQ,
			    .a = ~(size - 1),
			    .b = lo,
			};
		lo += size;
	}
	return 0;
}

int sandbox_vcpu_fd_rules(struct sandbox_rule **out, unsigned int *n_out, int *denied_example)
{
	struct sandbox_rule *rules;
	unsigned int n = 0, cap = 64, nd, i;
	uint64_t next = 0;
	int *denied = NULL, err;

	*out = NULL;
	*n_out = 0;
	*denied_example = -1;
	err = denied_fds(&denied, &nd);
	if (err)
		return err;
	rules = malloc(cap * sizeof(*rules));
	err = rules ? 0 : -ENOMEM;
	for (i = 0; !err && i <= nd; i++) {
		uint64_t end = i < nd ? (uint64_t)denied[i] : FD_SPACE;

		err = add_range(&rules, &n, &cap, next, end);
		next = end + 1;
	}
	/* for the test hook: the first regular file or block device (a disk),
	 * else the first denied fd */
	for (i = 0; i < nd && *denied_example < 0; i++) {
		struct stat st;

		if (!fstat(denied[i], &st) && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
			*denied_example = denied[i];
	}
	if (*denied_example < 0 && nd)
		*denied_example = denied[0];
	free(denied);
	if (err) {
		free(rules);
		return err;
	}
	*out = rules;
	*n_out = n;
	return 0;
}
