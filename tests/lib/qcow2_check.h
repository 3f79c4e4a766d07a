/* SPDX-License-Identifier: MIT */
/*
 * qcow2_check.h - an independent structural check of a qcow2 image file,
 * written from the format's description (not with vmm/disk/), for the
 * crash tests: what `qemu-img check` would say, reduced to what matters
 * after a kill or a power cut. Images with 16-bit refcounts.
 */
#ifndef VMLET_TEST_QCOW2_CHECK_H
#define VMLET_TEST_QCOW2_CHECK_H

#include <stddef.h>

/*
 * The image file at path as it is now: 0 consistent, 1 leaks only (a
 * counted cluster nothing points at: qemu-img check exit 3), 2 corrupt:
 * a pointer (L1 -> L2 table, L2 -> data cluster, refcount table ->
 * refcount block) to something that is not a cluster of the file, or a
 * cluster with more references than its refcount (a refcount of 0, or a
 * cluster used twice); each such finding is printed. Reads with pread().
 */
int qcow2_check_file(const char *path);

/*
 * For the tests that make their images with qemu-img: 77 (after printing
 * why) when qemu-img is not installed, 1 on error, else 0 with a fresh
 * directory /tmp/vmlet-NAME.XXXXXX in dir (cap bytes).
 */
int qcow2_test_dir(char *dir, size_t cap, const char *name);

#endif /* VMLET_TEST_QCOW2_CHECK_H */
