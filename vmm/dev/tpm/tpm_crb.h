/* SPDX-License-Identifier: MIT */
/*
 * tpm_crb.h - the TPM 2.0 Command Response Buffer interface (TCG PC Client
 * Platform TPM Profile, CRB), locality 0 only, as QEMU's tpm-crb presents
 * it: one 4 KiB MMIO window at TPM_CRB_BASE holding the registers
 * (0x00-0x7f) and the command/response buffer (TPM_CRB_BUF_OFF, sized
 * TPM_CRB_BUF_SIZE). No interrupt: the guest polls CTRL_START.
 *
 * The guest's protocol: LOC_CTRL.requestAccess (granted at once), CTRL_REQ
 * cmdReady / goIdle (done at once; the bit reads back 0), the command
 * written into the buffer, CTRL_START = 1; the model copies the command
 * (its length from the TPM header, checked against the buffer) and calls
 * submit(); START reads 1 until the backend's answer is in the buffer
 * (tpm_crb_complete()). A command whose header size is below 10 bytes or
 * larger than the buffer is answered here with TPM_RC_COMMAND_SIZE and
 * never reaches the backend. The guest's writes to the buffer while a
 * command is in flight are dropped. tpm_crb_fail() sets CTRL_STS.tpmSts
 * (fatal error): every later START is refused.
 *
 * Pure state (no I/O, no threads of its own): the device (tpm_dev.c) does
 * the exchange with swtpm on its own thread. Thread-safe (one lock).
 */
#ifndef VMLET_DEV_TPM_CRB_H
#define VMLET_DEV_TPM_CRB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/vm/bus.h"

#define TPM_CRB_WINDOW	 0x1000u
#define TPM_CRB_BUF_OFF	 0x80u
#define TPM_CRB_BUF_SIZE (TPM_CRB_WINDOW - TPM_CRB_BUF_OFF)
#define TPM_CRB_CTRL_OFF 0x40u /* the control area the ACPI TPM2 table names */

/* Register offsets (TCG PC Client PTP, CRB interface). */
#define TPM_CRB_LOC_STATE  0x00
#define TPM_CRB_LOC_CTRL   0x08
#define TPM_CRB_LOC_STS	   0x0c
#define TPM_CRB_INTF_ID	   0x30
#define TPM_CRB_INTF_ID_HI 0x34
#define TPM_CRB_CTRL_REQ   0x40
#define TPM_CRB_CTRL_STS   0x44
#define TPM_CRB_CTRL_CNCL  0x48
#define TPM_CRB_CTRL_START 0x4c
#define TPM_CRB_CMD_SIZE   0x58
#define TPM_CRB_CMD_LADDR  0x5c
#define TPM_CRB_CMD_HADDR  0x60
#define TPM_CRB_RSP_SIZE   0x64
#define TPM_CRB_RSP_ADDR   0x68

#define TPM_CRB_LOC_STATE_ESTABLISHED (1u << 0)
#define TPM_CRB_LOC_STATE_ASSIGNED    (1u << 1)
#define TPM_CRB_LOC_STATE_VALID	      (1u << 7)
#define TPM_CRB_LOC_CTRL_REQUEST      (1u << 0)
#define TPM_CRB_LOC_CTRL_RELINQUISH   (1u << 1)
#define TPM_CRB_LOC_STS_GRANTED	      (1u << 0)
#define TPM_CRB_CTRL_REQ_READY	      (1u << 0)
#define TPM_CRB_CTRL_REQ_IDLE	      (1u << 1)
#define TPM_CRB_CTRL_STS_FATAL	      (1u << 0)
#define TPM_CRB_CTRL_STS_IDLE	      (1u << 1)

/* The smallest TPM command or response: tag, size, code (10 bytes). */
#define TPM_HEADER_SIZE	    10u
#define TPM_RC_COMMAND_SIZE 0x142u

struct tpm_crb {
	pthread_mutex_t lock;
	uint64_t base;	  /* guest-physical address of the window */
	bool granted;	  /* locality 0 assigned */
	bool idle;	  /* CTRL_STS.tpmIdle */
	bool busy;	  /* CTRL_START: a command is in flight */
	bool fatal;	  /* CTRL_STS.tpmSts */
	bool established; /* LOC_STATE.tpmEstablished, from the backend */
	bool pending;	  /* cmd holds a command the backend has not taken */
	uint32_t cancel;  /* CTRL_CANCEL as written */
	uint8_t buf[TPM_CRB_BUF_SIZE];
	uint8_t cmd[TPM_CRB_BUF_SIZE]; /* the command copied at START */
	size_t cmd_len;
	/* START accepted a command (called without the lock, on the
	 * writing vCPU's thread): the owner wakes its worker */
	void (*submit)(void *opaque);
	void *opaque;
	uint64_t commands; /* commands handed to the backend */
};

void tpm_crb_init(struct tpm_crb *c, uint64_t base, void (*submit)(void *), void *opaque);
void tpm_crb_release(struct tpm_crb *c);

/* The bus callbacks (opaque = struct tpm_crb, offsets from its base). */
extern const struct io_ops tpm_crb_ops;

/* Worker side: copy the pending command into out (cap >= its length);
 * its length, or 0 when none is pending. */
size_t tpm_crb_take(struct tpm_crb *c, uint8_t *out, size_t cap);
/*
 * The backend's response: len bytes, checked here (at least a header,
 * whose size field says len, and no more than the buffer) while a command
 * is in flight: copied into the buffer and START cleared (0), or -EPROTO
 * (nothing copied; the caller decides, usually tpm_crb_fail()).
 */
int tpm_crb_complete(struct tpm_crb *c, const uint8_t *rsp, size_t len);
/* The backend is gone: tpmSts set, START cleared, later starts refused. */
void tpm_crb_fail(struct tpm_crb *c);
/* What the backend says of its tpmEstablished flag. */
void tpm_crb_set_established(struct tpm_crb *c, bool on);

#endif /* VMLET_DEV_TPM_CRB_H */
