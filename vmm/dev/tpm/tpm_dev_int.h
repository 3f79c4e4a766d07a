/* SPDX-License-Identifier: MIT */
/*
 * tpm_dev_int.h - the TPM device's state, shared by tpm_dev.c (create,
 * the worker, teardown) and tpm_dev_snap.c (the snapshot ops).
 */
#ifndef VMLET_DEV_TPM_DEV_INT_H
#define VMLET_DEV_TPM_DEV_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "vmm/dev/tpm/tpm_crb.h"
#include "vmm/dev/tpm/tpm_swtpm.h"
#include "vmm/dev/tpm/tpm_tis.h"

struct snap_buf;
struct snap_cur;

/* The larger of the two interfaces' buffers. */
#define TPM_DEV_BUF (TPM_TIS_BUF_SIZE > TPM_CRB_BUF_SIZE ? TPM_TIS_BUF_SIZE : TPM_CRB_BUF_SIZE)

struct tpm_dev {
	bool tis; /* the FIFO interface (tpm: {}), else the CRB (persistent) */
	struct tpm_crb crb;
	struct tpm_tis tis_regs;
	struct tpm_swtpm sw;
	struct vm *vm;
	struct bus *mmio;
	bool registered, started;
	bool persistent;       /* the state is the directory state_dir */
	const char *state_dir; /* fw->tpm_state: outlives the VM */
	/* freeze (tpm_dev_snap.c): the worker held between two commands */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool hold, held, quit, gone;
	/* work the held worker does for the main thread (swtpm's channels
	 * are the worker's: its sandbox role has what they need) */
	int (*job)(struct tpm_dev *d, void *arg);
	void *job_arg;
	int job_ret;
	pthread_t thread;
	int kick_fd, stop_fd;
	uint8_t cmd[TPM_DEV_BUF], rsp[TPM_DEV_BUF];
};

/* Wake the worker (an eventfd write; any thread). */
void tpm_dev_kick(void *opaque);

/* The device_type's snapshot ops (device.h; tpm_dev.h says what they do). */
int tpm_dev_freeze(void *state);
void tpm_dev_thaw(void *state);
int tpm_dev_save(void *state, struct snap_buf *b);
int tpm_dev_load(void *state, struct snap_cur *in);

#endif /* VMLET_DEV_TPM_DEV_INT_H */
