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
 * Input: tests/fuzz/tpm_fuzz.h's operations (write, read, take, answer,
 * set the established bit). The invariants checked: a command is pending
 * only while executing, the bytes received and read stay within the
 * buffer and the response, a taken command is what its header says and
 * fits the buffer.
 */
#include <stdint.h>
#include <stdlib.h>

#include "vmm/dev/tpm/tpm_tis.h"
#include "tests/fuzz/tpm_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static size_t tis_take(void *t, uint8_t *out, size_t cap)
{
	return tpm_tis_take(t, out, cap);
}

static int tis_complete(void *t, const uint8_t *rsp, size_t len)
{
	return tpm_tis_complete(t, rsp, len);
}

static void tis_fail(void *t)
{
	tpm_tis_fail(t);
}

static void tis_set_established(void *t, bool on)
{
	tpm_tis_set_established(t, on);
}

static void tis_check(void *dev)
{
	struct tpm_tis *c = dev;

	if ((c->pending && c->state != TPM_TIS_EXECUTION) || c->in > TPM_TIS_BUF_SIZE ||
	    c->out > c->rsp_len || c->rsp_len > TPM_TIS_BUF_SIZE)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct tpm_tis c;
	const struct tpm_fuzz_dev f = {
	    .dev = &c,
	    .ops = &tpm_tis_ops,
	    .buf_size = TPM_TIS_BUF_SIZE,
	    .take = tis_take,
	    .complete = tis_complete,
	    .fail = tis_fail,
	    .set_established = tis_set_established,
	    .check = tis_check,
	};

	tpm_tis_init(&c, tpm_fuzz_on_submit, NULL);
	tpm_fuzz_run(&f, d, n);
	tpm_tis_release(&c);
	return 0;
}
