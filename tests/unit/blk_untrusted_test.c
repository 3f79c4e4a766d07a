// SPDX-License-Identifier: MIT
/*
 * What an untrusted image or name may make the block layer open (issue
 * 28, findings 2, 3 and 7; blk.h's blk_where, vmm/util/file.h). Each case
 * plants the attack: a qcow2 backing file named absolutely, with "../",
 * through a symlink, as a FIFO (which used to hang the open: an alarm
 * turns a hang into a failure) or at all where no backing file is allowed;
 * a FIFO or a device node as an image; a path that leaves its root by
 * "..", by a symlinked directory or by being absolute; a link planted
 * where vmlet creates a file. Backing files made by qemu-img; the qcow2
 * cases skip without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <seccomp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/disk/blk.h"
#include "vmm/util/file.h"

static char dir[64];

static char *p(const char *name)
{
	static char buf[4][160];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

/* img.qcow2 in dir/d/ whose backing file is named name (raw) */
static bool qcow2_backed_by(const char *name)
{
	return test_sh("cd %s/d && rm -f img.qcow2 && qemu-img create -q -f qcow2 -u -b '%s' "
		       "-F raw img.qcow2 1M",
		       dir, name) == 0;
}

static int open_img(bool ro)
{
	struct blk *b = NULL;
	int r = blk_open(&b, p("d/img.qcow2"), ro, BLK_CACHE_WRITEBACK);

	blk_close(b);
	return r;
}

static void test_backing_names(void)
{
	struct blk_where w = {.file = {.follow = true}, .no_backing = true};
	struct blk *b = NULL;
	char abs[200];

	if (test_sh("qemu-img --version >/dev/null 2>&1"))
		SKIP("no qemu-img");
	snprintf(abs, sizeof(abs), "%s", p("secret"));
	CHECK(qcow2_backed_by(abs));
	CHECK(open_img(true) == -EPERM); /* absolute: anywhere on the host */
	CHECK(qcow2_backed_by("../secret"));
	CHECK(open_img(true) == -EPERM);
	CHECK(qcow2_backed_by("sub/../../secret"));
	CHECK(open_img(true) == -EPERM);
	CHECK(qcow2_backed_by("link")); /* d/link -> ../secret */
	CHECK(open_img(true) == -ELOOP);
	CHECK(qcow2_backed_by("fifo"));
	CHECK(open_img(true) == -EMEDIUMTYPE);
	CHECK(open_img(false) == -EMEDIUMTYPE);
	CHECK(qcow2_backed_by("null")); /* d/null -> /dev/null */
	CHECK(open_img(true) == -ELOOP);
	if (!access(p("d/nulldev"), F_OK)) { /* a device node (mknod: root) */
		CHECK(qcow2_backed_by("nulldev"));
		CHECK(open_img(true) == -EMEDIUMTYPE);
	}
	/* a regular file beside the image is a backing file */
	CHECK(qcow2_backed_by("base.raw"));
	CHECK(open_img(true) == 0);
	CHECK(open_img(false) == 0);
	/* ... but not where none is allowed (a containerDisk) */
	CHECK(blk_open_at(&b, p("d/img.qcow2"), &w, true, BLK_CACHE_WRITEBACK, NULL) == -EPERM);
	w.no_backing = false;
	CHECK(blk_open_at(&b, p("d/img.qcow2"), &w, true, BLK_CACHE_WRITEBACK, NULL) == 0);
	blk_close(b);
}

static void test_image_kinds(void)
{
	struct blk_where w = {.file = {.follow = true, .block_ok = true}};
	struct blk *b = NULL;

	/* a FIFO: opening it read-only used to wait for a writer forever */
	CHECK(blk_open(&b, p("d/fifo"), true, BLK_CACHE_WRITEBACK) == -EMEDIUMTYPE);
	CHECK(blk_open(&b, p("d/fifo"), false, BLK_CACHE_WRITEBACK) == -EMEDIUMTYPE);
	/* a character device: never opened */
	CHECK(blk_open(&b, "/dev/null", false, BLK_CACHE_WRITEBACK) == -EMEDIUMTYPE);
	CHECK(blk_open_at(&b, "/dev/null", &w, false, BLK_CACHE_WRITEBACK, NULL) == -EMEDIUMTYPE);
	/* a symlink as the image is followed only where allowed */
	CHECK(blk_open(&b, p("d/link"), true, BLK_CACHE_WRITEBACK) == 0);
	blk_close(b);
	w.file.follow = false;
	CHECK(blk_open_at(&b, p("d/link"), &w, true, BLK_CACHE_WRITEBACK, NULL) == -ELOOP);
}

static void test_beneath_root(void)
{
	struct blk_where w = {.file = {.root = p("d")}};
	struct blk *b = NULL;

	CHECK(blk_open_at(&b, p("d/base.raw"), &w, true, BLK_CACHE_WRITEBACK, "raw") == 0);
	blk_close(b);
	CHECK(blk_open_at(&b, "base.raw", &w, true, BLK_CACHE_WRITEBACK, "raw") == 0);
	blk_close(b);
	CHECK(blk_open_at(&b, p("d/../secret"), &w, true, BLK_CACHE_WRITEBACK, "raw") == -EXDEV);
	CHECK(blk_open_at(&b, p("d/out/secret"), &w, true, BLK_CACHE_WRITEBACK, "raw") == -EXDEV);
	CHECK(blk_open_at(&b, p("secret"), &w, true, BLK_CACHE_WRITEBACK, "raw") == -EXDEV);
	CHECK(blk_open_at(&b, "/etc/passwd", &w, true, BLK_CACHE_WRITEBACK, "raw") == -EXDEV);
	/* a relative root (--disk-root root): ROOT/REL as config_join() makes it */
	CHECK(chdir(dir) == 0);
	w.file.root = "d";
	CHECK(blk_open_at(&b, "d/base.raw", &w, true, BLK_CACHE_WRITEBACK, "raw") == 0);
	blk_close(b);
	CHECK(blk_open_at(&b, "d/../secret", &w, true, BLK_CACHE_WRITEBACK, "raw") == -EXDEV);
	w.file.root = ".";
	CHECK(blk_open_at(&b, "./d/base.raw", &w, true, BLK_CACHE_WRITEBACK, "raw") == 0);
	blk_close(b);
	CHECK(chdir("/") == 0);
	w.file.root = p("d");
	/* even a symlink that is followed stays beneath the root */
	w.file.follow = true;
	CHECK(blk_open_at(&b, p("d/link"), &w, true, BLK_CACHE_WRITEBACK, "raw") == -EXDEV);
	CHECK(blk_open_at(&b, p("d/abslink"), &w, true, BLK_CACHE_WRITEBACK, "raw") == -EXDEV);
}

/* A kernel without openat2 (before Linux 5.6): made here with a seccomp
 * filter that answers ENOSYS, in a child. A name under a root is then
 * refused with an error that says why; one with no root still opens. */
static void test_no_openat2(void)
{
	struct blk_where w = {.file = {.root = p("d")}};
	struct blk *b = NULL;
	scmp_filter_ctx f;
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		f = seccomp_init(SCMP_ACT_ALLOW);
		if (!f || seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0) ||
		    seccomp_load(f))
			_exit(2);
		if (blk_open_at(&b, p("d/base.raw"), &w, true, BLK_CACHE_WRITEBACK, "raw") !=
			-ENOSYS ||
		    strcmp(file_why(-ENOSYS),
			   " (this kernel has no openat2, Linux 5.6, to open it safely)"))
			_exit(1);
		if (blk_open(&b, p("d/base.raw"), true, BLK_CACHE_WRITEBACK))
			_exit(1);
		blk_close(b);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_created_files(void)
{
	char *tmp = NULL, *safe, buf[8] = {0};
	struct stat st;
	int fd;

	/* O_EXCL never follows a link planted at the name */
	CHECK(file_create(p("d/link"), 0600) == -EEXIST);
	CHECK(file_create(p("d/dangling"), 0600) == -EEXIST);
	CHECK(lstat(p("victim"), &st) && errno == ENOENT);
	/* an unnamed file leaves no name behind */
	fd = file_tmp(p("t"));
	CHECK(fd >= 0 && test_sh("[ -z \"$(ls -A %s)\" ]", p("t")) == 0);
	if (fd >= 0)
		close(fd);
	/* replacing a symlink replaces the link, never its target */
	fd = file_replace_begin(p("d/link"), 0600, &tmp);
	CHECK(fd >= 0 && write(fd, "new", 3) == 3);
	CHECK(file_replace_commit(fd, &tmp, p("d/link"), 0) == 0 && !tmp);
	if (fd >= 0)
		close(fd);
	CHECK(!lstat(p("d/link"), &st) && S_ISREG(st.st_mode) && st.st_size == 3);
	fd = open(p("secret"), O_RDONLY);
	CHECK(fd >= 0 && read(fd, buf, 6) == 6 && !memcmp(buf, "secret", 6));
	if (fd >= 0)
		close(fd);
	safe = file_safe_name("../a b/\n.x");
	CHECK_STR(safe, "_._a_b__.x");
	free(safe);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/vmlet-untrusted-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	alarm(60); /* a FIFO opened by mistake blocks: fail rather than hang */
	if (test_sh("cd %s && mkdir d t out && printf secret >secret && cp secret out/ && "
		    "truncate -s 1M d/base.raw && ln -s ../secret d/link && "
		    "ln -s %s/secret d/abslink && ln -s ../out d/out && mkfifo d/fifo && "
		    "ln -s /dev/null d/null && ln -s ../victim d/dangling && "
		    "{ mknod d/nulldev c 1 3 2>/dev/null || :; }",
		    dir, dir))
		return 1;
	TEST_RUN(test_image_kinds);
	TEST_RUN(test_beneath_root);
	TEST_RUN(test_backing_names);
	TEST_RUN(test_no_openat2);
	TEST_RUN(test_created_files);
	test_sh("rm -rf %s", dir);
	return test_summary();
}
