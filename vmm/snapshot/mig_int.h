/* SPDX-License-Identifier: MIT */
/*
 * mig_int.h - the live migration stream (migrate.h, docs/migration.md):
 * records of u32 type, u32 length, then the bytes; little endian.
 */
#ifndef VMLET_MIG_INT_H
#define VMLET_MIG_INT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/snapshot/migrate.h"

#define MIG_MAGIC	"VMLTMIGR"
#define MIG_VERSION	1u
#define MIG_PAGE	4096u
#define MIG_MAX_PAGES	256u	   /* pages in one MIG_PAGES record */
#define MIG_MAX_CONFIG	(1u << 20) /* bytes of the config in MIG_HELLO */
#define MIG_MAX_MESSAGE 256u
#define MIG_PAUSED	1u /* commit flag: the user had paused the guest */
#define MIG_REPLY_TIMEOUT                                                                          \
	60			   /* s: the source waits this long for an answer;                 \
				    * either side, for the peer's next bytes */
#define MIG_STATE_CHUNK (1u << 20) /* the state is read (and its buffer grown) by this */

enum mig_rec {
	MIG_HELLO = 1,	/* magic, u32 version, the config JSON */
	MIG_PAGES = 2,	/* u64 guest-physical address, 1..MIG_MAX_PAGES whole pages */
	MIG_STATE = 3,	/* the snapshot state file's bytes (snap_file.h) */
	MIG_COMMIT = 4, /* source, after the destination loaded the state: run it;
			 * u32 flags, MIG_PAUSED */
	MIG_REPLY = 16	/* destination: i32 0 or -errno, a message */
};

extern struct migrate_stats mig_stats;

/*
 * The destination's side of the stream, apart from KVM (mig_recv.c; the
 * fuzz target tests/fuzz/migrate_fuzz.c feeds it): records from fd until
 * the commit, each checked before use: hello (compared with config),
 * pages read in place into mem (whole pages inside one region), then the
 * state handed to load(ctx, bytes, len), whose result is the reply. 0 once
 * committed, else -errno (logged). Replies are written to fd.
 */
struct guest_mem;
struct mig_sink {
	const struct guest_mem *mem;
	const char *config;
	int (*load)(void *ctx, const void *state, size_t len);
	void *ctx;
	uint32_t commit_flags; /* out: the commit's MIG_PAUSED */
};
int mig_receive_stream(int fd, struct mig_sink *s);

/* Every later mig_read_all() must be done within seconds from now (0: no
 * bound), else it fails with -ETIME; it also fails with -ETIMEDOUT after
 * MIG_REPLY_TIMEOUT s without a byte. The destination sets it once the
 * source connected: a source that trickles cannot hold it. */
void mig_set_deadline(unsigned int seconds);
/* 0, -EPIPE at an end of stream, or -errno. */
int mig_write_all(int fd, const void *buf, size_t len);
int mig_read_all(int fd, void *buf, size_t len);
/* One record whose bytes are a then b. */
int mig_send(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen);
int mig_recv_hdr(int fd, uint32_t *type, uint32_t *len);
int mig_send_reply(int fd, int code, const char *msg);
/* The destination's answer: its code (0 or -errno) with msg, or the
 * stream's error (msg says so). */
int mig_recv_reply(int fd, char *msg, size_t mlen);

#endif /* VMLET_MIG_INT_H */
