/* SPDX-License-Identifier: MIT */
/*
 * tpm_swtpm.h - the TPM's backend: Debian's `swtpm` as vmlet's child.
 *
 * tpm_swtpm_start() makes two connected AF_UNIX stream socket pairs and
 * spawns (posix_spawn: no copy of vmlet's page tables)
 *   swtpm socket --tpm2 --fd 3 --ctrl type=unixio,clientfd=4
 *         --tpmstate dir=/proc/self/fd/5 | backend-uri=file:///proc/self/fd/5
 * with only those three descriptors beside stdin (/dev/null) and stdout
 * and stderr (vmlet's stderr, the log), and an environment of PATH alone
 * (nothing of vmlet's own). The state is a descriptor vmlet
 * opened, never a path swtpm resolves on its own: a directory (persistent
 * state, swtpm's tpm2-00.permall inside) or an unlinked file (O_TMPFILE:
 * the state of one run, nothing left behind). --fd implies swtpm's -t: it
 * ends when vmlet's end of the data socket closes, whatever way vmlet
 * ended. Then CMD_INIT on the control channel (the TPM's power-on; the
 * guest's firmware or kernel sends TPM2_Startup).
 *
 * The control channel (swtpm's tpm_ioctl commands: a big-endian command
 * number, its payload; a big-endian result first in every answer) and the
 * data channel (a raw TPM command, then its response) are blocking and
 * for one thread at a time: tpm_dev.c's worker (THREAD_HELPER role: read,
 * write, poll, wait4, kill) once the VM runs.
 *
 * swtpm is trusted no more than it has to be: a response longer than the
 * caller's buffer, shorter than a header or whose size field disagrees
 * with what arrived is an error (-EPROTO), as is an end of stream.
 */
#ifndef VMLET_DEV_TPM_SWTPM_H
#define VMLET_DEV_TPM_SWTPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* swtpm's control commands (its tpm_ioctl.h: the ioctl number + 1). */
#define TPM_SWTPM_CMD_INIT	      2u
#define TPM_SWTPM_CMD_SHUTDOWN	      3u
#define TPM_SWTPM_CMD_GET_ESTABLISHED 4u
#define TPM_SWTPM_CMD_GET_STATEBLOB   12u
#define TPM_SWTPM_CMD_SET_STATEBLOB   13u
#define TPM_SWTPM_CMD_STOP	      14u
/* CMD_INIT's flag: the volatile state read at this init is deleted after */
#define TPM_SWTPM_INIT_DELETE_VOLATILE 1u
/* The state blobs (tpm_ioctl.h's PTM_BLOB_TYPE_*), and the flag swtpm sets
 * on a blob it encrypted (its --key: given back as it came) */
#define TPM_SWTPM_BLOB_PERMANENT 1u
#define TPM_SWTPM_BLOB_VOLATILE	 2u
#define TPM_SWTPM_BLOB_SAVESTATE 3u
#define TPM_SWTPM_BLOB_ENCRYPTED 2u
/* A blob larger than this is refused (swtpm's permanent state is tens of
 * KiB; NV space is bounded by libtpms) */
#define TPM_SWTPM_BLOB_MAX (4u << 20)

struct tpm_swtpm {
	pid_t pid; /* -1: not running (reaped) */
	int ctrl;  /* control channel, -1 closed */
	int data;  /* data channel, -1 closed */
};

struct tpm_swtpm_config {
	const char *binary; /* NULL: $VMLET_SWTPM, else "swtpm" from PATH */
	int state_fd;	    /* a directory, or a regular file (see above) */
	bool state_is_dir;
	/* swtpm switches to this uid itself (--runas) once its sockets and
	 * state are open: vmlet's --user; the state must be its already */
	bool run_as;
	uid_t uid;
};

/* Spawn swtpm and power the TPM on (CMD_INIT). 0, or -errno (logged:
 * -ENOENT names the package when the binary is not found). */
int tpm_swtpm_start(const struct tpm_swtpm_config *cfg, struct tpm_swtpm *out);

/*
 * One control command: req_len bytes of payload after the command number;
 * the answer's result word into *result, then up to rsp_len more bytes
 * into rsp. 0, or -errno (-EPIPE: swtpm is gone).
 */
int tpm_swtpm_ctrl(struct tpm_swtpm *s, uint32_t cmd, const void *req, size_t req_len,
		   uint32_t *result, void *rsp, size_t rsp_len);

/*
 * One TPM command (len bytes) and its response into rsp (cap bytes):
 * *rsp_len its length. stop_fd (-1: none) readable while waiting ends the
 * wait with -ECANCELED. 0, -EPIPE (swtpm gone), -EPROTO (a response that
 * does not fit or does not hold together), or another -errno.
 */
int tpm_swtpm_exchange(struct tpm_swtpm *s, const uint8_t *cmd, size_t len, uint8_t *rsp,
		       size_t cap, size_t *rsp_len, int stop_fd);

/*
 * The TPM's state as swtpm hands it out for migration (CMD_GET_STATEBLOB of
 * type; a running TPM's volatile state is made on the fly): *blob (malloc'd,
 * NULL when empty or swtpm has none of the type), *len, *flags (TPM_SWTPM_BLOB_ENCRYPTED or 0). 0,
 * -EIO (swtpm's result not 0: logged), -EPROTO (a length past TPM_SWTPM_BLOB_MAX or a part longer
 * than the whole), -EPIPE, -ENOMEM.
 */
int tpm_swtpm_get_blob(struct tpm_swtpm *s, uint32_t type, uint8_t **blob, size_t *len,
		       uint32_t *flags);
/*
 * A restore: CMD_STOP (the TPM powered off; swtpm stays), then each blob
 * given back (CMD_SET_STATEBLOB; len 0: none of that type), then CMD_INIT
 * with TPM_SWTPM_INIT_DELETE_VOLATILE: the TPM resumes from them.
 * tpm_swtpm_set_blob() is one of them; tpm_swtpm_init() the power-on.
 * 0, -EIO (swtpm refused: logged with its result), or -errno.
 */
int tpm_swtpm_stop_tpm(struct tpm_swtpm *s);
int tpm_swtpm_set_blob(struct tpm_swtpm *s, uint32_t type, const uint8_t *blob, size_t len,
		       uint32_t flags);
int tpm_swtpm_init(struct tpm_swtpm *s, uint32_t flags);

/* swtpm's tpmEstablished flag: 0/1, or -errno. */
int tpm_swtpm_established(struct tpm_swtpm *s);

/* Wait for swtpm to exit (it has, or will now that vmlet's ends closed):
 * its wait status, or -errno. */
int tpm_swtpm_reap(struct tpm_swtpm *s);

/* CMD_SHUTDOWN (swtpm writes its state and exits), close both channels,
 * reap it (SIGTERM after a grace of about a second). Idempotent. */
void tpm_swtpm_stop(struct tpm_swtpm *s);

#endif /* VMLET_DEV_TPM_SWTPM_H */
