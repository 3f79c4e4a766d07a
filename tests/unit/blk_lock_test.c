// SPDX-License-Identifier: MIT
/*
 * blk_lock(): the permission rules between two openers of one image in
 * one process (OFD locks of two open file descriptions conflict like two
 * processes'): writers exclude each other and readers, readers share,
 * shareable writers share, a qcow2 image's backing file is locked for
 * reading; closing releases; live migration's deferral, release and
 * take. The bytes QEMU sees are checked against
 * QEMU itself in tests/sh/blk_lock.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/disk/blk.h"

static char img[64];

/* Open img (read_only) and lock it; the lock's result in *r. */
static struct blk *opener(bool read_only, bool shareable, int *r)
{
	struct blk *b = NULL;

	*r = blk_open_format(&b, img, read_only, BLK_CACHE_WRITEBACK, "raw");
	if (!*r)
		*r = blk_lock(b, shareable);
	return b;
}

/* Whether a second opener (ro2, sh2) may join a first (ro1, sh1). */
static int pair(bool ro1, bool sh1, bool ro2, bool sh2)
{
	int r1, r2;
	struct blk *a = opener(ro1, sh1, &r1), *b = opener(ro2, sh2, &r2);

	CHECK(r1 == 0);
	blk_close(b);
	blk_close(a);
	return r2;
}

static void test_rules(void)
{
	CHECK(pair(false, false, false, false) == -EBUSY); /* writer, writer */
	CHECK(pair(false, false, true, false) == -EBUSY);  /* writer, reader */
	CHECK(pair(true, false, false, false) == -EBUSY);  /* reader, writer */
	CHECK(pair(true, false, true, false) == 0);	   /* readers share */
	CHECK(pair(false, true, false, true) == 0);	   /* shareable writers */
	CHECK(pair(false, true, false, false) == -EBUSY);  /* then an exclusive one */
	CHECK(pair(false, false, false, true) == -EBUSY);  /* exclusive, then shareable */
	CHECK(pair(true, true, false, true) == 0);	   /* shareable reader, writer */
}

static void test_close_releases(void)
{
	int r;
	struct blk *a = opener(false, false, &r), *b;

	CHECK(r == 0);
	blk_close(a);
	b = opener(false, false, &r);
	CHECK(r == 0);
	blk_close(b);
}

/* Live migration's handover: a deferred opener holds nothing until
 * blk_locks_take(); the holder's blk_locks_release() lets it in; a
 * refused take leaves nothing of the image locked and can be retried. */
static void test_handover(void)
{
	struct blk *a, *b, *c;
	int r;

	a = opener(false, false, &r); /* the source */
	CHECK(r == 0);
	blk_lock_defer(true);
	b = opener(false, false, &r); /* the destination, waiting */
	blk_lock_defer(false);
	CHECK(r == 0);
	c = opener(true, false, &r); /* a reader: the source still refuses it */
	CHECK(r == -EBUSY);
	blk_close(c);
	CHECK(blk_locks_take() == -EBUSY); /* not while the source holds it */
	CHECK(blk_locks_release() == 0);   /* the source lets go */
	c = opener(true, false, &r);
	CHECK(r == 0);
	blk_close(c);
	blk_close(a);
	CHECK(blk_locks_take() == 0); /* the destination takes it */
	c = opener(true, false, &r);
	CHECK(r == -EBUSY);
	blk_close(c);
	blk_close(b);
	c = opener(false, false, &r); /* closing forgot and released it */
	CHECK(r == 0);
	blk_close(c);
}

static void test_backing_read_locked(void)
{
	char top[80], cmd[256], dir[64];
	struct blk *q = NULL, *w;
	int r;

	snprintf(top, sizeof(top), "%s.top", img);
	/* a backing file is named from the image's own directory (blk.h) */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && qemu-img create -q -f qcow2 -b %s -F raw %s >/dev/null 2>&1",
		 dirname(strcpy(dir, img)), strrchr(img, '/') + 1, top);
	if (system(cmd))
		SKIP("no qemu-img");
	CHECK(blk_open(&q, top, false, BLK_CACHE_WRITEBACK) == 0);
	CHECK(q && q->backing);
	CHECK(q && blk_lock(q, false) == 0);
	w = opener(false, false, &r); /* writing the backing file: refused */
	CHECK(r == -EBUSY);
	blk_close(w);
	w = opener(true, false, &r); /* reading it: fine */
	CHECK(r == 0);
	blk_close(w);
	blk_close(q);
	unlink(top);
}

int main(void)
{
	int fd;

	snprintf(img, sizeof(img), "/tmp/vmlet-lock-XXXXXX");
	fd = mkstemp(img);
	if (fd < 0 || ftruncate(fd, 1 << 20))
		return 1;
	close(fd);
	TEST_RUN(test_rules);
	TEST_RUN(test_close_releases);
	TEST_RUN(test_handover);
	TEST_RUN(test_backing_read_locked);
	unlink(img);
	return test_summary();
}
