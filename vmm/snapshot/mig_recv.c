/* SPDX-License-Identifier: MIT */
/*
 * mig_recv.c - the destination of a live migration (migrate.h): listen on
 * unix:PATH (accept one source of this user) or tcp:HOST:PORT (accept the
 * first connection from --incoming-from's address, or from anyone without
 * it), check every record it sends
 * before anything is used, load the state as a restore does, run the guest
 * once the source commits.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/dev/pci_devices.h"
#include "vmm/disk/blk.h"
#include "vmm/snapshot/mig_int.h"
#include "vmm/snapshot/snap_file.h"
#include "vmm/snapshot/snapshot.h"
#include "vmm/util/log.h"
#include "vmm/util/sock_addr.h"
#include "vmm/virtio/virtio_net.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"
#include "vmm/util/unix_addr.h"

/* unix:PATH's directory must be the user's and writable by them only (no
 * one else can replace the socket or connect first). */
static int unix_dir_ok(const char *spec, const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *slash = strrchr(path, '/');
	struct stat st;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? (slash == path ? "/" : path) : ".");
	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return error_errno(-EPERM,
				   "migrate: --incoming %s: its directory must belong to this "
				   "user and be writable by them only",
				   spec);
	return 0;
}

/* tcp:HOST:PORT: bound (SO_REUSEADDR) and listening for one source, from
 * the address from names (NULL: from anyone, said). */
static int tcp_listen(const char *spec, const struct sock_addr *a, const char *from, int *lfd)
{
	int ret = sock_addr_listen_tcp(a, 1, lfd);

	if (ret == -EADDRNOTAVAIL)
		return error_errno(ret, "migrate: --incoming %s: not an address of this host",
				   spec);
	if (ret)
		return error_errno(ret, "migrate: --incoming %s: listening", spec);
	log_info("migrate: listening on %s (TCP: not authenticated, not encrypted)", spec);
	if (from)
		log_info("migrate: %s: only a connection from %s is taken as the source", spec,
			 from);
	else
		log_warn("migrate: %s: no --incoming-from: whoever connects first is taken as the "
			 "source; name the source's address",
			 spec);
	/* the stream is read before the sandbox (docs/migration.md,
	 * "Security"): whoever reaches the port talks to a root process */
	if (geteuid() == 0)
		log_warn("migrate: %s: the source's stream is read as root, before the sandbox; "
			 "run vmlet as a non-root user and let only the source reach the port",
			 spec);
	return 0;
}

int migrate_listen(const char *spec, const char *from, int *lfd)
{
	struct sock_addr a, f;
	char why[160];
	int ret;

	*lfd = -1;
	ret = sock_addr_parse(spec, SOCK_ADDR_LISTEN, &a, why, sizeof(why));
	if (ret)
		return error_errno(ret, "migrate: --incoming '%s': %s", spec, why);
	if (from && a.family == AF_UNIX)
		return error_errno(-EINVAL, "migrate: --incoming-from is for a tcp: --incoming");
	if (from && (ret = sock_addr_parse_host(from, &f, why, sizeof(why))))
		return error_errno(ret, "migrate: --incoming-from '%s': %s", from, why);
	if (a.family != AF_UNIX)
		return tcp_listen(spec, &a, from, lfd);
	ret = unix_dir_ok(spec, a.u.un.sun_path);
	if (ret)
		return ret;
	/* 0600, and named only once it listens (a source may connect as
	 * soon as the file is there) */
	ret = unix_listen(a.u.un.sun_path, 1, 0, lfd);
	if (ret == -EEXIST)
		return error_errno(ret, "migrate: %s exists and is not a socket", a.u.un.sun_path);
	if (ret)
		return error_errno(ret, "migrate: listening on %s", a.u.un.sun_path);
	return 0;
}

/* Until a connection is there to accept (0) or a stop signal came
 * (-EINTR). SIGTERM and SIGINT are blocked since set-up (cmd_vm_run():
 * pending, they press the power button once the guest runs); with no
 * source coming the guest never would, so the wait sees them through a
 * signalfd, leaving them pending. */
static int wait_source(int lfd)
{
	struct pollfd p[2] = {{.fd = lfd, .events = POLLIN}, {.fd = -1, .events = POLLIN}};
	sigset_t stop;
	int ret;

	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	p[1].fd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	if (p[1].fd < 0)
		return error_errno(-errno, "migrate: signalfd");
	while ((ret = poll(p, 2, -1)) < 0 && errno == EINTR)
		;
	ret = ret < 0 ? error_errno(-errno, "migrate: poll") : 0;
	if (!ret && p[1].revents)
		ret = error_errno(-EINTR, "migrate: stopped by a signal before a source came: "
					  "no guest");
	close(p[1].fd);
	return ret;
}

/* accept(2) on TCP hands on a connection's pending network error (one
 * reset while it waited, an unreachable peer): no connection was taken,
 * wait for the next, as the man page asks. */
static bool accept_again(int e)
{
	switch (e) {
	case EINTR:
	case ECONNABORTED:
	case EPROTO:
	case ENETDOWN:
	case ENOPROTOOPT:
	case EHOSTDOWN:
	case ENONET:
	case EHOSTUNREACH:
	case EOPNOTSUPP:
	case ENETUNREACH:
		if (e != EINTR)
			log_warn("migrate: a connection failed before it was taken (%s): "
				 "waiting for the next",
				 strerror(e));
		return true;
	default:
		return false;
	}
}

/* The peers refused so far: each logged once (the last REFUSED_SEEN of
 * them remembered), at most one line per REFUSED_GAP_NS; the others
 * counted and named in the next line. */
#define REFUSED_SEEN   16u
#define REFUSED_GAP_NS 1000000000ull
struct refused {
	struct in6_addr seen[REFUSED_SEEN];
	unsigned int n, next;
	unsigned long long unlogged;
	uint64_t last_ns;
};

/* A connection from peer, not the allowed source: logged as said. */
static void refused_log(struct refused *r, const struct sockaddr *peer, socklen_t pl)
{
	char who[SOCK_ADDR_STRLEN], more[64] = "";
	struct in6_addr h;
	uint64_t now = vm_now_ns();

	sock_addr_host6(peer, pl, &h);
	for (unsigned int i = 0; i < r->n; i++)
		if (!memcmp(&r->seen[i], &h, sizeof(h)))
			return;
	if (r->last_ns && now - r->last_ns < REFUSED_GAP_NS) {
		r->unlogged++;
		return;
	}
	r->last_ns = now;
	r->seen[r->next] = h;
	r->next = (r->next + 1) % REFUSED_SEEN;
	r->n += r->n < REFUSED_SEEN;
	sock_addr_format(peer, pl, who, sizeof(who));
	if (r->unlogged)
		snprintf(more, sizeof(more), " (and %llu from other peers since, unlogged)",
			 r->unlogged);
	r->unlogged = 0;
	log_warn("migrate: a connection from %s, not --incoming-from's address, closed "
		 "unread%s; waiting for the source",
		 who, more);
}

/* TCP: the first connection from the --incoming-from address (allowed;
 * NULL: from anyone). The stream proves nothing about its sender
 * (docs/migration.md, "Security"); its address goes into the log. Others
 * are closed unread. */
static int accept_tcp(int lfd, const struct sock_addr *allowed)
{
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	char who[SOCK_ADDR_STRLEN];
	struct refused r = {0};
	int one = 1, fd;

	for (;;) {
		fd = wait_source(lfd);
		if (fd < 0)
			return fd;
		pl = sizeof(peer);
		fd = accept4(lfd, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
		if (fd < 0 && accept_again(errno))
			continue;
		if (fd < 0 || !allowed || sock_addr_same_host(allowed, (void *)&peer, pl))
			break;
		close(fd);
		refused_log(&r, (struct sockaddr *)&peer, pl);
	}
	if (fd < 0)
		return error_errno(-errno, "migrate: accept");
	sock_addr_format((struct sockaddr *)&peer, pl, who, sizeof(who));
	log_info("migrate: a source connected from %s", who);
	/* the replies are small records: out at once, not after the
	 * source's delayed ACK */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* unix: one source, of this user. */
static int accept_unix(int lfd)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	int fd;

	for (;;) {
		fd = wait_source(lfd);
		if (fd < 0)
			return fd;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0)
			return error_errno(-errno, "migrate: accept");
		if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) && cr.uid == geteuid())
			return fd;
		log_warn("migrate: a connection from another user (uid %u) refused",
			 (unsigned int)cr.uid);
		close(fd);
	}
}

/* One source (over TCP from the address from names, if not NULL), with
 * time limits on its silences. */
static int accept_source(int lfd, const char *spec, const char *from)
{
	struct timeval tv = {.tv_sec = MIG_REPLY_TIMEOUT};
	struct sock_addr allowed;
	int fd;

	if (from && sock_addr_parse_host(from, &allowed, NULL, 0))
		return error_errno(-EINVAL, "migrate: --incoming-from '%s': not an address", from);
	log_info("migrate: waiting for the guest on %s", spec);
	fd = strncmp(spec, "tcp:", 4) ? accept_unix(lfd) : accept_tcp(lfd, from ? &allowed : NULL);
	if (fd < 0)
		return fd;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

/* MIG_HELLO: this format, and the same config as ours. */
static int take_hello(int fd, uint32_t len, const char *config)
{
	uint8_t head[12];
	uint32_t v;
	char *peer;
	int ret;

	if (len < sizeof(head) || len - sizeof(head) > MIG_MAX_CONFIG)
		return error_errno(-EPROTO, "migrate: a hello of %u bytes", len);
	ret = mig_read_all(fd, head, sizeof(head));
	if (ret)
		return ret;
	memcpy(&v, head + 8, 4);
	if (memcmp(head, MIG_MAGIC, 8) || v != MIG_VERSION) {
		mig_send_reply(fd, -ENOTSUP, "not a vmlet migration stream of version 1");
		return error_errno(-ENOTSUP, "migrate: not a vmlet migration stream of version 1");
	}
	peer = malloc(len - sizeof(head) + 1);
	if (!peer)
		return -ENOMEM;
	ret = mig_read_all(fd, peer, len - sizeof(head));
	if (!ret &&
	    (len - sizeof(head) != strlen(config) || memcmp(peer, config, len - sizeof(head)))) {
		mig_send_reply(fd, -EINVAL,
			       "the destination's manifests and options resolve to another config");
		ret = error_errno(-EINVAL, "migrate: the source's config is not this VM's "
					   "(vmlet resolve -o config shows it)");
	} else if (!ret) {
		ret = mig_send_reply(fd, 0, "ready");
	}
	free(peer);
	return ret;
}

/* MIG_PAGES: whole pages, all inside one RAM region, read in place. */
static int take_pages(const struct guest_mem *mem, int fd, uint32_t len)
{
	uint64_t gpa, n;
	void *dst;
	int ret;

	if (len < 8 + MIG_PAGE || (len - 8) % MIG_PAGE || (len - 8) / MIG_PAGE > MIG_MAX_PAGES)
		return error_errno(-EPROTO, "migrate: a page record of %u bytes", len);
	n = len - 8;
	ret = mig_read_all(fd, &gpa, sizeof(gpa));
	if (ret)
		return ret;
	dst = (gpa % MIG_PAGE) ? NULL : guest_mem_ptr(mem, gpa, n);
	if (!dst)
		return error_errno(-EPROTO, "migrate: pages at 0x%llx (+%llu) are not guest RAM",
				   (unsigned long long)gpa, (unsigned long long)n);
	mig_stats.pages += n / MIG_PAGE;
	return mig_read_all(fd, dst, n);
}

/* The state's len bytes into *out, which grows as they arrive (to at most
 * twice what came, plus a chunk): a source that announces 256 MiB and
 * stalls does not make us allocate them. */
static int read_state(int fd, uint32_t len, uint8_t **out)
{
	uint8_t *data = malloc(1), *p;
	size_t cap = 1, got = 0;
	int ret = 0;

	if (!data)
		return -ENOMEM;
	while (got < len) {
		size_t n = len - got < MIG_STATE_CHUNK ? len - got : MIG_STATE_CHUNK;

		if (got + n > cap) {
			cap = cap * 2 > got + n ? cap * 2 : got + n;
			cap = cap < len ? cap : len;
			p = realloc(data, cap);
			if (!p) {
				ret = -ENOMEM;
				break;
			}
			data = p;
		}
		ret = mig_read_all(fd, data + got, n);
		if (ret)
			break;
		got += n;
	}
	if (ret)
		free(data);
	else
		*out = data;
	return ret;
}

/* MIG_STATE: checked and loaded as a snapshot's; the source hears how. */
static int take_state(const struct mig_sink *s, int fd, uint32_t len)
{
	char msg[MIG_MAX_MESSAGE];
	uint8_t *data = NULL;
	int ret;

	if (len > SNAP_MAX_STATE)
		return error_errno(-EPROTO, "migrate: a state of %u bytes", len);
	ret = read_state(fd, len, &data);
	if (!ret) {
		ret = s->load(s->ctx, data, len);
		snprintf(msg, sizeof(msg), "%s%s", ret ? "the destination refused the guest: " : "",
			 ret ? strerror(-ret) : "loaded");
		if (ret)
			mig_send_reply(fd, ret, msg);
		else
			ret = mig_send_reply(fd, 0, msg);
	}
	free(data);
	return ret;
}

int mig_receive_stream(int fd, struct mig_sink *s)
{
	bool hello = false, loaded = false;
	uint32_t type, len;
	int ret;

	for (;;) {
		ret = mig_recv_hdr(fd, &type, &len);
		if (ret == -ETIME)
			return error_errno(ret, "migrate: the source took longer than allowed "
						"(--incoming-timeout)");
		if (ret)
			return error_errno(ret, "migrate: the stream from the source broke");
		if (!hello && type != MIG_HELLO)
			return error_errno(-EPROTO, "migrate: the source did not say hello");
		if (loaded && type != MIG_COMMIT)
			return error_errno(-EPROTO, "migrate: record %u after the state", type);
		if (type == MIG_HELLO && !hello) {
			ret = take_hello(fd, len, s->config);
			hello = true;
		} else if (type == MIG_PAGES) {
			ret = take_pages(s->mem, fd, len);
		} else if (type == MIG_STATE) {
			ret = take_state(s, fd, len);
			loaded = true;
		} else if (type == MIG_COMMIT && loaded && len == 4) {
			ret = mig_read_all(fd, &s->commit_flags, 4);
			if (!ret && (s->commit_flags & ~MIG_PAUSED))
				ret = error_errno(-EPROTO, "migrate: commit flags 0x%x",
						  s->commit_flags);
			if (!ret)
				return 0;
		} else {
			ret = error_errno(-EPROTO, "migrate: unexpected record %u (%u bytes)", type,
					  len);
		}
		if (ret == -ETIME)
			return error_errno(ret, "migrate: the source took longer than allowed "
						"(--incoming-timeout)");
		if (ret == -EPIPE || ret == -ETIMEDOUT || ret == -ECONNRESET)
			return error_errno(ret, "migrate: the stream from the source broke");
		if (ret)
			return ret;
	}
}

/* The state: the source flushed and let go of the disks, so they are
 * ours now, then checked against it (blk.h, blk_id.h) as a restore checks
 * a snapshot; refused, their locks go back to the source. */
static int load_state(void *ctx, const void *data, size_t len)
{
	struct vm *vm = ctx;
	int ret = blk_locks_take();

	if (!ret)
		ret = snapshot_load(vm, data, len, -1, vm->snapshot_config);
	if (ret)
		blk_locks_release();
	return ret;
}

/* The guest is here now: each virtio-net asks its driver to announce it
 * (gratuitous ARP, neighbour advertisements; virtio_net_announce()). The
 * interrupt waits in the LAPIC until the vCPUs run. */
static void announce(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->cfg->n_nics; i++) {
		struct virtio_net *n = pci_devices_nic(vm, i);

		if (!n)
			continue;
		if (virtio_net_announce(n))
			log_info("migrate: interface %u: the guest's driver has no "
				 "announce (VIRTIO_NET_F_GUEST_ANNOUNCE): the network learns "
				 "of the move from its next frame",
				 i);
		else
			log_info("migrate: interface %u: the guest is asked to announce itself", i);
	}
}

/* KubeVirt's completionTimeoutPerGiB default: 150 s per GiB of guest
 * memory (a started GiB counts whole), at least 150 s. */
static unsigned int default_timeout(const struct vm *vm)
{
	uint64_t gib = (vm->cfg->memory_bytes + (1ull << 30) - 1) >> 30;

	return (unsigned int)(MIGRATE_TIMEOUT_PER_GIB * (gib ? gib : 1));
}

int migrate_receive(struct vm *vm, int lfd, const char *spec, const char *from, const char *config,
		    unsigned int timeout_s)
{
	struct mig_sink sink;
	uint64_t t0;
	int fd, ret;

	if (vm->cfg->hugepage_size)
		return error_errno(-ENOTSUP, "migrate: a VM on hugepages cannot be received yet");
	fd = accept_source(lfd, spec, from);
	close(lfd); /* one source: no other connects from here on */
	if (!strncmp(spec, "unix:", 5))
		unlink(spec + 5);
	if (fd < 0)
		return fd;
	t0 = vm_now_ns();
	/* from the connection on: a source that trickles cannot hold us */
	timeout_s = timeout_s ? timeout_s : default_timeout(vm);
	mig_set_deadline(timeout_s);
	log_info("migrate: a source connected; it has %u s to deliver the guest", timeout_s);
	mig_stats = (struct migrate_stats){.state = "incoming"};
	/* guest RAM starts zero: the source leaves zero pages out */
	for (unsigned int i = 0; i < vm->mem.n; i++)
		madvise(vm->mem.r[i].host, vm->mem.r[i].size, MADV_DONTNEED);
	sink = (struct mig_sink){.mem = &vm->mem, .config = config, .load = load_state, .ctx = vm};
	ret = mig_receive_stream(fd, &sink);
	mig_set_deadline(0);
	vm->start_paused = !ret && (sink.commit_flags & MIG_PAUSED);
	close(fd);
	mig_stats.total_ms = (vm_now_ns() - t0) / 1000000;
	mig_stats.state = ret ? "failed" : "completed";
	if (!ret)
		log_info("migrate: the guest arrived (%llu bytes, %llu pages); it runs here",
			 (unsigned long long)mig_stats.bytes, (unsigned long long)mig_stats.pages);
	if (!ret)
		announce(vm);
	return ret;
}
