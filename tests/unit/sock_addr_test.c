// SPDX-License-Identifier: MIT
/* A live migration's address (vmm/util/sock_addr.h): unix:PATH and
 * tcp:HOST:PORT with HOST numeric (IPv4, or IPv6 in brackets), each
 * malformed form refused with its reason and the address left zeroed; a
 * connect refuses the unspecified address a listener takes; peers
 * formatted back; --incoming-from's bare host (sock_addr_parse_host())
 * and a peer compared with it by host alone, an IPv4-mapped IPv6 address
 * equal to its IPv4 form on either side; a listener and a connect over loopback, TCP_NODELAY and
 * TCP_NOTSENT_LOWAT on the connected stream, a refused port and a peer that never answers
 * (a full accept queue drops the SYN) failing in bounded time. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/util/sock_addr.h"

static void test_valid(void)
{
	struct sock_addr a;
	char err[160], buf[SOCK_ADDR_STRLEN];

	CHECK_EQ_U64(sock_addr_parse("tcp:127.0.0.1:4444", SOCK_ADDR_CONNECT, &a, err, sizeof(err)),
		     0);
	CHECK(a.family == AF_INET && a.len == sizeof(struct sockaddr_in));
	CHECK(a.u.in.sin_family == AF_INET && ntohs(a.u.in.sin_port) == 4444);
	CHECK(a.u.in.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	sock_addr_format(&a.u.sa, a.len, buf, sizeof(buf));
	CHECK_STR(buf, "tcp:127.0.0.1:4444");

	CHECK_EQ_U64(sock_addr_parse("tcp:[::1]:1", SOCK_ADDR_CONNECT, &a, err, sizeof(err)), 0);
	CHECK(a.family == AF_INET6 && a.len == sizeof(struct sockaddr_in6));
	CHECK(IN6_IS_ADDR_LOOPBACK(&a.u.in6.sin6_addr) && ntohs(a.u.in6.sin6_port) == 1);
	sock_addr_format(&a.u.sa, a.len, buf, sizeof(buf));
	CHECK_STR(buf, "tcp:[::1]:1");

	CHECK_EQ_U64(
	    sock_addr_parse("tcp:[2001:db8::5]:65535", SOCK_ADDR_LISTEN, &a, err, sizeof(err)), 0);
	sock_addr_format(&a.u.sa, a.len, buf, sizeof(buf));
	CHECK_STR(buf, "tcp:[2001:db8::5]:65535");
	/* every address of the host, to listen on */
	CHECK_EQ_U64(sock_addr_parse("tcp:0.0.0.0:80", SOCK_ADDR_LISTEN, &a, err, sizeof(err)), 0);
	CHECK(a.u.in.sin_addr.s_addr == htonl(INADDR_ANY));
	CHECK_EQ_U64(sock_addr_parse("tcp:[::]:80", SOCK_ADDR_LISTEN, &a, err, sizeof(err)), 0);
	CHECK(IN6_IS_ADDR_UNSPECIFIED(&a.u.in6.sin6_addr));
	/* an IPv4-mapped IPv6 address is an IPv6 one */
	CHECK_EQ_U64(
	    sock_addr_parse("tcp:[::ffff:10.0.0.1]:9", SOCK_ADDR_CONNECT, &a, err, sizeof(err)), 0);
	CHECK(a.family == AF_INET6);
	/* leading zeros in the port are digits */
	CHECK_EQ_U64(sock_addr_parse("tcp:10.1.2.3:0080", SOCK_ADDR_CONNECT, &a, err, sizeof(err)),
		     0);
	CHECK(ntohs(a.u.in.sin_port) == 80);

	CHECK_EQ_U64(
	    sock_addr_parse("unix:/run/vmlet/in.sock", SOCK_ADDR_LISTEN, &a, err, sizeof(err)), 0);
	CHECK(a.family == AF_UNIX && a.u.un.sun_family == AF_UNIX);
	CHECK_STR(a.u.un.sun_path, "/run/vmlet/in.sock");
	CHECK_STR(err, "");
}

/* spec refused (for use) with a reason containing want; *a zeroed */
static void refused(const char *spec, enum sock_addr_use use, const char *want, int line)
{
	struct sock_addr a, zero;
	char err[160];
	int ret;

	memset(&zero, 0, sizeof(zero));
	memset(&a, 0xa5, sizeof(a));
	ret = sock_addr_parse(spec, use, &a, err, sizeof(err));
	if (ret >= 0 || !strstr(err, want) || memcmp(&a, &zero, sizeof(a)))
		test_fail(__FILE__, line, "'%s': %d '%s' (want '%s')", spec, ret, err, want);
}
#define REFUSED(s, u, w) refused(s, u, w, __LINE__)

static void test_malformed(void)
{
	const enum sock_addr_use L = SOCK_ADDR_LISTEN, C = SOCK_ADDR_CONNECT;
	char p[200];

	REFUSED("", L, "want unix:PATH or tcp:HOST:PORT");
	REFUSED("tcp", L, "want unix:PATH or tcp:HOST:PORT");
	REFUSED("TCP:1.2.3.4:5", L, "want unix:PATH or tcp:HOST:PORT");
	REFUSED("udp:1.2.3.4:5", L, "want unix:PATH or tcp:HOST:PORT");
	REFUSED("/run/in.sock", L, "want unix:PATH or tcp:HOST:PORT");
	REFUSED("unix:", L, "with a path");
	memset(p, 'a', sizeof(p) - 1);
	p[sizeof(p) - 1] = 0;
	memcpy(p, "unix:/", 6);
	REFUSED(p, L, "longer than");
	/* the port */
	REFUSED("tcp:1.2.3.4", L, "want tcp:HOST:PORT");
	REFUSED("tcp:", L, "want tcp:HOST:PORT");
	REFUSED("tcp:1.2.3.4:", L, "the port '' is not a number from 1 to 65535");
	REFUSED("tcp:1.2.3.4:0", L, "from 1 to 65535");
	REFUSED("tcp:1.2.3.4:65536", L, "from 1 to 65535");
	REFUSED("tcp:1.2.3.4:100000", L, "from 1 to 65535");
	REFUSED("tcp:1.2.3.4:-1", L, "from 1 to 65535");
	REFUSED("tcp:1.2.3.4:+80", L, "from 1 to 65535");
	REFUSED("tcp:1.2.3.4: 80", L, "from 1 to 65535");
	REFUSED("tcp:1.2.3.4:80 ", L, "from 1 to 65535");
	REFUSED("tcp:1.2.3.4:0x50", L, "from 1 to 65535");
	REFUSED("tcp:1.2.3.4:http", L, "from 1 to 65535");
	/* the host: numbers only, no name is resolved */
	REFUSED("tcp::4444", L, "no host: give the address to listen on");
	REFUSED("tcp::4444", C, "no host: give the destination's address");
	REFUSED("tcp:[]:4444", L, "no host");
	REFUSED("tcp:localhost:4444", C, "vmlet resolves no host names");
	REFUSED("tcp:dst.pods.svc:4444", C, "vmlet resolves no host names");
	REFUSED("tcp:1.2.3:4444", C, "not a numeric IPv4 address");
	REFUSED("tcp:1.2.3.4.5:4444", C, "not a numeric IPv4 address");
	REFUSED("tcp:256.1.1.1:4444", C, "not a numeric IPv4 address");
	REFUSED("tcp:010.1.1.1:4444", C, "not a numeric IPv4 address");
	REFUSED("tcp:0x7f.0.0.1:4444", C, "not a numeric IPv4 address");
	REFUSED("tcp: 1.2.3.4:4444", C, "not a numeric IPv4 address");
	REFUSED("tcp:[1.2.3.4]:4444", C, "not a numeric IPv6 address");
	REFUSED("tcp:[::g]:4444", C, "not a numeric IPv6 address");
	REFUSED("tcp:::1:4444", C, "an IPv6 address goes in brackets");
	REFUSED("tcp:fe80::1:4444", C, "an IPv6 address goes in brackets");
	REFUSED("tcp:[::1:4444", C, "want tcp:[IPV6]:PORT");
	REFUSED("tcp:[::1]4444", C, "want tcp:[IPV6]:PORT");
	REFUSED("tcp:[::1]x:4444", C, "want tcp:[IPV6]:PORT");
	REFUSED("tcp:[[::1]]:4444", C, "want tcp:[IPV6]:PORT");
	REFUSED("tcp:[::1]:", C, "the port '' is not");
	REFUSED("tcp:[::1]:4444:5", C, "the port '4444:5' is not");
	REFUSED("tcp:[fe80::1%eth0]:4444", C, "an IPv6 zone");
	REFUSED("tcp:[fe80::1%2]:4444", L, "an IPv6 zone");
	memset(p, '1', sizeof(p) - 1);
	p[sizeof(p) - 1] = 0;
	memcpy(p, "tcp:", 4);
	memcpy(p + sizeof(p) - 6, ":4444", 5);
	REFUSED(p, C, "is not a numeric IPv4 address");
	/* a connect needs a destination: 0.0.0.0 and [::] are every local
	 * address to a listener only */
	REFUSED("tcp:0.0.0.0:4444", C, "the unspecified address");
	REFUSED("tcp:[::]:4444", C, "the unspecified address");
	REFUSED("tcp:[0:0::0]:4444", C, "the unspecified address");
}

/* A listener of 127.0.0.1 on a port the kernel picks, its address in *a. */
static int loopback_listener(struct sock_addr *a, int backlog)
{
	char err[160];
	socklen_t l = sizeof(a->u.in);
	int fd = -1;

	if (sock_addr_parse("tcp:127.0.0.1:1", SOCK_ADDR_LISTEN, a, err, sizeof(err)))
		return -1;
	a->u.in.sin_port = 0;
	if (sock_addr_listen_tcp(a, backlog, &fd) || getsockname(fd, &a->u.sa, &l)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void test_connect(void)
{
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer), ol = sizeof(int);
	char who[SOCK_ADDR_STRLEN], want[SOCK_ADDR_STRLEN];
	struct sock_addr a;
	int l, c = -1, s, nodelay = 0, lowat = 0;

	l = loopback_listener(&a, 1);
	CHECK(l >= 0);
	if (l < 0)
		return;
	CHECK_EQ_U64(sock_addr_connect(&a, 5000, &c), 0);
	s = accept(l, (struct sockaddr *)&peer, &pl);
	CHECK(s >= 0 && c >= 0);
	/* the peer, as the destination logs it */
	sock_addr_format((struct sockaddr *)&peer, pl, who, sizeof(who));
	pl = sizeof(peer);
	CHECK(!getsockname(c, (struct sockaddr *)&peer, &pl));
	sock_addr_format((struct sockaddr *)&peer, pl, want, sizeof(want));
	CHECK_STR(who, want);
	CHECK(!strncmp(who, "tcp:127.0.0.1:", 14));
	/* blocking, records out at once */
	CHECK(!getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &nodelay, &ol) && nodelay);
	/* and a write waits for the link, not for a deep send buffer */
	ol = sizeof(int);
	CHECK(!getsockopt(c, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, &ol) &&
	      lowat == SOCK_ADDR_NOTSENT_LOWAT);
	CHECK(write(c, "x", 1) == 1);
	close(s);
	close(c);
	close(l);
	/* nothing listens there any more */
	c = 123;
	CHECK_EQ_U64(sock_addr_connect(&a, 5000, &c), (uint64_t)-ECONNREFUSED);
	CHECK(c == -1);
	/* the same port binds again at once (SO_REUSEADDR over TIME_WAIT) */
	CHECK_EQ_U64(sock_addr_listen_tcp(&a, 1, &l), 0);
	if (l >= 0)
		close(l);
	sock_addr_format(&a.u.sa, 3, who, sizeof(who)); /* too short */
	CHECK_STR(who, "unknown");
}

/* A destination that never answers the SYN (its accept queue is full, so
 * the kernel drops it): the connect ends with -ETIMEDOUT. */
static void test_connect_timeout(void)
{
	struct sock_addr a;
	int l, c[4] = {-1, -1, -1, -1}, ret = 0, i;

	l = loopback_listener(&a, 0);
	CHECK(l >= 0);
	if (l < 0)
		return;
	/* fill the queue (backlog 0 holds one, more on some kernels) */
	for (i = 0; i < 4 && !ret; i++)
		ret = sock_addr_connect(&a, 300, &c[i]);
	CHECK_EQ_U64(ret, (uint64_t)-ETIMEDOUT);
	CHECK(c[i - 1] == -1);
	for (i = 0; i < 4; i++)
		if (c[i] >= 0)
			close(c[i]);
	close(l);
}

/* a peer's address as accept() gives it: IPv4, or IPv6 (maybe mapped) */
static socklen_t peer4(struct sockaddr_storage *ss, const char *ip, unsigned short port)
{
	struct sockaddr_in *in = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	CHECK(inet_pton(AF_INET, ip, &in->sin_addr) == 1);
	return sizeof(*in);
}

static socklen_t peer6(struct sockaddr_storage *ss, const char *ip, unsigned short port)
{
	struct sockaddr_in6 *in6 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	CHECK(inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1);
	return sizeof(*in6);
}

#define FROM_REFUSED(spec, what)                                                                   \
	do {                                                                                       \
		a.family = 99;                                                                     \
		CHECK_EQ_U64(sock_addr_parse_host(spec, &a, err, sizeof(err)), (uint64_t)-EINVAL); \
		CHECK(strstr(err, what) != NULL);                                                  \
		CHECK(a.family == 0 && a.len == 0);                                                \
	} while (0)

/* --incoming-from's ADDR: bare numeric hosts, with or without brackets */
static void test_parse_host(void)
{
	struct sock_addr a;
	char err[160];

	CHECK_EQ_U64(sock_addr_parse_host("10.0.0.7", &a, err, sizeof(err)), 0);
	CHECK(a.family == AF_INET && a.len == sizeof(struct sockaddr_in));
	CHECK(a.u.in.sin_addr.s_addr == htonl(0x0a000007) && a.u.in.sin_port == 0);
	CHECK_EQ_U64(sock_addr_parse_host("::1", &a, err, sizeof(err)), 0);
	CHECK(a.family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&a.u.in6.sin6_addr));
	CHECK_EQ_U64(sock_addr_parse_host("[2001:db8::5]", &a, err, sizeof(err)), 0);
	CHECK(a.family == AF_INET6 && a.len == sizeof(struct sockaddr_in6));
	CHECK_EQ_U64(sock_addr_parse_host("::ffff:10.0.0.7", &a, err, sizeof(err)), 0);
	CHECK(a.family == AF_INET6);

	FROM_REFUSED("", "no address");
	FROM_REFUSED("localhost", "resolves no host names");
	FROM_REFUSED("10.0.0.7:4444", "not a numeric IPv6 address");
	FROM_REFUSED("tcp:10.0.0.7", "not a numeric IPv6 address");
	FROM_REFUSED("10.0.0", "not a numeric IPv4 address");
	FROM_REFUSED("[::1", "want [IPV6]");
	FROM_REFUSED("[::1]]", "want [IPV6]");
	FROM_REFUSED("[]", "want [IPV6]");
	FROM_REFUSED("[::1]:4444", "want [IPV6]");
	FROM_REFUSED("[10.0.0.7]", "not a numeric IPv6 address");
	FROM_REFUSED("fe80::1%eth0", "IPv6 zone");
	FROM_REFUSED("0.0.0.0", "the unspecified address");
	FROM_REFUSED("[::]", "the unspecified address");
	FROM_REFUSED("10.0.0.7 ", "not a numeric IPv4 address");
}

/* a peer is the allowed source by its host alone, IPv4-mapped or not */
static void test_same_host(void)
{
	struct sockaddr_storage p;
	struct sock_addr a, u;
	char err[160];
	socklen_t l;

	CHECK_EQ_U64(sock_addr_parse_host("10.0.0.7", &a, err, sizeof(err)), 0);
	l = peer4(&p, "10.0.0.7", 40000);
	CHECK(sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	l = peer4(&p, "10.0.0.7", 1); /* any port */
	CHECK(sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	l = peer4(&p, "10.0.0.8", 40000);
	CHECK(!sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	l = peer4(&p, "7.0.0.10", 40000); /* byte order */
	CHECK(!sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	/* a listener on [::] sees an IPv4 peer IPv4-mapped */
	l = peer6(&p, "::ffff:10.0.0.7", 40000);
	CHECK(sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	l = peer6(&p, "::ffff:10.0.0.8", 40000);
	CHECK(!sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	/* IPv4-compatible (deprecated ::A.B.C.D) and NAT64 forms are others */
	l = peer6(&p, "::10.0.0.7", 40000);
	CHECK(!sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	l = peer6(&p, "64:ff9b::10.0.0.7", 40000);
	CHECK(!sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	/* a truncated address is no match */
	l = peer4(&p, "10.0.0.7", 40000);
	CHECK(!sock_addr_same_host(&a, (struct sockaddr *)&p, l - 1));
	CHECK(!sock_addr_same_host(&a, (struct sockaddr *)&p, 0));

	/* named mapped, the peer in IPv4 or mapped */
	CHECK_EQ_U64(sock_addr_parse_host("[::ffff:10.0.0.7]", &a, err, sizeof(err)), 0);
	l = peer4(&p, "10.0.0.7", 40000);
	CHECK(sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	l = peer6(&p, "::ffff:10.0.0.7", 1);
	CHECK(sock_addr_same_host(&a, (struct sockaddr *)&p, l));

	/* IPv6: the whole address */
	CHECK_EQ_U64(sock_addr_parse_host("2001:db8::5", &a, err, sizeof(err)), 0);
	l = peer6(&p, "2001:db8::5", 9);
	CHECK(sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	l = peer6(&p, "2001:db8::6", 9);
	CHECK(!sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	l = peer6(&p, "2001:db8:0:0:1::5", 9);
	CHECK(!sock_addr_same_host(&a, (struct sockaddr *)&p, l));
	l = peer4(&p, "0.0.0.5", 9);
	CHECK(!sock_addr_same_host(&a, (struct sockaddr *)&p, l));

	/* not IPv4 or IPv6: never the source */
	CHECK_EQ_U64(sock_addr_parse("unix:/tmp/x.sock", SOCK_ADDR_LISTEN, &u, err, sizeof(err)),
		     0);
	CHECK(!sock_addr_same_host(&u, (struct sockaddr *)&p, l));
	memset(&p, 0, sizeof(p));
	p.ss_family = AF_UNIX;
	CHECK(!sock_addr_same_host(&a, (struct sockaddr *)&p, sizeof(p)));
}

int main(void)
{
	TEST_RUN(test_valid);
	TEST_RUN(test_malformed);
	TEST_RUN(test_connect);
	TEST_RUN(test_connect_timeout);
	TEST_RUN(test_parse_host);
	TEST_RUN(test_same_host);
	return test_summary();
}
