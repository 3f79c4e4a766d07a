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
#include <unistd.h>

#include "arch/x86_64/layout.h"
#include "vmm/dev/tpm/tpm_crb.h"
#include "vmm/dev/tpm/tpm_dev.h"
#include "vmm/dev/tpm/tpm_dev_int.h"
#include "vmm/dev/tpm/tpm_swtpm.h"
#include "vmm/dev/tpm/tpm_tis.h"
#include "vmm/util/file.h"
#include "vmm/util/log.h"
#include "vmm/util/thread.h"
#include "vmm/vm/bus.h"
#include "vmm/vm_config.h"

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

void tpm_dev_kick(void *opaque)
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

/* Between two commands: held while a freeze asks (tpm_dev_snap.c), doing
 * the main thread's jobs (tpm_held_job). */
static void tpm_dev_hold_point(struct tpm_dev *d)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	if (d->hold && !d->quit) {
		d->held = true;
		pthread_cond_broadcast(&d->cond);
		while (d->hold && !d->quit) {
			if (d->job) {
				int (*job)(struct tpm_dev *, void *) = d->job;

				pthread_mutex_unlock(&d->lock);
				ret = job(d, d->job_arg);
				pthread_mutex_lock(&d->lock);
				d->job_ret = ret;
				d->job = NULL;
				pthread_cond_broadcast(&d->cond);
				continue;
			}
			pthread_cond_wait(&d->cond, &d->lock);
		}
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
		tpm_tis_init(&d->tis_regs, tpm_dev_kick, d);
	else
		tpm_crb_init(&d->crb, ARCH_TPM_CRB_GPA, tpm_dev_kick, d);
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

const struct device_type tpm_device = {
    .name = "tpm",
    .create = tpm_create,
    .destroy = tpm_destroy,
    .save = tpm_dev_save,
    .load = tpm_dev_load,
    .freeze = tpm_dev_freeze,
    .thaw = tpm_dev_thaw,
};
