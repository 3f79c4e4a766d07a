// SPDX-License-Identifier: MIT
/*
 * sock_addr.c - unix:PATH and tcp:HOST:PORT (sock_addr.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmm/util/sock_addr.h"
#include "vmm/util/unix_addr.h"

static int __attribute__((format(printf, 4, 5)))
why(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static int parse_unix(const char *path, struct sock_addr *out, char *err, size_t errlen)
{
	int ret = unix_addr_fill(&out->u.un, path);

	if (ret == -ENAMETOOLONG)
		return why(err, errlen, ret, "the path is longer than %zu bytes",
			   sizeof(out->u.un.sun_path) - 1);
	if (ret)
		return why(err, errlen, ret, "want unix:PATH, with a path");
	out->family = AF_UNIX;
	out->len = sizeof(out->u.un);
	return 0;
}

/* 1..65535 in decimal digits, nothing else: 0 and *port, or -EINVAL */
static int parse_port(const char *s, in_port_t *port)
{
	unsigned long v = 0;
	size_t n = strlen(s);

	if (!n || n > 5 || strspn(s, "0123456789") != n)
		return -EINVAL;
	for (; *s; s++)
		v = v * 10 + (unsigned long)(*s - '0');
	if (v < 1 || v > 65535)
		return -EINVAL;
	*port = htons((in_port_t)v);
	return 0;
}

/* HOST (n bytes at host, brackets gone) into out as IPv6 (v6) or IPv4. */
static int parse_host(const char *host, size_t n, bool v6, struct sock_addr *out, char *err,
		      size_t errlen)
{
	char h[INET6_ADDRSTRLEN + 1];

	if (n >= sizeof(h))
		return why(err, errlen, -EINVAL, "'%.*s...' is not a numeric %s address",
			   (int)(sizeof(h) - 1), host, v6 ? "IPv6" : "IPv4");
	memcpy(h, host, n);
	h[n] = 0;
	if (v6 && strchr(h, '%'))
		return why(err, errlen, -EINVAL,
			   "'%s': an IPv6 zone (%%IFACE) is not supported: give a global address",
			   h);
	if (v6 && inet_pton(AF_INET6, h, &out->u.in6.sin6_addr) != 1)
		return why(err, errlen, -EINVAL, "'%s' is not a numeric IPv6 address", h);
	if (!v6 && inet_pton(AF_INET, h, &out->u.in.sin_addr) != 1)
		return why(err, errlen, -EINVAL,
			   "'%s' is not a numeric IPv4 address, nor an IPv6 one in brackets "
			   "([ADDRESS]): vmlet resolves no host names",
			   h);
	out->family = v6 ? AF_INET6 : AF_INET;
	return 0;
}

static int parse_tcp(const char *s, enum sock_addr_use use, struct sock_addr *out, char *err,
		     size_t errlen)
{
	const char *colon = strrchr(s, ':'), *host = s, *end;
	in_port_t port;
	bool v6 = s[0] == '[';
	int ret;

	if (v6) { /* [IPV6]:PORT: the port after the first ']' */
		end = strchr(s, ']');
		if (!end || end[1] != ':')
			return why(err, errlen, -EINVAL, "want tcp:[IPV6]:PORT");
		host = s + 1;
		colon = end + 1;
	} else if (!colon) {
		return why(err, errlen, -EINVAL, "want tcp:HOST:PORT");
	} else if (memchr(s, ':', (size_t)(colon - s))) {
		return why(err, errlen, -EINVAL,
			   "an IPv6 address goes in brackets: tcp:[ADDRESS]:PORT");
	} else {
		end = colon;
	}
	if (parse_port(colon + 1, &port))
		return why(err, errlen, -EINVAL, "the port '%.16s' is not a number from 1 to 65535",
			   colon + 1);
	if (end == host)
		return why(err, errlen, -EINVAL, "%s",
			   use == SOCK_ADDR_LISTEN
			       ? "no host: give the address to listen on (0.0.0.0 or [::] for "
				 "all of this host's)"
			       : "no host: give the destination's address");
	ret = parse_host(host, (size_t)(end - host), v6, out, err, errlen);
	if (ret)
		return ret;
	if (use == SOCK_ADDR_CONNECT && (v6 ? IN6_IS_ADDR_UNSPECIFIED(&out->u.in6.sin6_addr)
					    : out->u.in.sin_addr.s_addr == htonl(INADDR_ANY)))
		return why(err, errlen, -EINVAL,
			   "the unspecified address: give the destination's address");
	if (v6) {
		out->u.in6.sin6_family = AF_INET6;
		out->u.in6.sin6_port = port;
		out->len = sizeof(out->u.in6);
	} else {
		out->u.in.sin_family = AF_INET;
		out->u.in.sin_port = port;
		out->len = sizeof(out->u.in);
	}
	return 0;
}

int sock_addr_parse(const char *spec, enum sock_addr_use use, struct sock_addr *out, char *err,
		    size_t errlen)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = 0;
	if (!strncmp(spec, "unix:", 5))
		ret = parse_unix(spec + 5, out, err, errlen);
	else if (!strncmp(spec, "tcp:", 4))
		ret = parse_tcp(spec + 4, use, out, err, errlen);
	else
		ret = why(err, errlen, -EINVAL, "want unix:PATH or tcp:HOST:PORT");
	if (ret)
		memset(out, 0, sizeof(*out));
	return ret;
}

int sock_addr_parse_host(const char *s, struct sock_addr *out, char *err, size_t errlen)
{
	size_t n = strlen(s);
	bool v6 = strchr(s, ':') != NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = 0;
	if (s[0] == '[' && (n < 3 || s[n - 1] != ']' || memchr(s + 1, ']', n - 2)))
		ret = why(err, errlen, -EINVAL, "want [IPV6], an IPv6 address in brackets");
	else if (!n)
		ret = why(err, errlen, -EINVAL, "no address: give the source's");
	else if (s[0] == '[')
		ret = parse_host(s + 1, n - 2, true, out, err, errlen);
	else
		ret = parse_host(s, n, v6, out, err, errlen);
	if (!ret && (out->family == AF_INET6 ? IN6_IS_ADDR_UNSPECIFIED(&out->u.in6.sin6_addr)
					     : out->u.in.sin_addr.s_addr == htonl(INADDR_ANY)))
		ret =
		    why(err, errlen, -EINVAL, "the unspecified address: give the source's address");
	if (!ret && out->family == AF_INET6) {
		out->u.in6.sin6_family = AF_INET6;
		out->len = sizeof(out->u.in6);
	} else if (!ret) {
		out->u.in.sin_family = AF_INET;
		out->len = sizeof(out->u.in);
	}
	if (ret)
		memset(out, 0, sizeof(*out));
	return ret;
}

int sock_addr_host6(const struct sockaddr *sa, socklen_t len, struct in6_addr *out)
{
	const struct sockaddr_in6 *in6 = (const void *)sa;
	const struct sockaddr_in *in = (const void *)sa;

	memset(out, 0, sizeof(*out));
	if (sa->sa_family == AF_INET6 && len >= sizeof(*in6)) {
		*out = in6->sin6_addr;
		return 0;
	}
	if (sa->sa_family != AF_INET || len < sizeof(*in))
		return -EAFNOSUPPORT;
	out->s6_addr[10] = 0xff;
	out->s6_addr[11] = 0xff;
	memcpy(&out->s6_addr[12], &in->sin_addr, 4);
	return 0;
}

bool sock_addr_same_host(const struct sock_addr *a, const struct sockaddr *peer, socklen_t len)
{
	struct in6_addr x, y;

	if (a->family != AF_INET && a->family != AF_INET6)
		return false;
	if (sock_addr_host6(&a->u.sa, a->len, &x) || sock_addr_host6(peer, len, &y))
		return false;
	return !memcmp(&x, &y, sizeof(x));
}

void sock_addr_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t n)
{
	char h[INET6_ADDRSTRLEN];
	const struct sockaddr_in6 *in6 = (const void *)sa;
	const struct sockaddr_in *in = (const void *)sa;

	if (sa->sa_family == AF_INET6 && len >= sizeof(*in6) &&
	    inet_ntop(AF_INET6, &in6->sin6_addr, h, sizeof(h)))
		snprintf(buf, n, "tcp:[%s]:%u", h, ntohs(in6->sin6_port));
	else if (sa->sa_family == AF_INET && len >= sizeof(*in) &&
		 inet_ntop(AF_INET, &in->sin_addr, h, sizeof(h)))
		snprintf(buf, n, "tcp:%s:%u", h, ntohs(in->sin_port));
	else
		snprintf(buf, n, "unknown");
}

int sock_addr_listen_tcp(const struct sock_addr *a, int backlog, int *fd)
{
	int one = 1, s, ret = 0;

	*fd = -1;
	if (a->family != AF_INET && a->family != AF_INET6)
		return -EAFNOSUPPORT;
	s = socket(a->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, &a->u.sa, a->len) || listen(s, backlog))
		ret = -errno;
	if (ret)
		close(s);
	else
		*fd = s;
	return ret;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Until the non-blocking connect on s completes: 0 or -errno. */
static int connect_wait(int s, int timeout_ms)
{
	struct pollfd p = {.fd = s, .events = POLLOUT};
	long long end = now_ms() + timeout_ms, left;
	socklen_t l = sizeof(int);
	int n, e = 0;

	do {
		left = end - now_ms();
		n = left > 0 ? poll(&p, 1, (int)left) : 0;
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ETIMEDOUT;
	if (getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &l))
		return -errno;
	return -e;
}

int sock_addr_connect(const struct sock_addr *a, int timeout_ms, int *fd)
{
	bool tcp = a->family == AF_INET || a->family == AF_INET6;
	int one = 1, lowat = SOCK_ADDR_NOTSENT_LOWAT, s, ret = 0;

	*fd = -1;
	if (!tcp && a->family != AF_UNIX)
		return -EAFNOSUPPORT;
	/* a Unix socket connects at once or not at all (as it always did
	 * here: blocking); TCP waits for the peer's answer, bounded */
	s = socket(a->family, SOCK_STREAM | SOCK_CLOEXEC | (tcp ? SOCK_NONBLOCK : 0), 0);
	if (s < 0)
		return -errno;
	if (connect(s, &a->u.sa, a->len))
		ret = errno == EINPROGRESS && tcp ? connect_wait(s, timeout_ms) : -errno;
	if (!ret && tcp && fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK))
		ret = -errno;
	/* records go out as they are written: a small one (a reply, the
	 * commit) must not wait for the peer's delayed ACK */
	if (!ret && tcp && setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		ret = -errno;
	/* a write returns once the bytes are nearly on the wire, not when
	 * they are in a send buffer autotuned to megabytes: what a writer
	 * measures is the link's pace */
	if (!ret && tcp && setsockopt(s, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat)))
		ret = -errno;
	if (ret)
		close(s);
	else
		*fd = s;
	return ret;
}
