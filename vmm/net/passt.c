/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "vmm/util/iov.h"
#include "vmm/util/log.h"
#include "vmm/net/backend.h"
#include "vmm/net/passt.h"
#include "vmm/net/pkt.h"
#include "vmm/vm_config.h"

#define PASST_CHILD_FD 3
#define RXBUF_SIZE     (2 * (NET_FRAME_MAX + 4))

/* What the supervisor sends with each new stream fd. */
struct passt_hello {
	int32_t pid;	     /* the new passt */
	int32_t last_status; /* wait status of the previous one; -1 at first */
	uint32_t starts;
	char why[PASST_WHY_MAX]; /* the previous one's last stderr line; "" none */
};

struct passt_be {
	struct net_backend be;
	int ctl;  /* SOCK_SEQPACKET to the supervisor */
	int data; /* stream to passt; -1 between two passts */
	pid_t pid;
	unsigned int starts;
	char why[PASST_WHY_MAX]; /* the last stderr line of the passt before */
	char *binary;
	char mtu[16], tcp[256], udp[256];
	uint8_t *rx; /* stream bytes not yet handed out */
	size_t rx_head, rx_tail;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int passt_port_specs(const struct vm_port *ports, unsigned int n, bool all_when_none, char *tcp,
		     size_t tcp_len, char *udp, size_t udp_len)
{
	size_t tl = 0, ul = 0;
	unsigned int i;

	tcp[0] = udp[0] = 0;
	for (i = 0; i < n; i++) {
		bool is_udp = ports[i].protocol && !strcasecmp(ports[i].protocol, "UDP");
		char *b = is_udp ? udp : tcp;
		size_t *l = is_udp ? &ul : &tl, cap = is_udp ? udp_len : tcp_len;
		int w;

		if (!ports[i].port)
			continue;
		w = snprintf(b + *l, cap - *l, "%s%u", *l ? "," : "", ports[i].port);
		if (w < 0 || (size_t)w >= cap - *l)
			return -ENAMETOOLONG;
		*l += (size_t)w;
	}
	if (!tl && !ul && all_when_none) {
		snprintf(tcp, tcp_len, "all");
		snprintf(udp, udp_len, "all");
		return 0;
	}
	if (!tl)
		snprintf(tcp, tcp_len, "none");
	if (!ul)
		snprintf(udp, udp_len, "none");
	return 0;
}

/* Child side of fork(): never returns. Async-signal-safe calls only. */
static void passt_exec(struct passt_be *p, int fd, int errfd)
{
	char fdstr[16];
	char *argv[16];
	int i = 0, null;

	if (fd != PASST_CHILD_FD) {
		if (dup2(fd, PASST_CHILD_FD) < 0)
			_exit(127);
	} else {
		fcntl(fd, F_SETFD, 0);
	}
	if (!strcmp(p->tcp, "all")) {
		/* a socket per port: take all the descriptors we may */
		struct rlimit rl;

		if (!getrlimit(RLIMIT_NOFILE, &rl)) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		/* passt's words go to the supervisor, which keeps its last line
		 * for vmlet's log (raw, they would break JSON logs) */
		dup2(errfd >= 0 ? errfd : null, 2);
	}
	snprintf(fdstr, sizeof(fdstr), "%d", PASST_CHILD_FD);
	argv[i++] = "passt";
	argv[i++] = "-f"; /* foreground: we are its supervisor */
	argv[i++] = "-q";
	argv[i++] = "-1"; /* quit when vmlet's end closes */
	argv[i++] = "-F";
	argv[i++] = fdstr;
	if (p->mtu[0]) {
		argv[i++] = "-m";
		argv[i++] = p->mtu;
	}
	argv[i++] = "-t";
	argv[i++] = p->tcp;
	argv[i++] = "-u";
	argv[i++] = p->udp;
	argv[i] = NULL;
	execvp(p->binary, argv);
	_exit(127);
}

/*
 * The supervisor: a process of its own (vmlet forks it during setup, before
 * the sandbox forbids new processes) that starts passt, hands vmlet each new
 * stream over ctl with SCM_RIGHTS, and restarts passt with backoff when it
 * exits. It leaves when ctl closes (vmlet exited or destroyed the backend),
 * stopping passt first. After fork() only async-signal-safe calls.
 */
static int send_fd(int ctl, int fd, const struct passt_hello *h)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {(void *)h, sizeof(*h)};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(ctl, &m, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/*
 * passt's stderr, drained as it comes (a full pipe would stall passt):
 * keeps the last complete line in line (printable characters only; cur
 * and *len hold the line being read). 1: read some, -1: nothing now,
 * 0: end of file (a last line without its newline is kept too).
 */
static int supervise_err(int fd, char *line, char *cur, size_t *len)
{
	char buf[256];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return -1;
	for (ssize_t i = 0; i <= n; i++) {
		bool end = i == n ? n <= 0 : buf[i] == '\n';

		if (end && *len) {
			memcpy(line, cur, *len);
			line[*len] = 0;
			*len = 0;
		} else if (i < n && !end && *len < PASST_WHY_MAX - 1) {
			cur[(*len)++] = buf[i] >= 0x20 && buf[i] < 0x7f ? buf[i] : '?';
		}
	}
	return n > 0;
}

/* Wait up to ms (-1: forever) for passt's exit (pidfd), keeping the last
 * line of its stderr (errfd, or -1) in why; false when ctl closed. */
static bool supervise_wait(int ctl, int pidfd, int errfd, char *why, int ms)
{
	struct pollfd p[3] = {{.fd = ctl, .events = POLLIN},
			      {.fd = pidfd, .events = POLLIN},
			      {.fd = errfd, .events = POLLIN}};
	char cur[PASST_WHY_MAX];
	size_t len = 0;

	for (;;) {
		int n = poll(p, 3, ms);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			return false;
		if (p[2].fd >= 0 && p[2].revents && !supervise_err(errfd, why, cur, &len))
			p[2].fd = -1; /* closed: wait for the exit alone */
		if (n && !(p[1].revents & POLLIN))
			continue;
		while (p[2].fd >= 0 && supervise_err(errfd, why, cur, &len) > 0)
			;    /* what it wrote last */
		return true; /* passt exited, or the backoff is over */
	}
}

static void __attribute__((noreturn)) passt_supervise(struct passt_be *p, int ctl)
{
	static const struct timeval sndtimeo = {.tv_sec = 1};
	struct passt_hello h = {.last_status = -1};
	unsigned int backoff = PASST_BACKOFF_MIN_MS;

	for (;;) {
		int sv[2], errp[2] = {-1, -1}, pidfd, st = 0;
		pid_t pid;
		long t0 = now_ms();

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			_exit(1);
		if (pipe2(errp, O_CLOEXEC | O_NONBLOCK) < 0)
			errp[0] = errp[1] = -1;
		pid = fork();
		if (pid == 0) {
			close(ctl);
			passt_exec(p, sv[1], errp[1]);
		}
		close(sv[1]);
		if (errp[1] >= 0)
			close(errp[1]);
		if (pid < 0)
			_exit(1);
		/* vmlet's sends block at most this long before the stream counts
		 * as broken (set here: vmlet's I/O thread may not setsockopt) */
		setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &sndtimeo, sizeof(sndtimeo));
		h.pid = pid;
		h.starts++;
		pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (send_fd(ctl, sv[0], &h) < 0) {
			kill(pid, SIGTERM);
			waitpid(pid, NULL, 0);
			_exit(0);
		}
		close(sv[0]);
		h.why[0] = 0;
		if (!supervise_wait(ctl, pidfd, errp[0], h.why, -1)) {
			kill(pid, SIGTERM);
			waitpid(pid, NULL, 0);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		if (pidfd >= 0)
			close(pidfd);
		if (errp[0] >= 0)
			close(errp[0]);
		h.last_status = st;
		if (now_ms() - t0 >= PASST_BACKOFF_RESET_MS)
			backoff = PASST_BACKOFF_MIN_MS;
		if (!supervise_wait(ctl, -1, -1, NULL, (int)backoff))
			_exit(0);
		backoff = backoff * 2 > PASST_BACKOFF_MAX_MS ? PASST_BACKOFF_MAX_MS : backoff * 2;
	}
}

/*
 * Fork the supervisor as a grandchild (the middle process exits at once and
 * is reaped here), so vmlet never has to wait for it: it belongs to init
 * (or the pod's pid 1) and ends by itself when ctl closes.
 */
static int passt_start_supervisor(struct passt_be *p)
{
	int sv[2], st;
	pid_t mid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return error_errno(-errno, "passt: socketpair");
	mid = fork();
	if (mid < 0) {
		close(sv[0]);
		close(sv[1]);
		return error_errno(-errno, "passt: fork");
	}
	if (mid == 0) {
		close(sv[0]);
		if (fork() == 0) {
			setsid(); /* away from the terminal's signals */
			/* keep none of vmlet's descriptors (taps, disks, KVM) */
			if (sv[1] != 3 && dup2(sv[1], 3) < 0)
				_exit(1);
			syscall(SYS_close_range, 4U, ~0U, 0U);
			passt_supervise(p, 3);
		}
		_exit(0);
	}
	close(sv[1]);
	waitpid(mid, &st, 0);
	p->ctl = sv[0];
	return 0;
}

/* A new stream from the supervisor, if one is waiting. */
static int passt_accept(struct passt_be *p, bool wait)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct passt_hello h;
	struct iovec iov = {&h, sizeof(h)};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	ssize_t n;
	int fd;

	if (wait) {
		struct pollfd pf = {.fd = p->ctl, .events = POLLIN};

		if (poll(&pf, 1, 5000) <= 0)
			return error("passt: supervisor did not start passt");
	}
	n = recvmsg(p->ctl, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	if (n == 0) {
		error("passt: supervisor exited");
		return -EPIPE;
	}
	c = CMSG_FIRSTHDR(&m);
	if ((size_t)n != sizeof(h) || !c || c->cmsg_type != SCM_RIGHTS) {
		error("passt: bad message from the supervisor");
		return -EPROTO;
	}
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	h.why[sizeof(h.why) - 1] = 0;
	if (h.last_status != -1)
		log_warn("passt: restarted (start %u) after it %s %d%s%s", h.starts,
			 WIFSIGNALED(h.last_status) ? "died of signal" : "exited with",
			 WIFSIGNALED(h.last_status) ? WTERMSIG(h.last_status)
						    : WEXITSTATUS(h.last_status),
			 h.why[0] ? ": " : "", h.why);
	memcpy(p->why, h.why, sizeof(p->why));
	p->data = p->be.fd = fd;
	p->pid = h.pid;
	p->starts = h.starts;
	p->rx_head = p->rx_tail = 0;
	return 0;
}

/* The stream broke: drop it and wait for the supervisor's next one. */
static void passt_disconnect(struct passt_be *p, const char *why)
{
	log_warn("passt: %s, waiting for a restart", why);
	close(p->data);
	p->data = -1;
	p->pid = -1;
	p->be.fd = p->ctl;
}

/*
 * Hand out one complete frame from the stream buffer, if there is one,
 * behind a zeroed vnet header; what iov cannot hold is lost (the whole
 * length is returned, as a tap does).
 */
static ssize_t passt_take(struct passt_be *p, const struct iovec *iov, int iovcnt)
{
	static const uint8_t zero_hdr[NET_VNET_HDR_LEN];
	size_t avail = p->rx_tail - p->rx_head;
	uint32_t len;

	if (avail < 4)
		return -EAGAIN;
	len = pkt_be32(p->rx + p->rx_head);
	if (len < PKT_ETH_HLEN || len > NET_FRAME_MAX - NET_VNET_HDR_LEN) {
		passt_disconnect(p, "bad frame length on the stream");
		return NET_BE_RECONNECTED;
	}
	if (avail < 4 + (size_t)len)
		return -EAGAIN;
	p->rx_head += 4 + len;
	iov_from_buf(iov, (unsigned int)iovcnt, 0, zero_hdr, NET_VNET_HDR_LEN);
	iov_from_buf(iov, (unsigned int)iovcnt, NET_VNET_HDR_LEN, p->rx + p->rx_head - len, len);
	return NET_VNET_HDR_LEN + (ssize_t)len;
}

static ssize_t passt_recv(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	struct passt_be *p = (struct passt_be *)be;
	ssize_t n;

	if (p->data < 0) {
		n = passt_accept(p, false);
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return -EAGAIN;
		return n < 0 ? n : NET_BE_RECONNECTED;
	}
	n = passt_take(p, iov, iovcnt);
	if (n != -EAGAIN)
		return n;
	/* compact, then read what the socket has */
	if (p->rx_head) {
		memmove(p->rx, p->rx + p->rx_head, p->rx_tail - p->rx_head);
		p->rx_tail -= p->rx_head;
		p->rx_head = 0;
	}
	n = recv(p->data, p->rx + p->rx_tail, RXBUF_SIZE - p->rx_tail, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		passt_disconnect(p, n == 0 ? "passt exited" : "stream error");
		return NET_BE_RECONNECTED;
	}
	if (n < 0)
		return -EAGAIN;
	p->rx_tail += (size_t)n;
	return passt_take(p, iov, iovcnt);
}

static int passt_send(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	struct passt_be *p = (struct passt_be *)be;
	struct iovec v[66];
	struct msghdr m = {.msg_iov = v};
	size_t total = 0, skip = NET_VNET_HDR_LEN;
	uint8_t len[4];
	int i, n = 1;

	if (p->data < 0)
		return -ENOTCONN;
	if (iovcnt > 64)
		return -EMSGSIZE;
	v[0].iov_base = len;
	v[0].iov_len = 4;
	for (i = 0; i < iovcnt; i++) { /* drop the vnet header */
		size_t s = skip < iov[i].iov_len ? skip : iov[i].iov_len;

		skip -= s;
		if (iov[i].iov_len == s)
			continue;
		v[n].iov_base = (uint8_t *)iov[i].iov_base + s;
		v[n++].iov_len = iov[i].iov_len - s;
		total += iov[i].iov_len - s;
	}
	if (skip || total < PKT_ETH_HLEN || total > NET_FRAME_MAX - NET_VNET_HDR_LEN)
		return -EINVAL;
	pkt_put32(len, (uint32_t)total);
	m.msg_iovlen = (size_t)n;
	total += 4;
	/* the stream must stay framed: finish a partial write (SO_SNDTIMEO) */
	while (total) {
		ssize_t w = sendmsg(p->data, &m, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			passt_disconnect(p, "write to passt failed");
			return -EPIPE;
		}
		total -= (size_t)w;
		while (w > 0 && m.msg_iovlen) {
			size_t s = (size_t)w < m.msg_iov->iov_len ? (size_t)w : m.msg_iov->iov_len;

			m.msg_iov->iov_base = (uint8_t *)m.msg_iov->iov_base + s;
			m.msg_iov->iov_len -= s;
			w -= (ssize_t)s;
			if (!m.msg_iov->iov_len) {
				m.msg_iov++;
				m.msg_iovlen--;
			}
		}
	}
	return 0;
}

static void passt_destroy(struct net_backend *be)
{
	struct passt_be *p = (struct passt_be *)be;

	/* the supervisor stops passt and exits when ctl closes */
	if (p->data >= 0)
		close(p->data);
	close(p->ctl);
	free(p->rx);
	free(p->binary);
	free(p);
}

static const struct net_backend_ops passt_ops = {
    .recv = passt_recv,
    .send = passt_send,
    .destroy = passt_destroy,
};

/* Is name an executable file, as given or somewhere on PATH? */
static bool find_program(const char *name)
{
	const char *path = getenv("PATH"), *p;
	char buf[4096];

	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	for (p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, name) < (int)sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		p += n;
		if (*p == ':')
			p++;
	}
	return false;
}

int passt_create(const struct passt_config *cfg, struct net_backend **out)
{
	struct passt_be *p;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->be.ops = &passt_ops;
	p->be.fd = -1;
	p->be.kind = "passt";
	p->pid = -1;
	p->data = p->ctl = -1;
	p->binary = strdup(cfg->binary ? cfg->binary : "passt");
	p->rx = malloc(RXBUF_SIZE);
	err = -ENOMEM;
	if (!p->binary || !p->rx)
		goto out_free;
	if (cfg->mtu)
		snprintf(p->mtu, sizeof(p->mtu), "%u", cfg->mtu);
	if (!find_program(p->binary)) {
		error("passt: '%s' not found (install Debian's passt package)", p->binary);
		err = -ENOENT;
		goto out_free;
	}
	err = passt_port_specs(cfg->ports, cfg->n_ports, cfg->all_when_none, p->tcp, sizeof(p->tcp),
			       p->udp, sizeof(p->udp));
	if (!err && !strcmp(p->tcp, "all")) {
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_max < PASST_ALL_PORTS_NOFILE) {
			log_warn("passt: no ports listed, but forwarding all needs %d descriptors "
				 "(hard limit %llu): forwarding none; list the ports to forward",
				 PASST_ALL_PORTS_NOFILE, (unsigned long long)rl.rlim_max);
			snprintf(p->tcp, sizeof(p->tcp), "none");
			snprintf(p->udp, sizeof(p->udp), "none");
		}
	}
	if (err) {
		error("passt: too many forwarded ports");
		goto out_free;
	}
	err = passt_start_supervisor(p);
	if (err)
		goto out_free;
	err = passt_accept(p, true);
	if (err) {
		close(p->ctl);
		goto out_free;
	}
	*out = &p->be;
	return 0;

out_free:
	free(p->rx);
	free(p->binary);
	free(p);
	return err;
}

pid_t passt_pid(const struct net_backend *be)
{
	return ((const struct passt_be *)be)->pid;
}

unsigned int passt_starts(const struct net_backend *be)
{
	return ((const struct passt_be *)be)->starts;
}

const char *passt_last_words(const struct net_backend *be)
{
	return ((const struct passt_be *)be)->why;
}
