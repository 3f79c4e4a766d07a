// SPDX-License-Identifier: MIT
/*
 * tpm.c - the TPM 2.0 the ACPI TPM2 table names, driven at CPL3 the way
 * Linux's tpm_crb driver does it (start method 7, CRB): request locality
 * 0, cmdReady, the command into the buffer the control area names, START,
 * wait for START to clear, read the response. Two commands:
 * TPM2_Startup(SU_CLEAR) and TPM2_GetRandom(8). With start method 6 the
 * FIFO (TIS) at the PC Client address 0xFED40000 instead, the way Linux's
 * tpm_tis does it (polled): ACCESS.requestUse, STS.commandReady, the
 * command a byte at a time into DATA_FIFO with Expect checked, tpmGo, wait
 * for dataAvail, the response a byte at a time while dataAvail, Expect
 * clear at the end. The line (firmware/abi.h):
 *   tpm=crb|tis <startupRc> <getRandomRc> <randomBytes>
 * or tpm=error <step> when the interface does not behave. Every value the
 * interface returns is bounds-checked (the buffer must lie in the 4 KiB
 * window, sizes within it); each wait is bounded by the TSC.
 */
#include "firmware/lib/cpu.h"
#include "firmware/lib/io.h"
#include "firmware/probe/probe.h"

#define CRB_WINDOW    0x1000u
#define CRB_CTRL_OFF  0x40u
#define LOC_STS	      0x0c
#define LOC_CTRL      0x08
#define CTRL_REQ      0x40
#define CTRL_STS      0x44
#define CTRL_START    0x4c
#define CMD_SIZE      0x58
#define CMD_LADDR     0x5c
#define CMD_HADDR     0x60
#define WAIT_TSC      (1ull << 34) /* several seconds: swtpm may make keys */
#define TPM_START_CRB 7
#define TPM_START_TIS 6
#define TIS_BASE      0xfed40000ull
#define TIS_ACCESS    0x00
#define TIS_STS	      0x18
#define TIS_FIFO      0x24
#define TIS_VALID     0x80u
#define TIS_READY     0x40u
#define TIS_GO	      0x20u
#define TIS_AVAIL     0x10u
#define TIS_EXPECT    0x08u

static volatile uint32_t *reg(uint64_t base, uint32_t off)
{
	return (volatile uint32_t *)(uintptr_t)(base + off);
}

/* Wait until (reg & mask) == want; false on timeout. */
static bool wait_reg(uint64_t base, uint32_t off, uint32_t mask, uint32_t want)
{
	uint64_t t0 = rdtsc();

	while ((*reg(base, off) & mask) != want)
		if (rdtsc() - t0 > WAIT_TSC)
			return false;
	return true;
}

static uint32_t be32(const volatile uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* One command: its response code, or -1 (*step says where it failed). */
static int64_t tpm_cmd(uint64_t base, volatile uint8_t *buf, uint32_t cap, const uint8_t *cmd,
		       uint32_t len, uint32_t *rsp_len, const char **step)
{
	if (len > cap)
		return *step = "command-size", -1;
	*reg(base, CTRL_REQ) = 1; /* cmdReady */
	if (!wait_reg(base, CTRL_REQ, 1, 0) || (*reg(base, CTRL_STS) & 1))
		return *step = "cmd-ready", -1;
	for (uint32_t i = 0; i < len; i++)
		buf[i] = cmd[i];
	*reg(base, CTRL_START) = 1;
	if (!wait_reg(base, CTRL_START, 1, 0))
		return *step = "start-timeout", -1;
	if (*reg(base, CTRL_STS) & 1)
		return *step = "fatal", -1;
	*rsp_len = be32(buf + 2);
	if (*rsp_len < 10 || *rsp_len > cap)
		return *step = "response-size", -1;
	return be32(buf + 6);
}

static volatile uint8_t *reg8(uint32_t off)
{
	return (volatile uint8_t *)(uintptr_t)(TIS_BASE + off);
}

/* One command through the FIFO: its response code (the response in rsp,
 * *rsp_len bytes), or -1 (*step says where it failed). */
static int64_t tis_cmd(const uint8_t *cmd, uint32_t len, uint8_t *rsp, uint32_t cap,
		       uint32_t *rsp_len, const char **step)
{
	uint32_t n = 0;

	*reg8(TIS_STS) = TIS_READY;
	if (!wait_reg(TIS_BASE, TIS_STS, TIS_READY, TIS_READY))
		return *step = "cmd-ready", -1;
	for (uint32_t i = 0; i < len; i++) {
		if (!(*reg(TIS_BASE, TIS_STS) & TIS_EXPECT))
			return *step = "expect", -1;
		*reg8(TIS_FIFO) = cmd[i];
	}
	if (*reg(TIS_BASE, TIS_STS) & TIS_EXPECT)
		return *step = "expect-end", -1;
	*reg8(TIS_STS) = TIS_GO;
	if (!wait_reg(TIS_BASE, TIS_STS, TIS_VALID | TIS_AVAIL, TIS_VALID | TIS_AVAIL))
		return *step = "go-timeout", -1;
	while ((*reg(TIS_BASE, TIS_STS) & TIS_AVAIL) && n < cap)
		rsp[n++] = *reg8(TIS_FIFO);
	if (*reg(TIS_BASE, TIS_STS) & TIS_AVAIL)
		return *step = "response-size", -1;
	*rsp_len = n;
	if (n < 10 || be32(rsp + 2) != n)
		return *step = "response-size", -1;
	*reg8(TIS_STS) = TIS_READY;
	return be32(rsp + 6);
}

static void tis_report(struct fw_buf *out, const uint8_t *startup, const uint8_t *getrandom)
{
	static uint8_t rsp[64];
	const char *step = "";
	uint32_t n = 0;
	int64_t rc1, rc2;

	*reg8(TIS_ACCESS) = 0x02;			   /* requestUse */
	if (!wait_reg(TIS_BASE, TIS_ACCESS, 0xa2, 0xa0)) { /* valid, active */
		fw_buf_printf(out, "tpm=error locality\n");
		return;
	}
	rc1 = tis_cmd(startup, 12, rsp, sizeof(rsp), &n, &step);
	rc2 = rc1 < 0 ? -1 : tis_cmd(getrandom, 12, rsp, sizeof(rsp), &n, &step);
	if (rc1 < 0 || rc2 < 0) {
		fw_buf_printf(out, "tpm=error %s\n", step);
		return;
	}
	fw_buf_printf(out, "tpm=tis 0x%x 0x%x %u\n", (unsigned)rc1, (unsigned)rc2,
		      n >= 12 && !rc2 ? (unsigned)(rsp[10] << 8 | rsp[11]) : 0u);
	*reg8(TIS_ACCESS) = 0x20; /* relinquish */
}

void probe_tpm_report(struct fw_buf *out, const struct acpi_header *tpm2)
{
	static const uint8_t startup[] = {0x80, 1, 0, 0, 0, 12, 0, 0, 1, 0x44, 0, 0};
	static const uint8_t getrandom[] = {0x80, 1, 0, 0, 0, 12, 0, 0, 1, 0x7b, 0, 8};
	const uint8_t *t = (const uint8_t *)tpm2;
	const char *step = "";
	uint64_t ctrl = 0, base, bufa;
	uint32_t cap, n = 0;
	int64_t rc1, rc2;
	volatile uint8_t *buf;

	if (!tpm2)
		return;
	if (tpm2->length >= 52 && t[48] == TPM_START_TIS) {
		tis_report(out, startup, getrandom);
		return;
	}
	if (tpm2->length < 52 || t[48] != TPM_START_CRB) {
		fw_buf_printf(out, "tpm=error table\n");
		return;
	}
	for (int i = 7; i >= 0; i--)
		ctrl = ctrl << 8 | t[40 + i];
	base = ctrl - CRB_CTRL_OFF;
	if (ctrl < CRB_CTRL_OFF || base >= 0x100000000ull || (base & 0xfff)) {
		fw_buf_printf(out, "tpm=error control-area\n");
		return;
	}
	*reg(base, LOC_CTRL) = 1; /* requestAccess */
	if (!wait_reg(base, LOC_STS, 1, 1)) {
		fw_buf_printf(out, "tpm=error locality\n");
		return;
	}
	bufa = (uint64_t)*reg(base, CMD_HADDR) << 32 | *reg(base, CMD_LADDR);
	cap = *reg(base, CMD_SIZE);
	if (bufa < base || bufa >= base + CRB_WINDOW || cap > base + CRB_WINDOW - bufa) {
		fw_buf_printf(out, "tpm=error buffer\n");
		return;
	}
	buf = (volatile uint8_t *)(uintptr_t)bufa;
	rc1 = tpm_cmd(base, buf, cap, startup, sizeof(startup), &n, &step);
	rc2 = rc1 < 0 ? -1 : tpm_cmd(base, buf, cap, getrandom, sizeof(getrandom), &n, &step);
	if (rc1 < 0 || rc2 < 0) {
		fw_buf_printf(out, "tpm=error %s\n", step);
		return;
	}
	/* TPM2B_DIGEST after the header: its size, then the bytes */
	fw_buf_printf(out, "tpm=crb 0x%x 0x%x %u\n", (unsigned)rc1, (unsigned)rc2,
		      n >= 12 && !rc2 ? (unsigned)(buf[10] << 8 | buf[11]) : 0u);
	*reg(base, CTRL_REQ) = 2; /* goIdle */
}
