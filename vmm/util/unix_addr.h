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

/*
 * A listening Unix socket named path, mode 0600 from the start, in *fd
 * (SOCK_CLOEXEC, plus flags: 0 or SOCK_NONBLOCK). A stale socket at path is
 * replaced; anything else there (a file, a link) is left alone and refused
 * with -EEXIST: nothing is followed. The name appears only once the socket
 * listens (it is bound as "path.new" and renamed), so a client that waits
 * for the file and then connects is never refused; a path too long for the
 * extra four bytes, or a "path.new" that is not a stale socket, is bound
 * directly instead. On failure nothing is left at either name and *fd is
 * -1. Prints nothing. The process-wide umask is changed around bind(): call
 * it while no other thread creates files.
 */
int unix_listen(const char *path, int backlog, int flags, int *fd);

#endif /* VMLET_UNIX_ADDR_H */
