// SPDX-License-Identifier: MIT
/*
 * blk_qcow2.c - qcow2 images (not yet: refused with a clear error).
 */
#include <errno.h>

#include "vmm/dev/blk.h"
#include "vmm/log.h"

int blk_qcow2_init(struct blk *b)
{
	return error_errno(-ENOTSUP, "blk: '%s': image format qcow2 is not supported yet", b->path);
}
