/* SPDX-License-Identifier: MIT */
/*
 * tpm_tis.h - the TPM 2.0 FIFO (TIS) interface (TCG PC Client Platform TPM
 * Profile, FIFO interface), as QEMU's tpm-tis presents it with one locality
 * in use: a 0x5000 MMIO window at TPM_TIS_BASE, locality 0 in its first
 * 4 KiB; the windows of localities 1-4 read as all ones (not present) and
 * ignore writes. No interrupt (INTF_CAPABILITY offers none, the ACPI
 * device has no IRQ): the guest polls STS.
 *
 * The guest's protocol: ACCESS.requestUse (granted at once: activeLocality),
 * STS.commandReady, the command written a byte (or up to 4) at a time into
 * DATA_FIFO / XDATA_FIFO, STS.Expect set until the header's size field has
 * been received in full, STS.tpmGo hands the command to submit(), STS reads
 * neither commandReady nor dataAvail until the backend's answer is in
 * (tpm_tis_complete()), then dataAvail until the last response byte has been
 * read; commandReady again makes the interface ready for the next.
 *
 * Refusals (every guest value is untrusted): FIFO writes while no command is
 * being received, past the header's size, or past TPM_TIS_BUF_SIZE are
 * dropped; a header size below 10 bytes or above TPM_TIS_BUF_SIZE ends the
 * reception at once (Expect clears) and tpmGo answers it here with
 * TPM_RC_COMMAND_SIZE without the backend, as the CRB does; tpmGo while
 * Expect is set (a command not yet whole) is ignored; reads past the
 * response return 0xff; commandReady while a command is executing aborts it
 * (its response, when it comes, is dropped). Registers other than ACCESS
 * ignore writes while locality 0 is not active. tpm_tis_fail() makes every
 * later tpmGo answer TPM_RC_FAILURE here.
 *
 * Pure state (no I/O, no threads of its own), the same worker contract as
 * tpm_crb.h (take/complete/fail). Thread-safe (one lock).
 */
#ifndef VMLET_DEV_TPM_TIS_H
#define VMLET_DEV_TPM_TIS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/vm/bus.h"

#define TPM_TIS_WINDOW	 0x5000u /* five localities of 4 KiB */
#define TPM_TIS_LOCALITY 0x1000u
#define TPM_TIS_BUF_SIZE 4096u

/* Register offsets in a locality (TCG PC Client PTP, FIFO interface). */
#define TPM_TIS_ACCESS	     0x00
#define TPM_TIS_INT_ENABLE   0x08
#define TPM_TIS_INT_VECTOR   0x0c
#define TPM_TIS_INT_STATUS   0x10
#define TPM_TIS_INTF_CAP     0x14
#define TPM_TIS_STS	     0x18
#define TPM_TIS_DATA_FIFO    0x24
#define TPM_TIS_INTERFACE_ID 0x30
#define TPM_TIS_XDATA_FIFO   0x80
#define TPM_TIS_DID_VID	     0xf00
#define TPM_TIS_RID	     0xf04

#define TPM_TIS_ACCESS_ESTABLISHMENT (1u << 0) /* 1: not established */
#define TPM_TIS_ACCESS_REQUEST_USE   (1u << 1)
#define TPM_TIS_ACCESS_ACTIVE	     (1u << 5)
#define TPM_TIS_ACCESS_VALID	     (1u << 7)

#define TPM_TIS_STS_RETRY	(1u << 1)
#define TPM_TIS_STS_EXPECT	(1u << 3)
#define TPM_TIS_STS_DATA_AVAIL	(1u << 4)
#define TPM_TIS_STS_GO		(1u << 5)
#define TPM_TIS_STS_READY	(1u << 6)
#define TPM_TIS_STS_VALID	(1u << 7)
#define TPM_TIS_STS_BURST_SHIFT 8
#define TPM_TIS_STS_FAMILY_2_0	(1u << 26)
#define TPM_TIS_BURST		64u

/* The response code tpm_tis makes itself for a command of a bad size. */
#ifndef TPM_HEADER_SIZE
#define TPM_HEADER_SIZE 10u
#endif
#ifndef TPM_RC_COMMAND_SIZE
#define TPM_RC_COMMAND_SIZE 0x142u
#endif

enum tpm_tis_state {
	TPM_TIS_IDLE,	   /* after reset: commandReady not yet asked */
	TPM_TIS_READY,	   /* commandReady: the FIFO takes a command */
	TPM_TIS_RECEPTION, /* bytes of a command are in */
	TPM_TIS_EXECUTION, /* tpmGo: the backend has it */
	TPM_TIS_COMPLETION /* the response is read out of the FIFO */
};

struct tpm_tis {
	pthread_mutex_t lock;
	enum tpm_tis_state state;
	bool active;	  /* locality 0 is the active locality */
	bool fatal;	  /* the backend is gone */
	bool established; /* tpmEstablished, from the backend */
	bool pending;	  /* cmd holds a command the backend has not taken */
	/* commands the backend took that commandReady aborted: their
	 * answers (the worker serves one at a time, in order) are dropped */
	unsigned int aborted;
	uint32_t int_enable;
	uint8_t int_vector;
	uint8_t buf[TPM_TIS_BUF_SIZE]; /* the command, then the response */
	size_t in;		       /* command bytes received */
	size_t out, rsp_len;	       /* response bytes read, its length */
	uint8_t cmd[TPM_TIS_BUF_SIZE]; /* the command copied at tpmGo */
	size_t cmd_len;
	/* tpmGo accepted a command (called without the lock, on the writing
	 * vCPU's thread): the owner wakes its worker */
	void (*submit)(void *opaque);
	void *opaque;
	uint64_t commands; /* commands handed to the backend */
};

void tpm_tis_init(struct tpm_tis *t, void (*submit)(void *), void *opaque);
void tpm_tis_release(struct tpm_tis *t);

/* The bus callbacks (opaque = struct tpm_tis, offsets from its base). */
extern const struct io_ops tpm_tis_ops;

/* Worker side: copy the pending command into out (cap >= its length);
 * its length, or 0 when none is pending. */
size_t tpm_tis_take(struct tpm_tis *t, uint8_t *out, size_t cap);
/*
 * The backend's response: len bytes, checked here (at least a header whose
 * size field says len, no more than the buffer) while a command executes:
 * the FIFO then offers it (dataAvail), or -EPROTO (nothing taken; the
 * caller decides, usually tpm_tis_fail()). After an abort the response is
 * dropped (0) and the interface is ready.
 */
int tpm_tis_complete(struct tpm_tis *t, const uint8_t *rsp, size_t len);
/* The backend is gone: the command in flight and every later one is
 * answered TPM_RC_FAILURE here. */
void tpm_tis_fail(struct tpm_tis *t);
/* What the backend says of its tpmEstablished flag. */
void tpm_tis_set_established(struct tpm_tis *t, bool on);

#endif /* VMLET_DEV_TPM_TIS_H */
