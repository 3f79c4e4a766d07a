/* SPDX-License-Identifier: MIT */
/*
 * tpm_swtpm.c - swtpm as the TPM's backend (tpm_swtpm.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/dev/tpm/tpm_swtpm.h"
#include "vmm/util/log.h"
#include "vmm/util/thread.h"

/* The descriptors swtpm gets. */
#define SWTPM_DATA_FD  3
#define SWTPM_CTRL_FD  4
#define SWTPM_STATE_FD 5

/* CMD_GET_STATEBLOB's result when swtpm has no blob of the type (its
 * TPM_RETRY: the state's file does not exist); no more bytes follow */
#define SWTPM_RES_NO_BLOB 0x800u

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * A peer gone makes write() raise SIGPIPE. vmlet's own threads block it
 * (thread.h) and their sandbox admits write() but not send(); the main
 * thread (setup, teardown of a device that never started) does not block
 * it and is not sandboxed yet: send() with MSG_NOSIGNAL there.
 */
static int write_all(int fd, const uint8_t *p, size_t len)
{
	bool main_thread = thread_current_role() == THREAD_MAIN;

	while (len) {
		ssize_t n = main_thread ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == ECONNRESET ? -EPIPE : -errno;
		p += n, len -= (size_t)n;
	}
	return 0;
}

/* Wait until fd is readable; stop_fd readable first: -ECANCELED. */
static int wait_readable(int fd, int stop_fd)
{
	struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};

	for (;;) {
		int n = poll(p, stop_fd >= 0 ? 2 : 1, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (stop_fd >= 0 && (p[1].revents & POLLIN))
			return -ECANCELED;
		if (p[0].revents)
			return 0;
	}
}

/* Exactly len bytes (an end of stream before: -EPIPE). */
static int read_all(int fd, uint8_t *p, size_t len, int stop_fd)
{
	while (len) {
		ssize_t n;
		int ret = wait_readable(fd, stop_fd);

		if (ret)
			return ret;
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == ECONNRESET ? -EPIPE : -errno;
		if (n == 0)
			return -EPIPE;
		p += n, len -= (size_t)n;
	}
	return 0;
}

int tpm_swtpm_ctrl(struct tpm_swtpm *s, uint32_t cmd, const void *req, size_t req_len,
		   uint32_t *result, void *rsp, size_t rsp_len)
{
	uint8_t msg[4 + 16], r[4];
	int ret;

	if (s->ctrl < 0)
		return -EPIPE;
	if (req_len > sizeof(msg) - 4)
		return -EINVAL;
	put_be32(msg, cmd);
	if (req_len)
		memcpy(msg + 4, req, req_len);
	ret = write_all(s->ctrl, msg, 4 + req_len);
	if (!ret)
		ret = read_all(s->ctrl, r, sizeof(r), -1);
	if (!ret && rsp_len)
		ret = read_all(s->ctrl, rsp, rsp_len, -1);
	if (!ret)
		*result = get_be32(r);
	return ret;
}

int tpm_swtpm_exchange(struct tpm_swtpm *s, const uint8_t *cmd, size_t len, uint8_t *rsp,
		       size_t cap, size_t *rsp_len, int stop_fd)
{
	uint32_t size;
	int ret;

	if (s->data < 0)
		return -EPIPE;
	if (cap < 10)
		return -EINVAL;
	ret = write_all(s->data, cmd, len);
	if (!ret)
		ret = read_all(s->data, rsp, 10, stop_fd);
	if (ret)
		return ret;
	size = get_be32(rsp + 2);
	if (size < 10 || size > cap)
		return -EPROTO;
	ret = read_all(s->data, rsp + 10, size - 10, stop_fd);
	if (!ret)
		*rsp_len = size;
	return ret;
}

int tpm_swtpm_get_blob(struct tpm_swtpm *s, uint32_t type, uint8_t **blob, size_t *len,
		       uint32_t *flags)
{
	uint8_t msg[16], hdr[16], *p = NULL;
	uint32_t tot, part;
	int ret;

	*blob = NULL, *len = 0, *flags = 0;
	if (s->ctrl < 0)
		return -EPIPE;
	/* the command, state_flags 0, the type, offset 0 */
	put_be32(msg, TPM_SWTPM_CMD_GET_STATEBLOB);
	put_be32(msg + 4, 0);
	put_be32(msg + 8, type);
	put_be32(msg + 12, 0);
	ret = write_all(s->ctrl, msg, sizeof(msg));
	/* the result, state_flags, the total length, this part's length */
	if (!ret)
		ret = read_all(s->ctrl, hdr, sizeof(hdr), -1);
	if (ret)
		return ret;
	if (get_be32(hdr) == SWTPM_RES_NO_BLOB)
		return 0; /* none of this type (a savestate before any save) */
	if (get_be32(hdr))
		return error_errno(-EIO, "tpm: swtpm refused its state blob %u (TPM result 0x%x)",
				   type, get_be32(hdr));
	tot = get_be32(hdr + 8), part = get_be32(hdr + 12);
	if (tot > TPM_SWTPM_BLOB_MAX || part > tot)
		return error_errno(-EPROTO, "tpm: swtpm's state blob %u: %u of %u bytes", type,
				   part, tot);
	if (tot && !(p = malloc(tot)))
		return -ENOMEM;
	/* the part follows the header, the rest (if any) right after it */
	ret = tot ? read_all(s->ctrl, p, tot, -1) : 0;
	if (ret) {
		free(p);
		return ret;
	}
	*blob = p, *len = tot, *flags = get_be32(hdr + 4) & TPM_SWTPM_BLOB_ENCRYPTED;
	return 0;
}

/* A control command whose answer is its result alone: 0 or -EIO/-errno. */
static int swtpm_simple(struct tpm_swtpm *s, uint32_t cmd, const void *req, size_t req_len,
			const char *what)
{
	uint32_t res;
	int ret = tpm_swtpm_ctrl(s, cmd, req, req_len, &res, NULL, 0);

	if (!ret && res)
		ret = error_errno(-EIO, "tpm: swtpm refused %s (TPM result 0x%x)", what, res);
	return ret;
}

int tpm_swtpm_stop_tpm(struct tpm_swtpm *s)
{
	return swtpm_simple(s, TPM_SWTPM_CMD_STOP, NULL, 0, "CMD_STOP");
}

int tpm_swtpm_init(struct tpm_swtpm *s, uint32_t flags)
{
	uint8_t f[4];

	put_be32(f, flags);
	return swtpm_simple(s, TPM_SWTPM_CMD_INIT, f, sizeof(f), "CMD_INIT");
}

int tpm_swtpm_set_blob(struct tpm_swtpm *s, uint32_t type, const uint8_t *blob, size_t len,
		       uint32_t flags)
{
	uint8_t msg[16], r[4];
	int ret;

	if (s->ctrl < 0)
		return -EPIPE;
	if (len > TPM_SWTPM_BLOB_MAX)
		return -EINVAL;
	/* the command, state_flags, the type, the length; then the bytes */
	put_be32(msg, TPM_SWTPM_CMD_SET_STATEBLOB);
	put_be32(msg + 4, flags & TPM_SWTPM_BLOB_ENCRYPTED);
	put_be32(msg + 8, type);
	put_be32(msg + 12, (uint32_t)len);
	ret = write_all(s->ctrl, msg, sizeof(msg));
	if (!ret && len)
		ret = write_all(s->ctrl, blob, len);
	if (!ret)
		ret = read_all(s->ctrl, r, sizeof(r), -1);
	if (!ret && get_be32(r))
		ret = error_errno(-EIO, "tpm: swtpm refused the state blob %u (TPM result 0x%x)",
				  type, get_be32(r));
	return ret;
}

int tpm_swtpm_established(struct tpm_swtpm *s)
{
	uint32_t res;
	uint8_t bit[4];
	int ret;

	/* struct ptmest: the result, the bit, padding to 8 bytes */
	ret = tpm_swtpm_ctrl(s, TPM_SWTPM_CMD_GET_ESTABLISHED, NULL, 0, &res, bit, sizeof(bit));
	if (ret)
		return ret;
	return res ? -EIO : (bit[0] & 1);
}

static const char *swtpm_binary(const struct tpm_swtpm_config *cfg)
{
	const char *env = getenv("VMLET_SWTPM");

	if (cfg->binary)
		return cfg->binary;
	return env && *env ? env : "swtpm";
}

/*
 * swtpm's whole environment: vmlet's own (the user's variables, perhaps
 * secrets, LD_PRELOAD or OPENSSL_CONF that would steer the child) is not
 * passed on. swtpm needs none; PATH for anything it might run. The binary
 * itself is still found through vmlet's PATH (posix_spawnp).
 */
static char *const swtpm_env[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", NULL};

static int swtpm_spawn_fds(const struct tpm_swtpm_config *cfg, const int fd[3], pid_t *pid)
{
	char state[64], uid[16];
	const char *bin = swtpm_binary(cfg);
	char *argv[] = {
	    (char *)bin,  "socket", "--tpm2",  "--fd", "3", "--ctrl", "type=unixio,clientfd=4",
	    "--tpmstate", state,    "--runas", uid,    NULL};
	posix_spawn_file_actions_t fa;
	int ret;

	snprintf(state, sizeof(state),
		 cfg->state_is_dir ? "dir=/proc/self/fd/%d" : "backend-uri=file:///proc/self/fd/%d",
		 SWTPM_STATE_FD);
	snprintf(uid, sizeof(uid), "%u", (unsigned int)cfg->uid);
	if (!cfg->run_as)
		argv[9] = NULL; /* no --runas */
	if (posix_spawn_file_actions_init(&fa))
		return -ENOMEM;
	ret = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	ret = ret ?: posix_spawn_file_actions_adddup2(&fa, 2, 1);
	ret = ret ?: posix_spawn_file_actions_adddup2(&fa, fd[0], SWTPM_DATA_FD);
	ret = ret ?: posix_spawn_file_actions_adddup2(&fa, fd[1], SWTPM_CTRL_FD);
	ret = ret ?: posix_spawn_file_actions_adddup2(&fa, fd[2], SWTPM_STATE_FD);
	ret = ret ?: posix_spawn_file_actions_addclosefrom_np(&fa, SWTPM_STATE_FD + 1);
	ret = ret
		  ?: (strchr(bin, '/') ? posix_spawn : posix_spawnp)(pid, bin, &fa, NULL, argv,
								     swtpm_env);
	posix_spawn_file_actions_destroy(&fa);
	if (ret == ENOENT)
		return error_errno(-ENOENT,
				   "tpm: cannot run %s (devices.tpm needs Debian's "
				   "swtpm package, or VMLET_SWTPM)",
				   bin);
	if (ret)
		return error_errno(-ret, "tpm: cannot run %s", bin);
	return 0;
}

/*
 * The child's fds 3, 4, 5 from src[]: each source is first copied above
 * them (close-on-exec, in vmlet), so that no dup2() overwrites a source a
 * later one still needs (the state fd may well be 3). *pid, or -errno.
 */
static int swtpm_spawn(const struct tpm_swtpm_config *cfg, int data, int ctrl, pid_t *pid)
{
	int src[3] = {data, ctrl, cfg->state_fd}, hi[3] = {-1, -1, -1}, ret = 0;

	for (int i = 0; i < 3 && !ret; i++) {
		hi[i] = fcntl(src[i], F_DUPFD_CLOEXEC, SWTPM_STATE_FD + 1);
		if (hi[i] < 0)
			ret = error_errno(-errno, "tpm: dup");
	}
	if (!ret)
		ret = swtpm_spawn_fds(cfg, hi, pid);
	for (int i = 0; i < 3; i++)
		if (hi[i] >= 0)
			close(hi[i]);
	return ret;
}

int tpm_swtpm_start(const struct tpm_swtpm_config *cfg, struct tpm_swtpm *out)
{
	int dsv[2] = {-1, -1}, csv[2] = {-1, -1}, ret;
	uint8_t flags[4] = {0};
	uint32_t res;
	pid_t pid = -1;

	*out = (struct tpm_swtpm){.pid = -1, .ctrl = -1, .data = -1};
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, dsv) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, csv) < 0) {
		ret = error_errno(-errno, "tpm: socketpair");
		goto out_close;
	}
	ret = swtpm_spawn(cfg, dsv[1], csv[1], &pid);
	if (ret)
		goto out_close;
	/* swtpm's ends are its own now: one that dies before answering
	 * CMD_INIT must be an end of stream here, not a wait forever */
	close(dsv[1]), close(csv[1]);
	dsv[1] = csv[1] = -1;
	out->pid = pid;
	out->data = dsv[0], out->ctrl = csv[0];
	dsv[0] = csv[0] = -1;
	ret = tpm_swtpm_ctrl(out, TPM_SWTPM_CMD_INIT, flags, sizeof(flags), &res, NULL, 0);
	if (ret || res) {
		ret = ret ? error_errno(ret, "tpm: swtpm did not start")
			  : error_errno(-EIO, "tpm: swtpm refused CMD_INIT (TPM result 0x%x)", res);
		tpm_swtpm_stop(out);
	}
out_close:
	for (int i = 0; i < 2; i++) {
		if (dsv[i] >= 0)
			close(dsv[i]);
		if (csv[i] >= 0)
			close(csv[i]);
	}
	return ret;
}

int tpm_swtpm_reap(struct tpm_swtpm *s)
{
	int st;

	if (s->pid <= 0)
		return -ECHILD;
	while (waitpid(s->pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	s->pid = -1;
	return st;
}

/* Reap within about ms milliseconds: the status, or -ETIMEDOUT. */
static int swtpm_reap_within(struct tpm_swtpm *s, int ms)
{
	int st;

	if (s->pid <= 0)
		return -ECHILD;
	for (; ms > 0; ms -= 10) {
		pid_t p = waitpid(s->pid, &st, WNOHANG);

		if (p == s->pid) {
			s->pid = -1;
			return st;
		}
		if (p < 0 && errno != EINTR)
			return -errno;
		(void)poll(NULL, 0, 10);
	}
	return -ETIMEDOUT;
}

void tpm_swtpm_stop(struct tpm_swtpm *s)
{
	uint32_t res;

	if (s->ctrl >= 0)
		(void)tpm_swtpm_ctrl(s, TPM_SWTPM_CMD_SHUTDOWN, NULL, 0, &res, NULL, 0);
	if (s->ctrl >= 0)
		close(s->ctrl);
	if (s->data >= 0)
		close(s->data);
	s->ctrl = s->data = -1;
	if (s->pid <= 0) /* never kill(-1) or (0): every process, the group */
		return;
	if (swtpm_reap_within(s, 1000) == -ETIMEDOUT) {
		kill(s->pid, SIGTERM);
		if (swtpm_reap_within(s, 1000) == -ETIMEDOUT) {
			kill(s->pid, SIGKILL);
			(void)tpm_swtpm_reap(s);
		}
	}
}
