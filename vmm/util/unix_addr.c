// SPDX-License-Identifier: MIT
/*
 * unix_addr.c - a Unix socket's address from its path (unix_addr.h).
 */
#include <errno.h>
#include <string.h>

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
