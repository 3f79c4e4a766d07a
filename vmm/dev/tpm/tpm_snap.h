/* SPDX-License-Identifier: MIT */
/*
 * tpm_snap.h - the TPM in a snapshot (docs/snapshot.md): the pure part,
 * without swtpm (tpm_dev.c does the swtpm side: freeze, the blobs, the
 * restore), so that the snapshot fuzzer reaches it.
 *
 * A device's items: TPM_SNAP_KIND (u32: 1 TIS, 2 CRB), TPM_SNAP_REGS
 * (TPM_SNAP_NREGS u32), TPM_SNAP_BUF (TIS: the response the FIFO offers,
 * rsp_len bytes, empty outside COMPLETION; CRB: its whole buffer), then
 * three TPM_SNAP_BLOB (u32 type, u32 flags, the bytes): swtpm's
 * permanent, volatile and savestate blobs in that order.
 *
 * Saved only in a state with no command in the interface's or the
 * backend's hands: TIS IDLE, READY or COMPLETION (nothing pending, no
 * aborted command still at the backend), CRB neither START nor pending;
 * never a failed interface. A load takes only what the guest could have
 * made of the interface: a state of those, flags 0 or 1, INT_ENABLE and
 * INT_VECTOR bits the register keeps, a TIS response of a whole TPM
 * header whose size field is its length with the read position inside,
 * a blob no longer than TPM_SWTPM_BLOB_MAX of the right type and no flag
 * but TPM_SWTPM_BLOB_ENCRYPTED.
 */
#ifndef VMLET_DEV_TPM_SNAP_H
#define VMLET_DEV_TPM_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/dev/tpm/tpm_crb.h"
#include "vmm/dev/tpm/tpm_tis.h"

struct snap_buf;
struct snap_cur;

enum { TPM_SNAP_KIND = 1, TPM_SNAP_REGS, TPM_SNAP_BUF, TPM_SNAP_BLOB };
#define TPM_SNAP_NREGS 8u

/* The interface the device has: one of the two. */
struct tpm_snap_if {
	bool tis;
	struct tpm_tis *t;
	struct tpm_crb *c;
};

/* The registers and buffer as read from a snapshot, checked. */
struct tpm_snap_regs {
	uint32_t v[TPM_SNAP_NREGS];
	const uint8_t *buf;
	size_t buf_len;
};

/* swtpm's blobs as read from a snapshot (pointers into its bytes). */
struct tpm_snap_blobs {
	const uint8_t *p[3];
	size_t len[3];
	uint32_t flags[3];
};

/* The interface holds no command: 0, or -EAGAIN (a command is being
 * written or answered: try again), -ENOTSUP for a failed one (logged). */
int tpm_snap_idle(const struct tpm_snap_if *i);

/* Append KIND, REGS and BUF (the interface must be idle: -EAGAIN). */
int tpm_snap_put_regs(const struct tpm_snap_if *i, struct snap_buf *b);
/* Append one blob item. */
void tpm_snap_put_blob(struct snap_buf *b, uint32_t type, const uint8_t *p, size_t len,
		       uint32_t flags);

/* Read and check KIND, REGS, BUF for interface i (-EBADMSG, or -EINVAL
 * with the reason logged), then the three blobs. Nothing is applied. */
int tpm_snap_parse(const struct tpm_snap_if *i, struct snap_cur *in, struct tpm_snap_regs *r,
		   struct tpm_snap_blobs *bl);
/* Set the interface from checked registers (a fresh one, nothing in
 * flight). */
void tpm_snap_apply(const struct tpm_snap_if *i, const struct tpm_snap_regs *r);

#endif /* VMLET_DEV_TPM_SNAP_H */
