/* SPDX-License-Identifier: MIT */
/*
 * image_store.h - `--image-store DIR`: containerDisk images found by their
 * reference (quay.io/containerdisks/fedora:40), as a bare host keeps them.
 *
 * DIR holds an OCI image layout (index.json; a manifest whose
 * org.opencontainers.image.ref.name annotation is the reference, as
 * `skopeo copy docker://REF oci:DIR:REF` leaves it) and/or `docker save`
 * archives (DIR/NAME.tar, found by their RepoTags). The disk is where
 * KubeVirt takes it in the image: containerDisk.path, else the only file
 * under /disk/. A reference found nowhere is pulled into the layout first
 * with `skopeo copy` when skopeo is installed (its registries.conf says
 * which registries are insecure).
 *
 * Images are untrusted. Their layers are read in process (vmm/disk/tar.h,
 * vmm/disk/image_layer.h): only the disk is taken out, as the image's
 * filesystem shows it (whiteouts honoured), and only when it is a regular
 * file; it is written as a fresh file STORE/.vmlet-disks/<sha256 of image
 * and path>, mode 0400, in a directory of mode 0700, once: later runs
 * reuse it. No name from an image or a manifest reaches an argv: gzip and
 * zstd layers go through `gzip -dc` / `zstd -dcq` on a pipe, and the
 * reference is checked against the reference grammar and given to skopeo
 * after "--".
 */
#ifndef VMLET_DISK_IMAGE_STORE_H
#define VMLET_DISK_IMAGE_STORE_H

struct vm_config;

/* Give every containerDisk of cfg without a path the host file of its
 * image from store. 0 or -errno (an error naming volume, image and store
 * printed). Runs skopeo, gzip and zstd: call before any sandbox. */
int image_store_resolve(const char *store, struct vm_config *cfg);

#endif /* VMLET_DISK_IMAGE_STORE_H */
