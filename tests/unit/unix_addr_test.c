// SPDX-License-Identifier: MIT
/* The Unix socket address of a path (vmm/util/unix_addr.h), which every
 * socket vmlet binds or connects by name takes: a path that fits, one that
 * fits only without its NUL (refused, never cut to the name of another
 * socket), and an empty one (refused: bind() would autobind). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* how the name "s" came into dir (IN_CREATE, IN_MOVED_TO) as events say */
static uint32_t name_event(int ifd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	uint32_t seen = 0;
	ssize_t n = read(ifd, buf, sizeof(buf));

	for (ssize_t off = 0; n > 0 && off < n;) {
		struct inotify_event *e = (struct inotify_event *)(buf + off);

		if (e->len && !strcmp(e->name, "s"))
			seen |= e->mask & (IN_CREATE | IN_MOVED_TO);
		off += (ssize_t)sizeof(*e) + e->len;
	}
	return seen;
}

/* unix_listen(): 0600, listening, a stale socket replaced, anything else
 * refused and left; the name is never made by bind() (it is moved into
 * place once the socket listens: a client that waits for the file and
 * connects at once is not refused), and nothing is left beside it. */
static void test_listen(void)
{
	char dir[] = "/tmp/unix-listen-XXXXXX", p[PATH_MAX], q[PATH_MAX];
	struct sockaddr_un sa;
	struct stat st;
	int fd = -1, fd2 = -1, c, ifd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "%s/s", dir);
	snprintf(q, sizeof(q), "%s/s.new", dir);
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	CHECK(ifd >= 0 && inotify_add_watch(ifd, dir, IN_CREATE | IN_MOVED_TO) >= 0);
	CHECK_EQ_U64(unix_listen(p, 1, 0, &fd), 0);
	CHECK(name_event(ifd) == IN_MOVED_TO);
	CHECK(!stat(p, &st) && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600);
	CHECK(access(q, F_OK) && errno == ENOENT);
	CHECK(!unix_addr_fill(&sa, p));
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(c >= 0 && !connect(c, (struct sockaddr *)&sa, sizeof(sa)));
	close(c);
	/* the socket of an earlier run is stale: replaced */
	CHECK_EQ_U64(unix_listen(p, 1, SOCK_NONBLOCK, &fd2), 0);
	CHECK(fd2 >= 0 && (fcntl(fd2, F_GETFL) & O_NONBLOCK));
	close(fd2);
	/* a leftover "s.new" that is no socket is left alone: s is bound as is */
	CHECK(!unlink(p) && (c = open(q, O_CREAT | O_WRONLY, 0600)) >= 0);
	close(c);
	CHECK_EQ_U64(unix_listen(p, 1, 0, &fd2), 0);
	CHECK(!stat(q, &st) && S_ISREG(st.st_mode) && !stat(p, &st) && S_ISSOCK(st.st_mode));
	close(fd2);
	/* a file at the name is refused and kept */
	CHECK(!unlink(p) && !rename(q, p));
	fd2 = 123;
	CHECK_EQ_U64(unix_listen(p, 1, 0, &fd2), (uint64_t)-EEXIST);
	CHECK(fd2 == -1 && !stat(p, &st) && S_ISREG(st.st_mode));
	unlink(p);
	close(fd);
	close(ifd);
	rmdir(dir);
}

int main(void)
{
	TEST_RUN(test_fits);
	TEST_RUN(test_too_long);
	TEST_RUN(test_callers);
	TEST_RUN(test_listen);
	return test_summary();
}
