/* SPDX-License-Identifier: MIT */
/*
 * secret.h - a Kubernetes Secret as vmlet sees it: a directory of files.
 *
 * `--secret-dir DIR` gives the root; the Secret secretName is the directory
 * DIR/NAME and each of its keys the file DIR/NAME/KEY, as a Secret volume
 * is mounted in a pod (`kubectl create secret generic NAME --from-file=...`
 * then mounted at DIR/NAME works as it is; its `..data` links are
 * followed as long as they stay under DIR). Names come from the manifest
 * and are untrusted: NAME must be a DNS-1123 subdomain (Kubernetes' rule for
 * a Secret's name: no '/', no "..", no leading '.'), and every open is
 * beneath DIR (vmm/util/file.h: openat2 RESOLVE_BENEATH): a symlink or
 * ".." that leads out of DIR is refused, a FIFO or device is not read.
 * Keys are read in name order (os.ReadDir's, as KubeVirt reads them);
 * names starting with ".." (the kubelet's own) and directories are
 * skipped; a key is at most SECRET_MAX_VALUE bytes, a Secret at most
 * SECRET_MAX_KEYS keys and SECRET_MAX_TOTAL bytes (Kubernetes' own limit).
 */
#ifndef VMLET_SECRET_H
#define VMLET_SECRET_H

#include <stdbool.h>
#include <stddef.h>

#define SECRET_MAX_KEYS	 256
#define SECRET_MAX_VALUE (64u << 10)
#define SECRET_MAX_TOTAL (1u << 20)

struct secret_key {
	char *name;  /* the file's name */
	char *value; /* its bytes, NUL-terminated (len excludes it) */
	size_t len;
};

struct secret {
	struct secret_key *keys;
	unsigned int n;
};

/* A valid Secret name (DNS-1123 subdomain, at most 253 characters). */
bool secret_name_ok(const char *name);

/*
 * Read Secret name under root into *out (secret_free() it). 0, -EINVAL
 * (a name that is no Secret name), -ENOENT (no such directory), -EXDEV /
 * -ELOOP (a link out of root), -EFBIG (a key or the whole above the
 * limits), -E2BIG (too many keys), -errno.
 */
int secret_read(const char *root, const char *name, struct secret *out);
/* Zero the values, free everything, leave *s empty. */
void secret_free(struct secret *s);

#endif /* VMLET_SECRET_H */
