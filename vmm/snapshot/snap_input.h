/* SPDX-License-Identifier: MIT */
/*
 * snap_input.h - the manifests a snapshot records (docs/snapshot.md,
 * "Restore from the snapshot alone"): the section SNAP_SEC_INPUT holds, as
 * items SNAP_INPUT_TEXT, every manifest text the VM's config was resolved
 * from, in order. `vmlet run --restore DIR` without manifests resolves
 * them again under its own command line (--disk-root, --volume,
 * --image-store, --kernel...) and compares the result with the recorded
 * config; the config JSON itself is never parsed back.
 *
 * The texts are untrusted (a snapshot may be written by someone else):
 * they only ever reach the manifest resolver (spec/), which takes any
 * input, and the host paths of the config they give are checked by the
 * caller (cmd_vm.c).
 */
#ifndef VMLET_SNAP_INPUT_H
#define VMLET_SNAP_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/snapshot/snap_buf.h"

struct snap_file;
struct spec_text;

#define SNAP_INPUT_TEXT	     1u
#define SNAP_INPUT_MAX_TEXTS 4096u	 /* texts in one snapshot */
#define SNAP_INPUT_MAX_LEN   (64u << 20) /* bytes of one text, as the resolver's limit */

/* One text into b, the section's bytes (errors accumulate in b->err). */
void snap_input_add(struct snap_buf *b, const char *text, size_t len);

/*
 * The texts of f's input section: *out (malloc'd array, free() it; its
 * texts point into f's data) and *n. 0 (n may be 0: the VM had no
 * manifests), -ENOENT when f has no input section (an older build's
 * snapshot), -EBADMSG for a malformed one (err set), -ENOMEM.
 */
int snap_input_texts(const struct snap_file *f, struct spec_text **out, unsigned int *n, char *err,
		     size_t errlen);

/* The whole DIR/state of the snapshot directory dir into *data (malloc'd,
 * *len bytes; at most SNAP_MAX_STATE), not yet checked. 0 or -errno. */
int snapshot_read_state(const char *dir, uint8_t **data, size_t *len);

#endif /* VMLET_SNAP_INPUT_H */
