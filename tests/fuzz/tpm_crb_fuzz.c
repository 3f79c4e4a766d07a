/* SPDX-License-Identifier: MIT */
/*
 * tpm_crb_fuzz.c - libFuzzer target for the TPM's CRB window
 * (vmm/dev/tpm/tpm_crb.h) as a hostile guest reaches it: reads and writes
 * of any size at any offset of the 4 KiB window (and past it), the command
 * it starts taken as the worker would take it, and a backend response of
 * any length and content completed or refused as tpm_dev.c does (a refused
 * one fails the device). The backend itself (swtpm) is not here.
 *
 * Input: tests/fuzz/tpm_fuzz.h's operations (write, read, take, answer,
 * set the established bit). The invariants checked: START is clear when
 * no command is in flight, a taken command is what its header says and
 * fits the buffer.
 */
#include <stdint.h>
#include <stdlib.h>

#include "vmm/dev/tpm/tpm_crb.h"
#include "tests/fuzz/tpm_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static size_t crb_take(void *c, uint8_t *out, size_t cap)
{
	return tpm_crb_take(c, out, cap);
}

static int crb_complete(void *c, const uint8_t *rsp, size_t len)
{
	return tpm_crb_complete(c, rsp, len);
}

static void crb_fail(void *c)
{
	tpm_crb_fail(c);
}

static void crb_set_established(void *c, bool on)
{
	tpm_crb_set_established(c, on);
}

static void crb_check(void *dev)
{
	struct tpm_crb *c = dev;

	if (!c->busy && c->pending)
		abort(); /* a command pending with START clear */
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct tpm_crb c;
	const struct tpm_fuzz_dev f = {
	    .dev = &c,
	    .ops = &tpm_crb_ops,
	    .buf_size = TPM_CRB_BUF_SIZE,
	    .take = crb_take,
	    .complete = crb_complete,
	    .fail = crb_fail,
	    .set_established = crb_set_established,
	    .check = crb_check,
	};

	tpm_crb_init(&c, 0xfed40000ull, tpm_fuzz_on_submit, NULL);
	tpm_fuzz_run(&f, d, n);
	tpm_crb_release(&c);
	return 0;
}
