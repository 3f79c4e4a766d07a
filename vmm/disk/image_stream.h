/* SPDX-License-Identifier: MIT */
/*
 * image_stream.h - an image layer as a tar stream (vmm/disk/image_layer.h):
 * an uncompressed layer is read in place; a gzip or zstd one (found by its
 * magic) through `gzip -dc` / `zstd -dcq`, that fixed argv, run without
 * privileges (as root: uid and gid 65534, no groups, no_new_privs), fed
 * the layer's bytes on a socket by this process and read back from a pipe.
 */
#ifndef VMLET_DISK_IMAGE_STREAM_H
#define VMLET_DISK_IMAGE_STREAM_H

#include <stdbool.h>
#include <sys/types.h>

#include "vmm/disk/image_layer.h"
#include "vmm/disk/tar.h"

/* A layer as a tar stream: read directly, or through a decompressor
 * whose stdin (a socket) this process feeds from the layer's bytes. */
struct image_stream {
	struct tar tar;
	struct tar_fd_src raw;
	const struct image_layer *l;
	const char *tool; /* the decompressor, NULL when the layer is a tar */
	pid_t pid;
	int in, out;
	uint64_t fed;
	char *buf;
	size_t buf_len, buf_pos;
	bool failed; /* the decompressor exited with an error */
	int status;  /* its exit status (-1: killed) */
};

/* Open l as s (s->tar reads it). 0, or -errno with an error naming what
 * printed (a decompressor that is not installed). */
int image_stream_open(struct image_stream *s, const struct image_layer *l, const char *what);
/* The decompressor, if any, is killed and reaped. */
void image_stream_close(struct image_stream *s);
/* Print why reading layer (0-based) of what failed with r; r. */
int image_stream_error(struct image_stream *s, int r, unsigned int layer, const char *what);

#endif /* VMLET_DISK_IMAGE_STREAM_H */
