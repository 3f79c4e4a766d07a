// SPDX-License-Identifier: MIT
/*
 * unix_addr.c - a Unix socket's address from its path (unix_addr.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/unix_addr.h"

int unix_addr_fill(struct sockaddr_un *sa, const char *path)
{
	size_t n = strlen(path);

	memset(sa, 0, sizeof(*sa));
	if (!n)
		return -EINVAL;
	if (n >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, n + 1);
	return 0;
}

/* 0 when nothing is at path (any more): a stale socket is removed */
static int clear_stale(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	return unlink(path) && errno != ENOENT ? -errno : 0;
}

int unix_listen(const char *path, int backlog, int flags, int *fd)
{
	struct sockaddr_un sa, tmp;
	char name[sizeof(sa.sun_path) + 4];
	const char *bound = path;
	mode_t old_mask;
	int s, ret;

	*fd = -1;
	ret = unix_addr_fill(&sa, path);
	if (!ret)
		ret = clear_stale(path);
	if (ret)
		return ret;
	/* the temporary name, where it fits and is free */
	if (snprintf(name, sizeof(name), "%s.new", path) < (int)sizeof(name) &&
	    !unix_addr_fill(&tmp, name) && !clear_stale(name))
		bound = name;
	else
		tmp = sa;
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
	if (s < 0)
		return -errno;
	old_mask = umask(0177);
	ret = bind(s, (struct sockaddr *)&tmp, sizeof(tmp)) ? -errno : 0;
	umask(old_mask);
	if (ret)
		goto fail_close;
	if (listen(s, backlog) || (bound != path && rename(bound, path))) {
		ret = -errno;
		unlink(bound);
		goto fail_close;
	}
	*fd = s;
	return 0;
fail_close:
	close(s);
	return ret;
}
