// SPDX-License-Identifier: MIT
/*
 * uuid.c - SHA-1 and the UUIDs of uuid.h. SHA-1 here only names things
 * (a UUID version 5, as KubeVirt computes one); it guards nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "spec/uuid.h"

#define KUBEVIRT_FIRMWARE_NS "6a1a24a1-4061-4607-8bf4-a3963d0c5895"

static uint32_t rol(uint32_t x, unsigned int n)
{
	return x << n | x >> (32 - n);
}

static void sha1_block(uint32_t h[5], const uint8_t *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f, k, t;
	unsigned int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	for (i = 0; i < 80; i++) {
		if (i < 20)
			f = (b & c) | (~b & d), k = 0x5a827999;
		else if (i < 40)
			f = b ^ c ^ d, k = 0x6ed9eba1;
		else if (i < 60)
			f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
		else
			f = b ^ c ^ d, k = 0xca62c1d6;
		t = rol(a, 5) + f + e + k + w[i];
		e = d, d = c, c = rol(b, 30), b = a, a = t;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

void uuid_sha1(const void *data, size_t n, uint8_t out[20])
{
	uint32_t h[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
	const uint8_t *p = data;
	uint8_t last[128] = {0};
	uint64_t bits = (uint64_t)n * 8;
	size_t done = 0, rest, tail;
	unsigned int i;

	for (; n - done >= 64; done += 64)
		sha1_block(h, p + done);
	rest = n - done;
	memcpy(last, p + done, rest);
	last[rest] = 0x80;
	tail = rest + 1 + 8 <= 64 ? 64 : 128;
	for (i = 0; i < 8; i++)
		last[tail - 1 - i] = (uint8_t)(bits >> (8 * i));
	sha1_block(h, last);
	if (tail == 128)
		sha1_block(h, last + 64);
	for (i = 0; i < 20; i++)
		out[i] = (uint8_t)(h[i / 4] >> (24 - 8 * (i % 4)));
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int uuid_parse(const char *s, uint8_t out[16])
{
	unsigned int i, j = 0;
	int hi, lo;

	if (!s || strlen(s) != 36)
		return -EINVAL;
	for (i = 0; i < 36;) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i++] != '-')
				return -EINVAL;
			continue;
		}
		hi = hexval(s[i]);
		lo = hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[j++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	return 0;
}

static void uuid_format(const uint8_t u[16], char out[UUID_STR_LEN])
{
	snprintf(out, UUID_STR_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
}

int uuid_v5(const char *ns, const char *name, char out[UUID_STR_LEN])
{
	size_t l = strlen(name);
	uint8_t buf[16 + 256], *in = buf, h[20];
	int ret = uuid_parse(ns, buf);

	if (ret)
		return ret;
	if (l > sizeof(buf) - 16) { /* a long name: hashed from a copy */
		in = malloc(16 + l);
		if (!in)
			return -ENOMEM;
		memcpy(in, buf, 16);
	}
	memcpy(in + 16, name, l);
	uuid_sha1(in, 16 + l, h);
	if (in != buf)
		free(in);
	h[6] = (uint8_t)((h[6] & 0x0f) | 0x50); /* version 5 */
	h[8] = (uint8_t)((h[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	uuid_format(h, out);
	return 0;
}

void uuid_kubevirt_legacy(const char *vm_name, char out[UUID_STR_LEN])
{
	if (uuid_v5(KUBEVIRT_FIRMWARE_NS, vm_name, out))
		out[0] = 0; /* only on ENOMEM for a name past 256 bytes */
}

int uuid_v4(char out[UUID_STR_LEN])
{
	uint8_t u[16];
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(u)) {
		n = getrandom(u + got, sizeof(u) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
	uuid_format(u, out);
	return 0;
}
