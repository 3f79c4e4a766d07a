/* SPDX-License-Identifier: MIT */
/*
 * image_layer.h - one file out of a container image's layers, as the
 * image's filesystem shows it at that path (vmm/disk/image_store.h).
 *
 * Layers are untrusted tar archives, read in process by vmm/disk/tar.h.
 * A gzip or zstd layer (found by its magic) is decompressed by `gzip -dc`
 * or `zstd -dcq` with that fixed argv, without root, fed the layer on
 * stdin by this process and read back from a pipe (image_stream.h):
 * nothing from the image reaches an argv, and nothing is unpacked but the
 * one file asked for.
 */
#ifndef VMLET_DISK_IMAGE_LAYER_H
#define VMLET_DISK_IMAGE_LAYER_H

#include <stdint.h>

/* A layer: bytes [off, off + len) of fd (an OCI blob, or a member of a
 * `docker save` archive). */
struct image_layer {
	int fd;
	uint64_t off, len;
};

/* The disk of an image whose layers are l[0..n) (the base first): path,
 * a normalised relative name (containerDisk.path without its '/'), or
 * NULL for KubeVirt's default, the only entry of disk/ (names starting
 * with '.' aside). The file is the topmost layer's entry at that name
 * unless a higher layer hides it (a whiteout ".wh.NAME" of it or of a
 * directory above it, an opaque directory ".wh..wh..opq" above it, or a
 * non-directory replacing a directory above it). It must be a regular
 * file, or a hard link to a regular file of the same layer; a symbolic
 * link, device, FIFO, directory or sparse entry there, or a symbolic link
 * on the way to it, is refused, as is a malformed or truncated layer.
 *
 * Its bytes are written into out (an empty regular file; runs of zero
 * blocks are left as holes). what names the image in error messages.
 * 0, or -errno with an error printed: -ENOENT (not there), -ELOOP (a
 * link), -EINVAL (not a regular file, a malformed layer), -EIO. */
int image_layer_extract(const struct image_layer *l, unsigned int n, const char *path, int out,
			const char *what);

#endif /* VMLET_DISK_IMAGE_LAYER_H */
