/* SPDX-License-Identifier: MIT */
/*
 * unix_addr.h - the address of a Unix socket named by a path (the control
 * socket, channels, vsock, the agent, the metrics helper, migration).
 */
#ifndef VMLET_UNIX_ADDR_H
#define VMLET_UNIX_ADDR_H

#include <sys/socket.h>
#include <sys/un.h>

/*
 * Fill *sa (zeroed, AF_UNIX) with path, NUL-terminated. -ENAMETOOLONG when
 * path does not fit sun_path with its NUL (it is never cut short: a cut
 * name could be another socket's), -EINVAL when it is empty (bind() would
 * autobind an abstract name); *sa is then zeroed. Prints nothing.
 */
int unix_addr_fill(struct sockaddr_un *sa, const char *path);

#endif /* VMLET_UNIX_ADDR_H */
