/* SPDX-License-Identifier: MIT */
/*
 * image_manifest.h - the JSON documents of an image store, parsed from
 * untrusted bytes (vmm/disk/image_store.h): an OCI layout's index.json
 * and image manifest, a `docker save` archive's manifest.json, and the
 * image reference grammar. Pure: no files, no processes.
 *
 * Every function takes the document's bytes (at most
 * IMAGE_MANIFEST_MAX), checks each value's JSON type before it uses it,
 * and returns 0, -ENOENT (the reference is not there) or -EINVAL
 * (malformed), -ENOMEM.
 */
#ifndef VMLET_DISK_IMAGE_MANIFEST_H
#define VMLET_DISK_IMAGE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

#define IMAGE_MANIFEST_MAX (4u << 20) /* skopeo's own limit for a manifest */
#define IMAGE_MAX_LAYERS   128

/* Names from a manifest, malloc'ed (image_names_release). */
struct image_names {
	char *name[IMAGE_MAX_LAYERS];
	unsigned int n;
};

void image_names_release(struct image_names *n);

/* Whether ref is an image reference as container runtimes read it
 * (distribution's grammar: [domain[:port]/]path[:tag][@digest], path
 * components lowercase): no leading '-', no whitespace or control
 * characters, at most 4096 bytes. */
bool image_ref_valid(const char *ref);

/* Whether d is "sha256:" and 64 lowercase hex digits. */
bool image_digest_valid(const char *d);

/* index.json: the digest of the manifest whose annotation
 * org.opencontainers.image.ref.name is ref, into digest (72 bytes). */
int image_oci_index(const char *json, size_t len, const char *ref, char digest[72]);

/* An OCI (or Docker v2) image manifest: its layers' digests, base first. */
int image_oci_layers(const char *json, size_t len, struct image_names *out);

/* manifest.json of `docker save`: the Layers of the entry whose RepoTags
 * hold ref, as member names (normalised; absolute or ".." ones are
 * -EINVAL), base first. */
int image_docker_layers(const char *json, size_t len, const char *ref, struct image_names *out);

#endif /* VMLET_DISK_IMAGE_MANIFEST_H */
