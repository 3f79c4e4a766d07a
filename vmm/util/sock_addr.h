/* SPDX-License-Identifier: MIT */
/*
 * sock_addr.h - a stream socket's address as a command line names it:
 * unix:PATH or tcp:HOST:PORT (a live migration's `vmlet run --incoming`
 * and `vmlet ctl SOCKET migrate`, docs/migration.md).
 *
 * HOST is a numeric IPv4 address (dotted decimal, inet_pton's rules) or
 * an IPv6 address in brackets (tcp:[::1]:4444); no name is resolved:
 * vmlet runs sandboxed, and a peer chosen by a resolver would be one more
 * thing to trust. No IPv6 zone (%IFACE). PORT is 1..65535 in decimal.
 */
#ifndef VMLET_SOCK_ADDR_H
#define VMLET_SOCK_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

/* What the address is for: a connect refuses the unspecified address
 * (0.0.0.0, [::]), which a listener takes for "every address". */
enum sock_addr_use { SOCK_ADDR_LISTEN, SOCK_ADDR_CONNECT };

struct sock_addr {
	int family; /* AF_UNIX, AF_INET or AF_INET6 */
	union {
		struct sockaddr sa;
		struct sockaddr_un un;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} u;
	socklen_t len;
};

/* Room for "tcp:[IPV6]:PORT" and its NUL. */
#define SOCK_ADDR_STRLEN (INET6_ADDRSTRLEN + 16)

/*
 * spec into *out. 0, or -EINVAL (-ENAMETOOLONG: a unix path too long)
 * with *out zeroed and why in err (errlen bytes, NUL-terminated): a
 * sentence the caller prefixes with its command and flag ("vmlet run:
 * --incoming 'SPEC': ..."). Prints nothing.
 */
int sock_addr_parse(const char *spec, enum sock_addr_use use, struct sock_addr *out, char *err,
		    size_t errlen);

/*
 * A bare host address (`vmlet run --incoming-from ADDR`: the one peer a
 * tcp: destination takes its source from) into *out, port 0: a numeric
 * IPv4 address, or an IPv6 one plain (::1) or in brackets ([::1]), the
 * same rules as tcp:HOST:PORT's HOST; not the unspecified address (no
 * peer has it). 0, or -EINVAL with *out zeroed and why in err, as
 * sock_addr_parse(). Prints nothing.
 */
int sock_addr_parse_host(const char *s, struct sock_addr *out, char *err, size_t errlen);

/* The host of an IPv4 or IPv6 socket address as IPv6, an IPv4 one as its
 * IPv4-mapped form (::ffff:A.B.C.D) into *out: 0, or -EAFNOSUPPORT for
 * any other family or a len too short for it (*out zeroed). */
int sock_addr_host6(const struct sockaddr *sa, socklen_t len, struct in6_addr *out);

/* Whether peer (an accepted connection's address, len bytes) has the
 * host of a (sock_addr_parse_host()), ports aside; an IPv4-mapped IPv6
 * address is the same host as its IPv4 form, on either side. False for
 * anything not IPv4 or IPv6. */
bool sock_addr_same_host(const struct sock_addr *a, const struct sockaddr *peer, socklen_t len);

/* An IPv4 or IPv6 socket address (an accepted peer's) as tcp:HOST:PORT,
 * tcp:[HOST]:PORT, or "unknown" for anything else, into buf (n bytes). */
void sock_addr_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t n);

/*
 * A TCP socket of a (AF_INET or AF_INET6) listening with backlog, in *fd
 * (SOCK_CLOEXEC, SO_REUSEADDR: a port a previous destination just left in
 * TIME_WAIT binds at once). 0 or -errno, *fd -1 then. Prints nothing.
 */
int sock_addr_listen_tcp(const struct sock_addr *a, int backlog, int *fd);

/* TCP_NOTSENT_LOWAT of a connected TCP socket (bytes): a blocking write
 * waits while more than this is queued unsent. A live migration's source
 * measures its bandwidth by its writes and must not pre-copy into a
 * send buffer the kernel grows to megabytes: what sits there unsent when
 * the guest pauses is downtime. 256 KiB halved the throughput of the
 * nested migrate scenario (one TCG CPU in L1); 1 MiB kept it. */
#define SOCK_ADDR_NOTSENT_LOWAT (1 << 20)

/*
 * A stream socket connected to a, in *fd: TCP within timeout_ms (a
 * non-blocking connect, then poll), then blocking with TCP_NODELAY and
 * SOCK_ADDR_NOTSENT_LOWAT; unix
 * at once (a blocking connect, as before TCP). SOCK_CLOEXEC. 0,
 * -ETIMEDOUT when a TCP peer did not answer in time, or -errno; *fd -1
 * then. Prints nothing.
 */
int sock_addr_connect(const struct sock_addr *a, int timeout_ms, int *fd);

#endif /* VMLET_SOCK_ADDR_H */
