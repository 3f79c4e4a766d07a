/* SPDX-License-Identifier: MIT */
/*
 * mig_wire.c - records of the live migration stream (mig_int.h).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/snapshot/mig_int.h"
#include "vmm/vm/vm.h"

struct migrate_stats mig_stats;

/* CLOCK_MONOTONIC ns by which every read must be done; 0: no bound */
static uint64_t mig_deadline;

void mig_set_deadline(unsigned int seconds)
{
	mig_deadline = seconds ? vm_now_ns() + (uint64_t)seconds * 1000000000ull : 0;
}

/* Wait for fd to be readable: -ETIME past the deadline, -ETIMEDOUT after
 * MIG_REPLY_TIMEOUT s of silence. */
static int mig_wait_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	uint64_t now = vm_now_ns(), left_ms;
	int n;

	if (now >= mig_deadline)
		return -ETIME;
	left_ms = (mig_deadline - now + 999999) / 1000000;
	if (left_ms > MIG_REPLY_TIMEOUT * 1000ull)
		left_ms = MIG_REPLY_TIMEOUT * 1000ull;
	do
		n = poll(&p, 1, (int)left_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return vm_now_ns() >= mig_deadline ? -ETIME : -ETIMEDOUT;
	return 0;
}

void migrate_get_stats(struct migrate_stats *out)
{
	*out = mig_stats;
}

int mig_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int mig_read_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		int w = mig_deadline ? mig_wait_readable(fd) : 0;
		ssize_t n;

		if (w)
			return w;
		n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int mig_send(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
	uint32_t hdr[2] = {type, (uint32_t)(alen + blen)};
	int ret;

	if (alen + blen > UINT32_MAX)
		return -E2BIG;
	ret = mig_write_all(fd, hdr, sizeof(hdr));
	if (!ret && alen)
		ret = mig_write_all(fd, a, alen);
	if (!ret && blen)
		ret = mig_write_all(fd, b, blen);
	if (!ret)
		mig_stats.bytes += sizeof(hdr) + alen + blen;
	return ret;
}

int mig_recv_hdr(int fd, uint32_t *type, uint32_t *len)
{
	uint32_t hdr[2];
	int ret = mig_read_all(fd, hdr, sizeof(hdr));

	if (ret)
		return ret;
	*type = hdr[0];
	*len = hdr[1];
	mig_stats.bytes += sizeof(hdr) + hdr[1];
	return 0;
}

int mig_send_reply(int fd, int code, const char *msg)
{
	int32_t c = code;
	size_t n = msg ? strnlen(msg, MIG_MAX_MESSAGE) : 0;

	return mig_send(fd, MIG_REPLY, &c, sizeof(c), msg, n);
}

int mig_recv_reply(int fd, char *msg, size_t mlen)
{
	char buf[MIG_MAX_MESSAGE + 1];
	uint32_t type, len;
	int32_t code;
	int ret;

	ret = mig_recv_hdr(fd, &type, &len);
	if (!ret &&
	    (type != MIG_REPLY || len < sizeof(code) || len > sizeof(code) + MIG_MAX_MESSAGE))
		ret = -EPROTO;
	if (!ret)
		ret = mig_read_all(fd, &code, sizeof(code));
	if (!ret)
		ret = mig_read_all(fd, buf, len - sizeof(code));
	if (ret) {
		snprintf(msg, mlen, "no answer from the destination (%s)",
			 ret == -EPIPE ? "the connection closed" : strerror(-ret));
		return ret;
	}
	buf[len - sizeof(code)] = 0;
	for (char *c = buf; *c; c++) /* its words, printable only, go into our log */
		if (*c < 0x20 || *c > 0x7e)
			*c = '?';
	snprintf(msg, mlen, "%s", buf);
	if (code > 0 || code < -4095)
		code = -EPROTO;
	return code;
}
