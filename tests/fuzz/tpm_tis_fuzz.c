/* SPDX-License-Identifier: MIT */
/*
 * tpm_tis_fuzz.c - libFuzzer target for the TPM's FIFO (TIS) window
 * (vmm/dev/tpm/tpm_tis.h) as a hostile guest reaches it: reads and writes
 * of any size at any offset of the window (the 16-bit offset covers
 * locality 0 and most of the absent ones 1-4), the command
 * it starts taken as the worker would take it, and a backend response of
 * any length and content completed or refused as tpm_dev.c does (a refused
 * one fails the device). The backend itself (swtpm) is not here.
 *
 * Input: a sequence of operations, each one byte of kind then its data:
 *   0: write: le16 offset, size byte (1, 2, 4, 8 by its low 2 bits), data
 *   1: read:  le16 offset, size byte
 *   2: the worker takes the pending command (if any)
 *   3: the backend answers: a length byte L, then L bytes of response
 *      (short inputs are padded), through tpm_tis_complete(); a refusal
 *      calls tpm_tis_fail()
 *   4: tpm_tis_set_established(bit 0 of the next byte)
 * The invariants checked: a command is pending only while executing, the
 * bytes received and read stay within the buffer and the response, a
 * taken command is what its header says and fits the buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/dev/tpm/tpm_tis.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static unsigned int submitted;

static void on_submit(void *opaque)
{
	(void)opaque;
	submitted++;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void take(struct tpm_tis *c)
{
	static uint8_t cmd[TPM_TIS_BUF_SIZE];
	size_t n = tpm_tis_take(c, cmd, sizeof(cmd));

	if (n && (n < TPM_HEADER_SIZE || n > TPM_TIS_BUF_SIZE || be32(cmd + 2) != n))
		abort();
}

static size_t answer(struct tpm_tis *c, const uint8_t *d, size_t n, size_t i)
{
	static uint8_t rsp[256];
	size_t len;

	if (i >= n)
		return n;
	len = d[i++];
	memset(rsp, 0, sizeof(rsp));
	memcpy(rsp, d + i, len < n - i ? len : n - i);
	if (tpm_tis_complete(c, rsp, len))
		tpm_tis_fail(c);
	return i + (len < n - i ? len : n - i);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct tpm_tis c;
	uint8_t buf[8];
	size_t i = 0;

	tpm_tis_init(&c, on_submit, NULL);
	while (i < n) {
		uint8_t op = d[i++] % 5;
		uint64_t off;
		uint32_t len;

		if (op <= 1) {
			if (i + 3 > n)
				break;
			off = d[i] | (uint64_t)d[i + 1] << 8;
			len = 1u << (d[i + 2] & 3);
			i += 3;
			if (op == 0) {
				memset(buf, 0, sizeof(buf));
				memcpy(buf, d + i, len < n - i ? len : n - i);
				i += len < n - i ? len : n - i;
				tpm_tis_ops.write(&c, off, buf, len);
			} else {
				tpm_tis_ops.read(&c, off, buf, len);
			}
		} else if (op == 2) {
			take(&c);
		} else if (op == 3) {
			i = answer(&c, d, n, i);
		} else if (i < n) {
			tpm_tis_set_established(&c, d[i++] & 1);
		}
		if ((c.pending && c.state != TPM_TIS_EXECUTION) || c.in > TPM_TIS_BUF_SIZE ||
		    c.out > c.rsp_len || c.rsp_len > TPM_TIS_BUF_SIZE)
			abort();
	}
	tpm_tis_release(&c);
	return 0;
}
