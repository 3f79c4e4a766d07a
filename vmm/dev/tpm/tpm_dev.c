/* SPDX-License-Identifier: MIT */
/*
 * tpm_dev.c - the TPM device: CRB window, swtpm, worker thread
 * (tpm_dev.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arch/x86_64/layout.h"
#include "vmm/dev/tpm/tpm_crb.h"
#include "vmm/dev/tpm/tpm_dev.h"
#include "vmm/dev/tpm/tpm_snap.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/dev/tpm/tpm_swtpm.h"
#include "vmm/dev/tpm/tpm_tis.h"
#include "vmm/util/file.h"
#include "vmm/util/log.h"
#include "vmm/util/thread.h"
#include "vmm/vm/bus.h"
#include "vmm/vm_config.h"

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
	/* freeze (below): the worker held between two commands */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool hold, held, quit, gone;
	pthread_t thread;
	int kick_fd, stop_fd;
	uint8_t cmd[TPM_DEV_BUF], rsp[TPM_DEV_BUF];
};

/* The interface the guest sees: its worker side. */
static size_t tpm_take(struct tpm_dev *d)
{
	if (d->tis)
		return tpm_tis_take(&d->tis_regs, d->cmd, sizeof(d->cmd));
	return tpm_crb_take(&d->crb, d->cmd, sizeof(d->cmd));
}

static int tpm_complete(struct tpm_dev *d, size_t len)
{
	if (d->tis)
		return tpm_tis_complete(&d->tis_regs, d->rsp, len);
	return tpm_crb_complete(&d->crb, d->rsp, len);
}

static void tpm_kick(void *opaque)
{
	struct tpm_dev *d = opaque;
	uint64_t one = 1;

	/* fails only at the counter's limit: a kick is pending then */
	(void)!write(d->kick_fd, &one, sizeof(one));
}

/* swtpm is gone or broke the protocol: say so, and end the VM. */
static void tpm_dead(struct tpm_dev *d, int err)
{
	int st;

	if (d->tis)
		tpm_tis_fail(&d->tis_regs);
	else
		tpm_crb_fail(&d->crb);
	if (d->sw.pid > 0 && err != -EPIPE)
		kill(d->sw.pid, SIGTERM);
	if (d->sw.ctrl >= 0)
		close(d->sw.ctrl);
	if (d->sw.data >= 0)
		close(d->sw.data);
	d->sw.ctrl = d->sw.data = -1;
	st = tpm_swtpm_reap(&d->sw);
	if (st >= 0 && WIFEXITED(st))
		error("tpm: swtpm exited with status %d: the VM stops (its TPM is gone)",
		      WEXITSTATUS(st));
	else if (st >= 0 && WIFSIGNALED(st))
		error("tpm: swtpm was killed by signal %d: the VM stops (its TPM is gone)",
		      WTERMSIG(st));
	else
		error_errno(err, "tpm: swtpm failed: the VM stops (its TPM is gone)");
	device_request_exit(d->vm, VM_EXIT_CRASH);
}

/* Between two commands: held while a freeze asks (tpm_freeze). */
static void tpm_dev_hold_point(struct tpm_dev *d)
{
	pthread_mutex_lock(&d->lock);
	if (d->hold && !d->quit) {
		d->held = true;
		pthread_cond_broadcast(&d->cond);
		while (d->hold && !d->quit)
			pthread_cond_wait(&d->cond, &d->lock);
		d->held = false;
	}
	pthread_mutex_unlock(&d->lock);
}

/* One command the guest started: 0, -ECANCELED (teardown) or -errno. */
static int tpm_serve(struct tpm_dev *d)
{
	size_t n = tpm_take(d), len = 0;
	int ret;

	if (!n)
		return 0;
	ret = tpm_swtpm_exchange(&d->sw, d->cmd, n, d->rsp, sizeof(d->rsp), &len, d->stop_fd);
	if (!ret)
		ret = tpm_complete(d, len);
	return ret;
}

static void *tpm_worker(void *arg)
{
	struct tpm_dev *d = arg;
	struct pollfd p[3] = {{.fd = d->stop_fd, .events = POLLIN},
			      {.fd = d->kick_fd, .events = POLLIN},
			      {.fd = d->sw.data, .events = POLLIN}};
	uint64_t v;
	int ret = 0;

	while (!ret) {
		if (poll(p, 3, -1) < 0) {
			ret = errno == EINTR ? 0 : -errno;
			continue;
		}
		if (p[0].revents)
			break;
		if (p[2].revents) /* swtpm speaks only when asked: it hung up */
			ret = -EPIPE;
		else if (p[1].revents && read(d->kick_fd, &v, sizeof(v)) == sizeof(v))
			ret = tpm_serve(d);
		if (!ret)
			tpm_dev_hold_point(d);
	}
	if (ret && ret != -ECANCELED)
		tpm_dead(d, ret);
	else
		tpm_swtpm_stop(&d->sw);
	pthread_mutex_lock(&d->lock);
	d->gone = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/*
 * A state directory that already existed must be this user's (or the user
 * swtpm runs as, who was given it at an earlier run) and closed to everyone
 * else: it holds the TPM's seeds (whoever reads them can unseal the guest's
 * secrets and forge its attestation), and whoever may write in it chooses
 * the state the guest's TPM starts from. fd, or -EPERM (fd closed).
 */
static int tpm_state_dir_check(const struct device_firmware *fw, int fd, const char *dir)
{
	bool mine;
	struct stat st;

	if (fstat(fd, &st) < 0) {
		int err = -errno;

		close(fd);
		return error_errno(err, "tpm: the TPM state directory %s", dir);
	}
	mine = st.st_uid == geteuid() || (fw->run_as_set && st.st_uid == fw->run_as_uid);
	if (!mine || (st.st_mode & 077)) {
		close(fd);
		return error_errno(
		    -EPERM,
		    "tpm: the TPM state directory %s must belong to this user "
		    "(or --user's) and be closed to others (mode 0700): it holds the TPM's secrets",
		    dir);
	}
	return fd;
}

/* The state swtpm keeps: a directory (persistent), else an unnamed file. */
static int tpm_open_state(const struct device_env *env, bool *is_dir)
{
	const char *dir = env->fw ? env->fw->tpm_state : NULL;
	const char *tmp = getenv("TMPDIR");
	int fd;

	*is_dir = env->cfg->tpm_persistent && dir;
	if (!*is_dir && env->fw && env->fw->tpm_state_kept) {
		fd = fcntl(env->fw->tpm_state_fd, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? error_errno(-errno, "tpm: the TPM's state file") : fd;
	}
	if (!*is_dir) {
		fd = file_tmp(tmp && *tmp ? tmp : "/tmp");
		return fd < 0 ? error_errno(fd, "tpm: cannot make the TPM's state file") : fd;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return error_errno(-errno, "tpm: cannot make the TPM state directory %s", dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_errno(-errno, "tpm: cannot open the TPM state directory %s%s", dir,
				   errno == ELOOP || errno == ENOTDIR ? " (not a directory)" : "");
	return tpm_state_dir_check(env->fw, fd, dir);
}

/*
 * Give one entry of the state directory to fw's user. Only swtpm's own
 * files are given: a regular file with no other link. Whoever could write
 * in the directory (that user, at an earlier run) might have planted a
 * hard link to a host file there, which a chown as root would hand over;
 * the entry is opened once (O_PATH, no link followed) and checked and
 * chowned through that descriptor, so it cannot be swapped between.
 */
static int tpm_state_own_entry(const struct device_firmware *fw, int dirfd, const char *name)
{
	struct stat st;
	int fd, ret = 0;

	fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_errno(-errno, "tpm: %s in the TPM state directory", name);
	if (fstat(fd, &st) < 0)
		ret = error_errno(-errno, "tpm: %s in the TPM state directory", name);
	else if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
		ret = error_errno(-EPERM,
				  "tpm: %s in the TPM state directory is not a file of swtpm's "
				  "(a link, a directory or a file with another name elsewhere)",
				  name);
	else if (fchownat(fd, "", fw->run_as_uid, fw->run_as_gid, AT_EMPTY_PATH) < 0)
		ret = error_errno(-errno, "tpm: cannot give %s of the TPM state to uid %u", name,
				  (unsigned int)fw->run_as_uid);
	close(fd);
	return ret;
}

/*
 * swtpm runs as vmlet's --user: the state becomes that user's (the
 * directory and the files in it, never following a link), and swtpm is
 * told to switch to it (--runas) once it has opened its descriptors.
 */
static int tpm_state_own(const struct device_env *env, struct tpm_swtpm_config *sc)
{
	const struct device_firmware *fw = env->fw;
	struct dirent *e;
	DIR *d;
	int fd, ret = 0;

	if (!fw || !fw->run_as_set || fw->run_as_uid == geteuid())
		return 0;
	sc->run_as = true;
	sc->uid = fw->run_as_uid;
	if (fchown(sc->state_fd, fw->run_as_uid, fw->run_as_gid) < 0)
		return error_errno(-errno, "tpm: cannot give the TPM's state to uid %u",
				   (unsigned int)fw->run_as_uid);
	if (!sc->state_is_dir)
		return 0;
	fd = fcntl(sc->state_fd, F_DUPFD_CLOEXEC, 0);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return error_errno(-errno, "tpm: the TPM state directory");
	}
	while (!ret && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			ret = tpm_state_own_entry(fw, sc->state_fd, e->d_name);
	closedir(d);
	return ret;
}

static void tpm_destroy(void *state)
{
	struct tpm_dev *d = state;
	uint64_t one = 1;

	if (!d)
		return;
	if (d->started) {
		pthread_mutex_lock(&d->lock);
		d->quit = true;
		pthread_cond_broadcast(&d->cond);
		pthread_mutex_unlock(&d->lock);
		(void)!write(d->stop_fd, &one, sizeof(one));
		pthread_join(d->thread, NULL);
	} else {
		tpm_swtpm_stop(&d->sw);
	}
	if (d->registered)
		bus_unregister(d->mmio, ARCH_TPM_CRB_GPA);
	if (d->kick_fd >= 0)
		close(d->kick_fd);
	if (d->stop_fd >= 0)
		close(d->stop_fd);
	if (d->tis)
		tpm_tis_release(&d->tis_regs);
	else
		tpm_crb_release(&d->crb);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static int tpm_start(struct tpm_dev *d, const struct device_env *env)
{
	struct tpm_swtpm_config sc = {0};
	int ret, est;

	sc.state_fd = tpm_open_state(env, &sc.state_is_dir);
	if (sc.state_fd < 0)
		return sc.state_fd;
	ret = tpm_state_own(env, &sc);
	if (!ret)
		ret = tpm_swtpm_start(&sc, &d->sw);
	close(sc.state_fd);
	if (ret)
		return ret;
	d->persistent = sc.state_is_dir;
	d->state_dir = sc.state_is_dir ? env->fw->tpm_state : NULL;
	est = tpm_swtpm_established(&d->sw);
	if (d->tis)
		tpm_tis_set_established(&d->tis_regs, est > 0);
	else
		tpm_crb_set_established(&d->crb, est > 0);
	d->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (d->kick_fd < 0 || d->stop_fd < 0)
		return error_errno(-errno, "tpm: eventfd");
	if (d->tis)
		ret = bus_register(d->mmio, ARCH_TPM_CRB_GPA, TPM_TIS_WINDOW, &tpm_tis_ops,
				   &d->tis_regs);
	else
		ret =
		    bus_register(d->mmio, ARCH_TPM_CRB_GPA, TPM_CRB_WINDOW, &tpm_crb_ops, &d->crb);
	if (ret)
		return error_errno(ret, "tpm: cannot claim the TPM's window");
	d->registered = true;
	ret = thread_start(&d->thread, THREAD_HELPER, "vmlet-tpm", tpm_worker, d);
	if (ret)
		return error_errno(ret, "tpm: cannot start its thread");
	d->started = true;
	return 0;
}

static int tpm_create(const struct device_env *env, unsigned int index, void **state)
{
	struct tpm_dev *d;
	int ret;

	(void)index;
	if (!env->cfg->tpm)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->vm = env->vm;
	d->mmio = env->mmio;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	d->kick_fd = d->stop_fd = -1;
	d->sw = (struct tpm_swtpm){.pid = -1, .ctrl = -1, .data = -1};
	/* as KubeVirt: tpm: {} is libvirt's tpm-tis, persistent its tpm-crb */
	d->tis = !env->cfg->tpm_persistent;
	if (d->tis)
		tpm_tis_init(&d->tis_regs, tpm_kick, d);
	else
		tpm_crb_init(&d->crb, ARCH_TPM_CRB_GPA, tpm_kick, d);
	ret = tpm_start(d, env);
	if (ret) {
		tpm_destroy(d);
		return ret;
	}
	log_info("tpm: TPM 2.0 (%s at 0x%llx) backed by swtpm pid %d, %s state",
		 d->tis ? "TIS" : "CRB", (unsigned long long)ARCH_TPM_CRB_GPA, (int)d->sw.pid,
		 env->cfg->tpm_persistent ? "persistent" : "this run's");
	*state = d;
	return 0;
}

/*
 * The snapshot (tpm_snap.h, docs/snapshot.md). freeze holds the worker
 * between two commands (a command swtpm has finishes first; vCPUs are
 * held, so no new one comes), waiting up to TPM_DEV_FREEZE_S, and then
 * wants an interface with no command in it (-EAGAIN: try again). The
 * main thread then has swtpm's channels alone.
 */
#define TPM_DEV_FREEZE_S 5

static struct tpm_snap_if tpm_if(struct tpm_dev *d)
{
	return (struct tpm_snap_if){.tis = d->tis, .t = &d->tis_regs, .c = &d->crb};
}

static void tpm_thaw(void *state)
{
	struct tpm_dev *d = state;

	pthread_mutex_lock(&d->lock);
	d->hold = false;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

static int tpm_freeze(void *state)
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
	tpm_kick(d);
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
		tpm_thaw(d);
	return ret;
}

static bool tpm_held(struct tpm_dev *d)
{
	bool held;

	pthread_mutex_lock(&d->lock);
	held = d->held;
	pthread_mutex_unlock(&d->lock);
	return held;
}

/* The registers, then swtpm's three blobs from the running TPM (no
 * CMD_STOP: with --resume the same TPM goes on). */
static int tpm_save(void *state, struct snap_buf *b)
{
	static const uint32_t types[3] = {TPM_SWTPM_BLOB_PERMANENT, TPM_SWTPM_BLOB_VOLATILE,
					  TPM_SWTPM_BLOB_SAVESTATE};
	struct tpm_dev *d = state;
	struct tpm_snap_if i = tpm_if(d);
	uint8_t *p;
	size_t len;
	uint32_t flags;
	int ret;

	if (!tpm_held(d))
		return error_errno(-ENOTSUP, "snapshot: the TPM's worker was not held");
	ret = tpm_snap_put_regs(&i, b);
	for (int k = 0; k < 3 && !ret; k++) {
		ret = tpm_swtpm_get_blob(&d->sw, types[k], &p, &len, &flags);
		if (!ret)
			tpm_snap_put_blob(b, types[k], p, len, flags);
		free(p);
		if (ret)
			error_errno(ret, "snapshot: cannot take the TPM's state from swtpm");
	}
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

static int tpm_load(void *state, struct snap_cur *in)
{
	struct tpm_dev *d = state;
	struct tpm_snap_if i = tpm_if(d);
	struct tpm_snap_regs r;
	struct tpm_snap_blobs bl;
	int ret, est;

	ret = tpm_snap_parse(&i, in, &r, &bl);
	if (ret)
		return ret;
	ret = tpm_freeze(d);
	if (ret)
		return ret;
	if (d->persistent)
		ret = tpm_same_permanent(d, &bl);
	if (!ret)
		ret = tpm_restore_blobs(d, &bl);
	if (!ret) {
		tpm_snap_apply(&i, &r);
		est = tpm_swtpm_established(&d->sw);
		if (d->tis)
			tpm_tis_set_established(&d->tis_regs, est > 0);
		else
			tpm_crb_set_established(&d->crb, est > 0);
	}
	tpm_thaw(d);
	return ret;
}

const struct device_type tpm_device = {
    .name = "tpm",
    .create = tpm_create,
    .destroy = tpm_destroy,
    .save = tpm_save,
    .load = tpm_load,
    .freeze = tpm_freeze,
    .thaw = tpm_thaw,
};
