// SPDX-License-Identifier: MIT
/* The Unix socket address of a path (vmm/util/unix_addr.h), which every
 * socket vmlet binds or connects by name takes: a path that fits, one that
 * fits only without its NUL (refused, never cut to the name of another
 * socket), and an empty one (refused: bind() would autobind). */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "tests/lib/test.h"
#include "vmm/ctl/ctl.h"
#include "vmm/util/unix_addr.h"

#define SUN_LEN_MAX (sizeof(((struct sockaddr_un *)0)->sun_path))

/* a path of len bytes under /tmp (where a cut one would land) */
static void path_of(char *buf, size_t len)
{
	memset(buf, 'a', len);
	memcpy(buf, "/tmp/", 5);
	buf[len] = 0;
}

static void test_fits(void)
{
	struct sockaddr_un sa;
	char p[SUN_LEN_MAX + 8];

	CHECK_EQ_U64(unix_addr_fill(&sa, "/run/vmlet.sock"), 0);
	CHECK(sa.sun_family == AF_UNIX);
	CHECK_STR(sa.sun_path, "/run/vmlet.sock");
	path_of(p, SUN_LEN_MAX - 1); /* the longest: its NUL is the last byte */
	CHECK_EQ_U64(unix_addr_fill(&sa, p), 0);
	CHECK_STR(sa.sun_path, p);
	CHECK(sa.sun_path[SUN_LEN_MAX - 1] == 0);
}

static void test_too_long(void)
{
	struct sockaddr_un sa, zero;
	char p[SUN_LEN_MAX + 8];

	memset(&zero, 0, sizeof(zero));
	path_of(p, SUN_LEN_MAX); /* one byte too many: no room for the NUL */
	memset(&sa, 0x55, sizeof(sa));
	CHECK_EQ_U64(unix_addr_fill(&sa, p), (uint64_t)-ENAMETOOLONG);
	CHECK(!memcmp(&sa, &zero, sizeof(sa)));
	path_of(p, SUN_LEN_MAX + 7);
	CHECK_EQ_U64(unix_addr_fill(&sa, p), (uint64_t)-ENAMETOOLONG);
	memset(&sa, 0x55, sizeof(sa));
	CHECK_EQ_U64(unix_addr_fill(&sa, ""), (uint64_t)-EINVAL);
	CHECK(!memcmp(&sa, &zero, sizeof(sa)));
}

/* A caller: the control socket's server refuses the path, and its client
 * does too, before touching anything. */
static void test_callers(void)
{
	struct ctl_server *s = NULL;
	char p[SUN_LEN_MAX + 8];

	path_of(p, SUN_LEN_MAX);
	CHECK_EQ_U64(ctl_server_open(&s, p), (uint64_t)-ENAMETOOLONG);
	CHECK(s == NULL);
}

int main(void)
{
	TEST_RUN(test_fits);
	TEST_RUN(test_too_long);
	TEST_RUN(test_callers);
	return test_summary();
}
