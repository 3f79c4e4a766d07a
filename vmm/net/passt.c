/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmm/log.h"
#include "vmm/net/backend.h"
#include "vmm/net/passt.h"
#include "vmm/net/pkt.h"
#include "vmm/vm_config.h"

#define PASST_CHILD_FD 3
#define RXBUF_SIZE (2 * (NET_FRAME_MAX + 4))

struct passt_be {
	struct net_backend be;
	char *binary;
	char mtu[16], tcp[256], udp[256];
	pid_t pid;
	unsigned int starts;
	unsigned int backoff_ms;
	long next_start_ms, started_ms;
	uint8_t *rx;          /* stream bytes not yet handed out */
	size_t rx_head, rx_tail;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int passt_port_specs(const struct vm_port *ports, unsigned int n, char *tcp, size_t tcp_len,
		     char *udp, size_t udp_len)
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
	if (!tl)
		snprintf(tcp, tcp_len, "none");
	if (!ul)
		snprintf(udp, udp_len, "none");
	return 0;
}

/* Child side of fork(): never returns. Async-signal-safe calls only. */
static void passt_exec(struct passt_be *p, int fd)
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
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2); /* passt's own chatter would break JSON logs */
	}
	snprintf(fdstr, sizeof(fdstr), "%d", PASST_CHILD_FD);
	argv[i++] = "passt";
	argv[i++] = "-f";      /* foreground: we are its supervisor */
	argv[i++] = "-q";
	argv[i++] = "-1";      /* quit when vmlet's end closes */
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

static int passt_spawn(struct passt_be *p)
{
	static const struct timeval sndtimeo = { .tv_sec = 1 };
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return error_errno(-errno, "passt: socketpair");
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return error_errno(-errno, "passt: fork");
	}
	if (pid == 0)
		passt_exec(p, sv[1]);
	close(sv[1]);
	/* sends block at most this long before the stream counts as broken */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &sndtimeo, sizeof(sndtimeo));
	p->pid = pid;
	p->be.fd = sv[0];
	p->starts++;
	p->started_ms = now_ms();
	p->rx_head = p->rx_tail = 0;
	return 0;
}

static void passt_reap(struct passt_be *p)
{
	int st = 0, i;

	if (p->be.fd >= 0) {
		close(p->be.fd); /* with -1, passt exits on its own now */
		p->be.fd = -1;
	}
	if (p->pid <= 0)
		return;
	for (i = 0; i < 50; i++) {
		if (waitpid(p->pid, &st, WNOHANG) != 0)
			goto reaped;
		usleep(2000);
	}
	kill(p->pid, SIGKILL);
	waitpid(p->pid, &st, 0);
reaped:
	p->pid = -1;
}

/* The stream broke: reap passt and schedule a restart with backoff. */
static void passt_disconnect(struct passt_be *p, const char *why)
{
	long lived = now_ms() - p->started_ms;

	passt_reap(p);
	if (lived >= PASST_BACKOFF_RESET_MS)
		p->backoff_ms = PASST_BACKOFF_MIN_MS;
	log_warn("passt: %s, restarting in %u ms", why, p->backoff_ms);
	p->next_start_ms = now_ms() + p->backoff_ms;
	p->backoff_ms = p->backoff_ms * 2 > PASST_BACKOFF_MAX_MS ? PASST_BACKOFF_MAX_MS
								  : p->backoff_ms * 2;
}

/* Hand out one complete frame from the stream buffer, if there is one. */
static ssize_t passt_take(struct passt_be *p, void *buf, size_t cap)
{
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
	if (cap < NET_VNET_HDR_LEN + (size_t)len)
		return -EAGAIN; /* caller's buffer too small: drop this frame */
	memset(buf, 0, NET_VNET_HDR_LEN);
	memcpy((uint8_t *)buf + NET_VNET_HDR_LEN, p->rx + p->rx_head - len, len);
	return NET_VNET_HDR_LEN + (ssize_t)len;
}

static ssize_t passt_recv(struct net_backend *be, void *buf, size_t cap)
{
	struct passt_be *p = (struct passt_be *)be;
	ssize_t n;

	if (be->fd < 0) {
		if (now_ms() < p->next_start_ms)
			return -EAGAIN;
		if (passt_spawn(p) < 0) {
			p->next_start_ms = now_ms() + p->backoff_ms;
			return -EAGAIN;
		}
		return NET_BE_RECONNECTED;
	}
	n = passt_take(p, buf, cap);
	if (n != -EAGAIN)
		return n;
	/* compact, then read what the socket has */
	if (p->rx_head) {
		memmove(p->rx, p->rx + p->rx_head, p->rx_tail - p->rx_head);
		p->rx_tail -= p->rx_head;
		p->rx_head = 0;
	}
	n = recv(be->fd, p->rx + p->rx_tail, RXBUF_SIZE - p->rx_tail, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		passt_disconnect(p, n == 0 ? "passt exited" : "stream error");
		return NET_BE_RECONNECTED;
	}
	if (n < 0)
		return -EAGAIN;
	p->rx_tail += (size_t)n;
	return passt_take(p, buf, cap);
}

static int passt_send(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	struct passt_be *p = (struct passt_be *)be;
	struct iovec v[66];
	struct msghdr m = { .msg_iov = v };
	size_t total = 0, skip = NET_VNET_HDR_LEN;
	uint8_t len[4];
	int i, n = 1;

	if (be->fd < 0)
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
		ssize_t w = sendmsg(be->fd, &m, MSG_NOSIGNAL);

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

	passt_reap(p);
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
	p->backoff_ms = PASST_BACKOFF_MIN_MS;
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
	err = passt_port_specs(cfg->ports, cfg->n_ports, p->tcp, sizeof(p->tcp), p->udp,
			       sizeof(p->udp));
	if (err) {
		error("passt: too many forwarded ports");
		goto out_free;
	}
	err = passt_spawn(p);
	if (err)
		goto out_free;
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
