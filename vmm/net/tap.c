/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/util/log.h"
#include "vmm/net/backend.h"
#include "vmm/net/tap.h"

struct tap_be {
	struct net_backend be;
	bool detached; /* a multiqueue tap's queue: TUNSETIFF attaches it */
};

/* tun_put_user() copies what fits and returns the whole frame's length */
static ssize_t tap_recv(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	ssize_t n = readv(be->fd, iov, iovcnt);

	if (n < 0)
		return -errno;
	if (n < NET_VNET_HDR_LEN)
		return -EAGAIN; /* cannot happen with a vnet header; skip it */
	return n;
}

static int tap_send(struct net_backend *be, const struct iovec *iov, int iovcnt)
{
	ssize_t n = writev(be->fd, iov, iovcnt);

	return n < 0 ? -errno : 0;
}

static int tap_set_offload(struct net_backend *be, unsigned int flags)
{
	unsigned long tf = 0;

	if (flags & NET_OFF_CSUM) {
		tf |= TUN_F_CSUM;
		/* segmentation offloads need checksum offload (tun.c) */
		if (flags & NET_OFF_TSO4)
			tf |= TUN_F_TSO4;
		if (flags & NET_OFF_TSO6)
			tf |= TUN_F_TSO6;
		if ((flags & NET_OFF_ECN) && (flags & (NET_OFF_TSO4 | NET_OFF_TSO6)))
			tf |= TUN_F_TSO_ECN;
	}
	if (ioctl(be->fd, TUNSETOFFLOAD, tf) < 0)
		return error_errno(-errno, "tap: TUNSETOFFLOAD 0x%lx", tf);
	return 0;
}

/* The kernel refuses to attach an attached queue (EINVAL): only changes. */
static int tap_set_enabled(struct net_backend *be, bool enabled)
{
	struct tap_be *t = (struct tap_be *)be;
	struct ifreq ifr;

	if (enabled != t->detached)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = enabled ? IFF_ATTACH_QUEUE : IFF_DETACH_QUEUE;
	if (ioctl(be->fd, TUNSETQUEUE, &ifr) < 0)
		return error_errno(-errno, "tap: TUNSETQUEUE %s", enabled ? "attach" : "detach");
	t->detached = !enabled;
	return 0;
}

static void tap_destroy(struct net_backend *be)
{
	if (be->fd >= 0)
		close(be->fd);
	free(be);
}

static const struct net_backend_ops tap_ops = {
    .recv = tap_recv,
    .send = tap_send,
    .set_offload = tap_set_offload,
    .set_enabled = tap_set_enabled,
    .destroy = tap_destroy,
};

static int tap_open_one(const char *name, bool multi, char out_name[IFNAMSIZ])
{
	struct ifreq ifr;
	int fd, hdr = NET_VNET_HDR_LEN, err;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return error_errno(-errno, "tap: open /dev/net/tun");
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | (multi ? IFF_MULTI_QUEUE : 0);
	if (name)
		snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (ioctl(fd, TUNSETVNETHDRSZ, &hdr) < 0) {
		err = error_errno(-errno, "tap: '%s': TUNSETVNETHDRSZ", ifr.ifr_name);
		close(fd);
		return err;
	}
	/* no offloads until the guest negotiates them */
	if (ioctl(fd, TUNSETOFFLOAD, 0UL) < 0) {
		err = error_errno(-errno, "tap: '%s': TUNSETOFFLOAD", ifr.ifr_name);
		close(fd);
		return err;
	}
	memcpy(out_name, ifr.ifr_name, IFNAMSIZ);
	out_name[IFNAMSIZ - 1] = 0;
	return fd;
}

static bool tap_exists(const char *name)
{
	return name && *name && if_nametoindex(name) != 0;
}

int tap_open(const char *name, unsigned int n_queues, struct net_backend **be,
	     struct tap_info *info)
{
	char got[IFNAMSIZ] = "";
	bool multi = n_queues > 1;
	unsigned int i;
	int fd, err;

	if (n_queues < 1 || n_queues > TAP_MAX_QUEUES)
		return error("tap: %u queues (1..%d)", n_queues, TAP_MAX_QUEUES);
	if (name && strlen(name) >= IFNAMSIZ)
		return error("tap: name '%s' is too long", name);
	info->created = !tap_exists(name);
	for (i = 0; i < n_queues; i++) {
		struct tap_be *t;

		fd = tap_open_one(i ? got : (name && *name ? name : NULL), multi, got);
		if (fd == -EINVAL && i == 0 && !info->created) {
			/* an existing tap made in the other queue mode: adapt (a
			 * single-queue tap gives one queue pair) */
			multi = !multi;
			fd = tap_open_one(name, multi, got);
			if (fd >= 0 && !multi) {
				log_warn("tap: '%s' is single-queue: one queue pair instead of %u",
					 name, n_queues);
				n_queues = 1;
			}
		}
		if (fd < 0) {
			err = fd;
			if (err == -EPERM)
				error("tap: '%s': permission denied (%s)", name ? name : "(new)",
				      info->created ? "creating a tap needs CAP_NET_ADMIN"
						    : "the tap belongs to another user");
			else
				error_errno(err, "tap: '%s': TUNSETIFF", name ? name : "(new)");
			goto out_close;
		}
		t = calloc(1, sizeof(*t));
		if (!t) {
			close(fd);
			err = -ENOMEM;
			goto out_close;
		}
		t->be.ops = &tap_ops;
		t->be.fd = fd;
		t->be.has_vnet_hdr = true;
		t->be.kind = "tap";
		be[i] = &t->be;
	}
	memcpy(info->name, got, IFNAMSIZ);
	info->n_queues = n_queues;
	return 0;

out_close:
	while (i--) {
		net_backend_destroy(be[i]);
		be[i] = NULL;
	}
	return err;
}

int tap_set_up(const char *name, unsigned int mtu)
{
	struct ifreq ifr;
	int s, err = 0;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return error_errno(-errno, "tap: socket");
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (mtu) {
		ifr.ifr_mtu = (int)mtu;
		if (ioctl(s, SIOCSIFMTU, &ifr) < 0) {
			err = error_errno(-errno, "tap: '%s': set mtu %u", name, mtu);
			goto out;
		}
	}
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		err = error_errno(-errno, "tap: '%s': SIOCGIFFLAGS", name);
		goto out;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		err = error_errno(-errno, "tap: '%s': set up", name);
out:
	close(s);
	return err;
}
