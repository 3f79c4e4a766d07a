/* SPDX-License-Identifier: MIT */
/*
 * tpm_fuzz.h - what the TPM interface fuzzers (tpm_crb_fuzz.c,
 * tpm_tis_fuzz.c) share: one input format driving a register window as a
 * hostile guest does, the worker's take of a command and a fake backend
 * (swtpm is not here) answering with any bytes, through the interface's
 * own functions (struct tpm_fuzz_dev).
 *
 * Input: a sequence of operations, each one byte of kind then its data:
 *   0: write: le16 offset, size byte (1, 2, 4, 8 by its low 2 bits), data
 *   1: read:  le16 offset, size byte
 *   2: the worker takes the pending command (if any): it must be what its
 *      header says and fit the buffer
 *   3: the backend answers: a length byte L, then L bytes of response
 *      (short inputs are padded), through complete(); a refusal calls
 *      fail(), as tpm_dev.c does (the device is failed)
 *   4: set_established(bit 0 of the next byte)
 * After each operation check() tests the interface's own invariants
 * (abort() on a broken one).
 */
#ifndef VMLET_TPM_FUZZ_H
#define VMLET_TPM_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/vm/bus.h"

#ifndef TPM_HEADER_SIZE
#define TPM_HEADER_SIZE 10u
#endif

struct tpm_fuzz_dev {
	void *dev;
	const struct io_ops *ops; /* the register window */
	size_t buf_size;	  /* the largest command */
	size_t (*take)(void *dev, uint8_t *out, size_t cap);
	int (*complete)(void *dev, const uint8_t *rsp, size_t len);
	void (*fail)(void *dev);
	void (*set_established)(void *dev, bool on);
	void (*check)(void *dev);
};

/* The submit callback of the interface's init: the fuzzer's worker takes
 * commands when the input says so. */
static inline void tpm_fuzz_on_submit(void *opaque)
{
	(void)opaque;
}

static inline uint32_t tpm_fuzz_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void tpm_fuzz_take(const struct tpm_fuzz_dev *f)
{
	static uint8_t cmd[8192];
	size_t n;

	if (f->buf_size > sizeof(cmd))
		abort();
	n = f->take(f->dev, cmd, f->buf_size);
	if (n && (n < TPM_HEADER_SIZE || n > f->buf_size || tpm_fuzz_be32(cmd + 2) != n))
		abort();
}

/* Operation 3 from d[i]: the index after it. */
static inline size_t tpm_fuzz_answer(const struct tpm_fuzz_dev *f, const uint8_t *d, size_t n,
				     size_t i)
{
	static uint8_t rsp[256];
	size_t len, have;

	if (i >= n)
		return n;
	len = d[i++];
	have = len < n - i ? len : n - i;
	memset(rsp, 0, sizeof(rsp));
	memcpy(rsp, d + i, have);
	if (f->complete(f->dev, rsp, len))
		f->fail(f->dev);
	return i + have;
}

/* Operation 0 or 1 from d[i]: the index after it (n: the input ended). */
static inline size_t tpm_fuzz_access(const struct tpm_fuzz_dev *f, bool write, const uint8_t *d,
				     size_t n, size_t i)
{
	uint8_t buf[8] = {0};
	uint64_t off;
	uint32_t len;
	size_t have;

	if (i + 3 > n)
		return n;
	off = d[i] | (uint64_t)d[i + 1] << 8;
	len = 1u << (d[i + 2] & 3);
	i += 3;
	if (!write) {
		f->ops->read(f->dev, off, buf, len);
		return i;
	}
	have = len < n - i ? len : n - i;
	memcpy(buf, d + i, have);
	f->ops->write(f->dev, off, buf, len);
	return i + have;
}

static inline void tpm_fuzz_run(const struct tpm_fuzz_dev *f, const uint8_t *d, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t op = d[i++] % 5;

		if (op <= 1)
			i = tpm_fuzz_access(f, op == 0, d, n, i);
		else if (op == 2)
			tpm_fuzz_take(f);
		else if (op == 3)
			i = tpm_fuzz_answer(f, d, n, i);
		else if (i < n)
			f->set_established(f->dev, d[i++] & 1);
		f->check(f->dev);
	}
}

#endif /* VMLET_TPM_FUZZ_H */
