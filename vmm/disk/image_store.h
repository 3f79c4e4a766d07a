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
 * The image's layers are unpacked in order (GNU tar, which reads gzip
 * layers too) into DIR/.vmlet-disks/<digest>/, once: later runs reuse
 * it. Only the disk's path is unpacked, and the result must be a regular
 * file inside that directory (layers are untrusted).
 */
#ifndef VMLET_DISK_IMAGE_STORE_H
#define VMLET_DISK_IMAGE_STORE_H

struct vm_config;

/* Give every containerDisk of cfg without a path the host file of its
 * image from store. 0 or -errno (an error naming volume, image and store
 * printed). Runs tar and skopeo: call before any sandbox. */
int image_store_resolve(const char *store, struct vm_config *cfg);

#endif /* VMLET_DISK_IMAGE_STORE_H */
