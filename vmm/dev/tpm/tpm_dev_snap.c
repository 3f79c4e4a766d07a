/* SPDX-License-Identifier: MIT */
/*
 * tpm_dev_snap.c - the TPM device in a snapshot: freeze, save, load
 * (tpm_dev.h; the pure part is tpm_snap.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm/dev/tpm/tpm_dev_int.h"
#include "vmm/dev/tpm/tpm_snap.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/util/log.h"

/*
 * The snapshot (tpm_snap.h, docs/snapshot.md). freeze holds the worker
 * between two commands (a command swtpm has finishes first; vCPUs are
 * held, so no new one comes), waiting up to TPM_DEV_FREEZE_S, and then
 * wants an interface with no command in it (-EAGAIN: try again). The
 * held worker then talks to swtpm for save and load (tpm_held_job): the
 * channels stay its own, and the main thread's sandbox needs nothing new.
 */
#define TPM_DEV_FREEZE_S 5

static struct tpm_snap_if tpm_if(struct tpm_dev *d)
{
	return (struct tpm_snap_if){.tis = d->tis, .t = &d->tis_regs, .c = &d->crb};
}

void tpm_dev_thaw(void *state)
{
	struct tpm_dev *d = state;

	pthread_mutex_lock(&d->lock);
	d->hold = false;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

int tpm_dev_freeze(void *state)
{
	struct tpm_dev *d = state;
	struct tpm_snap_if i = tpm_if(d);
	struct timespec until;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += TPM_DEV_FREEZE_S;
	pthread_mutex_lock(&d->lock);
	d->hold = true;
	pthread_mutex_unlock(&d->lock);
	tpm_dev_kick(d);
	pthread_mutex_lock(&d->lock);
	while (!d->held && !d->gone && !ret)
		ret = pthread_cond_timedwait(&d->cond, &d->lock, &until);
	ret = d->gone ? -ENOTSUP : d->held ? 0 : -EAGAIN;
	pthread_mutex_unlock(&d->lock);
	if (ret == -EAGAIN)
		error_errno(ret, "snapshot: a TPM command is still running: try again");
	else if (ret)
		error_errno(ret, "snapshot: the TPM has failed (swtpm is gone)");
	if (!ret)
		ret = tpm_snap_idle(&i);
	if (ret)
		tpm_dev_thaw(d);
	return ret;
}

/* job on the held worker, waited for: its result, or -ENOTSUP when the
 * worker is not held (no freeze) or is gone. */
static int tpm_held_job(struct tpm_dev *d, int (*job)(struct tpm_dev *, void *), void *arg)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	if (!d->held || d->gone) {
		pthread_mutex_unlock(&d->lock);
		return error_errno(-ENOTSUP, "snapshot: the TPM's worker was not held");
	}
	d->job = job;
	d->job_arg = arg;
	pthread_cond_broadcast(&d->cond);
	while (d->job && !d->gone)
		pthread_cond_wait(&d->cond, &d->lock);
	ret = d->job ? -ENOTSUP : d->job_ret;
	d->job = NULL;
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/* On the held worker: swtpm's three blobs from the running TPM (no
 * CMD_STOP: with --resume the same TPM goes on) appended to arg. */
static int tpm_job_save(struct tpm_dev *d, void *arg)
{
	static const uint32_t types[3] = {TPM_SWTPM_BLOB_PERMANENT, TPM_SWTPM_BLOB_VOLATILE,
					  TPM_SWTPM_BLOB_SAVESTATE};
	struct snap_buf *b = arg;
	uint8_t *p;
	size_t len;
	uint32_t flags;
	int ret = 0;

	for (int k = 0; k < 3 && !ret; k++) {
		ret = tpm_swtpm_get_blob(&d->sw, types[k], &p, &len, &flags);
		if (!ret)
			tpm_snap_put_blob(b, types[k], p, len, flags);
		free(p);
		if (ret)
			error_errno(ret, "snapshot: cannot take the TPM's state from swtpm");
	}
	return ret;
}

/* The registers, then the blobs. */
int tpm_dev_save(void *state, struct snap_buf *b)
{
	struct tpm_dev *d = state;
	struct tpm_snap_if i = tpm_if(d);
	int ret;

	ret = tpm_snap_put_regs(&i, b);
	if (!ret)
		ret = tpm_held_job(d, tpm_job_save, b);
	return ret ? ret : b->err;
}

/* A persistent TPM: the directory must hold the permanent state saved
 * (as the EFI variable store must: another one, or written since, is
 * refused). */
static int tpm_same_permanent(struct tpm_dev *d, const struct tpm_snap_blobs *bl)
{
	uint8_t *p = NULL;
	size_t len = 0;
	uint32_t flags;
	int ret;

	ret = tpm_swtpm_get_blob(&d->sw, TPM_SWTPM_BLOB_PERMANENT, &p, &len, &flags);
	if (ret)
		return error_errno(ret, "restore: cannot read the TPM's state from swtpm");
	if (len != bl->len[0] || flags != bl->flags[0] || memcmp(p, bl->p[0], len))
		ret = error_errno(-ESTALE,
				  "restore: %s is not the TPM state of the snapshot "
				  "(another one, or written since)",
				  d->state_dir);
	free(p);
	return ret;
}

/* The TPM powered off, given the saved blobs and on again: it resumes. */
static int tpm_restore_blobs(struct tpm_dev *d, const struct tpm_snap_blobs *bl)
{
	static const uint32_t types[3] = {TPM_SWTPM_BLOB_PERMANENT, TPM_SWTPM_BLOB_VOLATILE,
					  TPM_SWTPM_BLOB_SAVESTATE};
	int ret = tpm_swtpm_stop_tpm(&d->sw);

	for (int k = 0; k < 3 && !ret; k++)
		if (bl->len[k])
			ret = tpm_swtpm_set_blob(&d->sw, types[k], bl->p[k], bl->len[k],
						 bl->flags[k]);
	if (!ret)
		ret = tpm_swtpm_init(&d->sw, TPM_SWTPM_INIT_DELETE_VOLATILE);
	if (ret)
		return error_errno(-EINVAL, "restore: swtpm refused the saved TPM state");
	return 0;
}

/* On the held worker: the saved blobs (arg) into swtpm; the
 * interface's tpmEstablished from it. */
static int tpm_job_load(struct tpm_dev *d, void *arg)
{
	const struct tpm_snap_blobs *bl = arg;
	int ret = 0, est;

	if (d->persistent)
		ret = tpm_same_permanent(d, bl);
	if (!ret)
		ret = tpm_restore_blobs(d, bl);
	if (ret)
		return ret;
	est = tpm_swtpm_established(&d->sw);
	if (d->tis)
		tpm_tis_set_established(&d->tis_regs, est > 0);
	else
		tpm_crb_set_established(&d->crb, est > 0);
	return 0;
}

int tpm_dev_load(void *state, struct snap_cur *in)
{
	struct tpm_dev *d = state;
	struct tpm_snap_if i = tpm_if(d);
	struct tpm_snap_regs r;
	struct tpm_snap_blobs bl;
	int ret;

	ret = tpm_snap_parse(&i, in, &r, &bl);
	if (ret)
		return ret;
	ret = tpm_dev_freeze(d);
	if (ret)
		return ret;
	ret = tpm_held_job(d, tpm_job_load, &bl);
	if (!ret)
		tpm_snap_apply(&i, &r);
	tpm_dev_thaw(d);
	return ret;
}
