// SPDX-License-Identifier: MIT
/* tpm: the CRB register model as Linux's tpm_crb driver drives it
 * (locality, cmdReady, START, the response), its refusals (a header size
 * below 10 or past the buffer never reaches the backend, the buffer is not
 * writable while a command is in flight, a broken response is refused,
 * after a failure every START is), and the swtpm backend for real when
 * swtpm is installed: TPM2_Startup and GetRandom through it, an owner
 * password set in one run that binds the next with a persistent state
 * directory and not with a state of its own run, and swtpm's death seen as
 * an end of stream; swtpm gets none of vmlet's environment. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/dev/tpm/tpm_crb.h"
#include "vmm/dev/tpm/tpm_swtpm.h"
#include "vmm/util/file.h"

#define BASE 0xfed40000ull

static unsigned int submits;

static void on_submit(void *opaque)
{
	(void)opaque;
	submits++;
}

static uint32_t rd32(struct tpm_crb *c, uint64_t off)
{
	uint32_t v;

	tpm_crb_ops.read(c, off, &v, 4);
	return v;
}

static void wr32(struct tpm_crb *c, uint64_t off, uint32_t v)
{
	tpm_crb_ops.write(c, off, &v, 4);
}

static void put_cmd(struct tpm_crb *c, const uint8_t *cmd, size_t len)
{
	for (size_t i = 0; i < len; i++)
		tpm_crb_ops.write(c, TPM_CRB_BUF_OFF + i, &cmd[i], 1);
}

static uint32_t buf_rc(struct tpm_crb *c)
{
	uint8_t b[10];

	tpm_crb_ops.read(c, TPM_CRB_BUF_OFF, b, 8);
	tpm_crb_ops.read(c, TPM_CRB_BUF_OFF + 8, b + 8, 2);
	return (uint32_t)b[6] << 24 | (uint32_t)b[7] << 16 | (uint32_t)b[8] << 8 | b[9];
}

/* TPM2_Startup(SU_CLEAR) and TPM2_GetRandom(8) */
static const uint8_t startup[] = {0x80, 0x01, 0, 0, 0, 12, 0, 0, 0x01, 0x44, 0, 0};
static const uint8_t getrandom[] = {0x80, 0x01, 0, 0, 0, 12, 0, 0, 0x01, 0x7b, 0, 8};

/* Locality and readiness as the driver asks for them. */
static void crb_ready(struct tpm_crb *c)
{
	CHECK_EQ_U64(rd32(c, TPM_CRB_LOC_STATE) & TPM_CRB_LOC_STATE_VALID, TPM_CRB_LOC_STATE_VALID);
	CHECK_EQ_U64(rd32(c, TPM_CRB_LOC_STS), 0);
	wr32(c, TPM_CRB_LOC_CTRL, TPM_CRB_LOC_CTRL_REQUEST);
	CHECK_EQ_U64(rd32(c, TPM_CRB_LOC_STS) & TPM_CRB_LOC_STS_GRANTED, 1);
	CHECK(rd32(c, TPM_CRB_LOC_STATE) & TPM_CRB_LOC_STATE_ASSIGNED);
	CHECK(rd32(c, TPM_CRB_CTRL_STS) & TPM_CRB_CTRL_STS_IDLE);
	wr32(c, TPM_CRB_CTRL_REQ, TPM_CRB_CTRL_REQ_READY);
	CHECK_EQ_U64(rd32(c, TPM_CRB_CTRL_REQ), 0);
	CHECK_EQ_U64(rd32(c, TPM_CRB_CTRL_STS), 0);
}

static void test_crb_registers(void)
{
	struct tpm_crb c;
	uint64_t addr;

	tpm_crb_init(&c, BASE, on_submit, NULL);
	CHECK_EQ_U64(rd32(&c, TPM_CRB_INTF_ID) & 0xf, 1);	/* CRB active */
	CHECK_EQ_U64((rd32(&c, TPM_CRB_INTF_ID) >> 14) & 1, 1); /* CapCRB */
	CHECK_EQ_U64(rd32(&c, TPM_CRB_CMD_SIZE), TPM_CRB_BUF_SIZE);
	CHECK_EQ_U64(rd32(&c, TPM_CRB_RSP_SIZE), TPM_CRB_BUF_SIZE);
	CHECK_EQ_U64(rd32(&c, TPM_CRB_CMD_LADDR), BASE + TPM_CRB_BUF_OFF);
	CHECK_EQ_U64(rd32(&c, TPM_CRB_CMD_HADDR), 0);
	tpm_crb_ops.read(&c, TPM_CRB_RSP_ADDR, &addr, 8);
	CHECK_EQ_U64(addr, BASE + TPM_CRB_BUF_OFF);
	/* a START without locality or while idle does nothing */
	put_cmd(&c, getrandom, sizeof(getrandom));
	submits = 0;
	wr32(&c, TPM_CRB_CTRL_START, 1);
	CHECK_EQ_U64(rd32(&c, TPM_CRB_CTRL_START), 0);
	CHECK_EQ_U64(submits, 0);
	/* outside the window: nothing, reads zero */
	tpm_crb_ops.read(&c, TPM_CRB_WINDOW - 2, &addr, 4);
	wr32(&c, TPM_CRB_WINDOW, 0x12345678);
	crb_ready(&c);
	wr32(&c, TPM_CRB_CTRL_REQ, TPM_CRB_CTRL_REQ_IDLE);
	CHECK(rd32(&c, TPM_CRB_CTRL_STS) & TPM_CRB_CTRL_STS_IDLE);
	wr32(&c, TPM_CRB_LOC_CTRL, TPM_CRB_LOC_CTRL_RELINQUISH);
	CHECK_EQ_U64(rd32(&c, TPM_CRB_LOC_STS), 0);
	tpm_crb_release(&c);
}

/* The guest's header sizes: too small and too large stay here. */
static void test_crb_bad_sizes(void)
{
	static const uint32_t sizes[] = {0, 9, TPM_CRB_BUF_SIZE + 1, 0xffffffffu};
	uint8_t cmd[12], out[TPM_CRB_BUF_SIZE];
	struct tpm_crb c;

	tpm_crb_init(&c, BASE, on_submit, NULL);
	crb_ready(&c);
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memcpy(cmd, getrandom, sizeof(cmd));
		cmd[2] = (uint8_t)(sizes[i] >> 24), cmd[3] = (uint8_t)(sizes[i] >> 16);
		cmd[4] = (uint8_t)(sizes[i] >> 8), cmd[5] = (uint8_t)sizes[i];
		put_cmd(&c, cmd, sizeof(cmd));
		submits = 0;
		wr32(&c, TPM_CRB_CTRL_START, 1);
		CHECK_EQ_U64(submits, 0);
		CHECK_EQ_U64(rd32(&c, TPM_CRB_CTRL_START), 0);
		CHECK_EQ_U64(buf_rc(&c), TPM_RC_COMMAND_SIZE);
		CHECK_EQ_U64(tpm_crb_take(&c, out, sizeof(out)), 0);
	}
	tpm_crb_release(&c);
}

static void test_crb_command_flow(void)
{
	uint8_t out[TPM_CRB_BUF_SIZE], rsp[20] = {0x80, 0x01, 0, 0, 0, 20, 0, 0, 0, 0};
	uint8_t junk = 0xee;
	struct tpm_crb c;

	tpm_crb_init(&c, BASE, on_submit, NULL);
	crb_ready(&c);
	put_cmd(&c, getrandom, sizeof(getrandom));
	submits = 0;
	wr32(&c, TPM_CRB_CTRL_START, 1);
	CHECK_EQ_U64(submits, 1);
	CHECK_EQ_U64(rd32(&c, TPM_CRB_CTRL_START), 1);
	wr32(&c, TPM_CRB_CTRL_START, 1); /* a second START while busy */
	CHECK_EQ_U64(submits, 1);
	/* the buffer is not the guest's while the command is in flight */
	tpm_crb_ops.write(&c, TPM_CRB_BUF_OFF + 11, &junk, 1);
	CHECK_EQ_U64(tpm_crb_take(&c, out, sizeof(out)), sizeof(getrandom));
	CHECK(!memcmp(out, getrandom, sizeof(getrandom)));
	CHECK_EQ_U64(tpm_crb_take(&c, out, sizeof(out)), 0); /* taken once */
	/* responses that do not hold together */
	CHECK_EQ_U64(tpm_crb_complete(&c, rsp, 9), (uint64_t)-EPROTO);
	CHECK_EQ_U64(tpm_crb_complete(&c, rsp, 19), (uint64_t)-EPROTO);
	CHECK_EQ_U64(rd32(&c, TPM_CRB_CTRL_START), 1);
	rsp[10] = 0x42;
	CHECK_EQ_U64(tpm_crb_complete(&c, rsp, sizeof(rsp)), 0);
	CHECK_EQ_U64(rd32(&c, TPM_CRB_CTRL_START), 0);
	/* an answer with no command in flight is refused */
	CHECK_EQ_U64(tpm_crb_complete(&c, rsp, sizeof(rsp)), (uint64_t)-EPROTO);
	CHECK_EQ_U64(rd32(&c, TPM_CRB_BUF_OFF + 8) & 0xffffff, 0x420000);
	/* the backend failed: fatal, START refused from then on */
	tpm_crb_fail(&c);
	CHECK(rd32(&c, TPM_CRB_CTRL_STS) & TPM_CRB_CTRL_STS_FATAL);
	put_cmd(&c, getrandom, sizeof(getrandom));
	submits = 0;
	wr32(&c, TPM_CRB_CTRL_START, 1);
	CHECK_EQ_U64(submits, 0);
	CHECK_EQ_U64(rd32(&c, TPM_CRB_CTRL_START), 0);
	tpm_crb_release(&c);
}

static int have_swtpm(void)
{
	return test_sh("command -v swtpm >/dev/null 2>&1") == 0;
}

static uint32_t rc_of(const uint8_t *rsp)
{
	return (uint32_t)rsp[6] << 24 | (uint32_t)rsp[7] << 16 | (uint32_t)rsp[8] << 8 | rsp[9];
}

static int send_cmd(struct tpm_swtpm *s, const uint8_t *cmd, size_t len, uint8_t *rsp, size_t *rlen)
{
	return tpm_swtpm_exchange(s, cmd, len, rsp, 4096, rlen, -1);
}

static void test_swtpm_exchange(void)
{
	struct tpm_swtpm s;
	struct tpm_swtpm_config sc = {0};
	uint8_t rsp[4096];
	size_t n = 0;

	if (!have_swtpm())
		SKIP("swtpm is not installed (Debian package swtpm)");
	sc.state_fd = file_tmp("/tmp");
	CHECK(sc.state_fd >= 0);
	if (tpm_swtpm_start(&sc, &s)) {
		test_fail(__FILE__, __LINE__, "swtpm did not start");
		return;
	}
	close(sc.state_fd);
	CHECK(s.pid > 0);
	CHECK_EQ_U64(send_cmd(&s, startup, sizeof(startup), rsp, &n), 0);
	CHECK_EQ_U64(n, 10);
	CHECK_EQ_U64(rc_of(rsp), 0);
	CHECK_EQ_U64(send_cmd(&s, getrandom, sizeof(getrandom), rsp, &n), 0);
	CHECK_EQ_U64(n, 10 + 2 + 8);
	CHECK_EQ_U64(rc_of(rsp), 0);
	CHECK_EQ_U64(tpm_swtpm_established(&s), 0);
	/* a response larger than the caller's buffer is refused */
	CHECK_EQ_U64(tpm_swtpm_exchange(&s, getrandom, sizeof(getrandom), rsp, 12, &n, -1),
		     (uint64_t)-EPROTO);
	tpm_swtpm_stop(&s);
	CHECK_EQ_U64(s.pid, (uint64_t)-1);
	CHECK_EQ_U64(send_cmd(&s, getrandom, sizeof(getrandom), rsp, &n), (uint64_t)-EPIPE);
}

/* TPM2_HierarchyChangeAuth(TPM_RH_OWNER) with the empty password, to
 * "vmlt": succeeds on a fresh TPM, fails once the password is set. */
static const uint8_t change_owner_auth[] = {
    0x80, 0x02, 0,   0,	  0,   33,  0, 0, 0x01, 0x29, /* sessions, size, cc */
    0x40, 0,	0,   1,				      /* TPM_RH_OWNER */
    0,	  0,	0,   9,				      /* authorization size */
    0x40, 0,	0,   9,	  0,   0,   0, 0, 0,	      /* TPM_RS_PW, no nonce, attrs, empty */
    0,	  4,	'v', 'm', 'l', 't',		      /* newAuth */
};

/* One run of swtpm on the state: startup, change the owner password;
 * that command's response code (or ~0 when the exchange failed). */
static uint32_t run_once(int state_fd, bool is_dir)
{
	struct tpm_swtpm_config sc = {.state_fd = state_fd, .state_is_dir = is_dir};
	struct tpm_swtpm s;
	uint8_t rsp[4096];
	uint32_t rc = ~0u;
	size_t n;

	if (tpm_swtpm_start(&sc, &s))
		return rc;
	if (!send_cmd(&s, startup, sizeof(startup), rsp, &n) &&
	    !send_cmd(&s, change_owner_auth, sizeof(change_owner_auth), rsp, &n))
		rc = rc_of(rsp);
	tpm_swtpm_stop(&s);
	return rc;
}

static void test_swtpm_persistence(void)
{
	char dir[] = "/tmp/vmlet-tpm-test-XXXXXX";
	int fd, tmp;

	if (!have_swtpm())
		SKIP("swtpm is not installed (Debian package swtpm)");
	CHECK(mkdtemp(dir) != NULL);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ_U64(run_once(fd, true), 0);
	CHECK(run_once(fd, true) != 0); /* the password of run 1 holds */
	close(fd);
	CHECK_EQ_U64(test_sh("test -s %s/tpm2-00.permall", dir), 0);
	test_sh("rm -rf -- '%s'", dir);
	/* a state of its own run: every run starts fresh */
	tmp = file_tmp("/tmp");
	CHECK_EQ_U64(run_once(tmp, false), 0);
	close(tmp);
	tmp = file_tmp("/tmp");
	CHECK_EQ_U64(run_once(tmp, false), 0);
	close(tmp);
}

static void test_swtpm_death(void)
{
	struct tpm_swtpm_config sc = {0};
	struct tpm_swtpm s;
	uint8_t rsp[4096];
	size_t n;
	int st;

	if (!have_swtpm())
		SKIP("swtpm is not installed (Debian package swtpm)");
	sc.state_fd = file_tmp("/tmp");
	CHECK(sc.state_fd >= 0);
	if (tpm_swtpm_start(&sc, &s)) {
		test_fail(__FILE__, __LINE__, "swtpm did not start");
		return;
	}
	close(sc.state_fd);
	CHECK_EQ_U64(send_cmd(&s, startup, sizeof(startup), rsp, &n), 0);
	/* never kill(-1): that is every process */
	CHECK(s.pid > 0);
	if (s.pid > 0)
		kill(s.pid, SIGKILL);
	st = tpm_swtpm_reap(&s);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK_EQ_U64(send_cmd(&s, getrandom, sizeof(getrandom), rsp, &n), (uint64_t)-EPIPE);
	tpm_swtpm_stop(&s);
}

/* TPM2_PCR_Extend(PCR 16, SHA-256 of 32 bytes 0x5a), password session */
static const uint8_t
    pcr16_extend[65] = {0x80, 0x02, 0,	  0,	0,    65,   0,	  0,	0x01, 0x82, 0,
			0,    0,    16, /* PCR 16 */
			0,    0,    0,	  9,	0x40, 0,    0,	  9,	0,    0,    0,
			0,    0,			    /* TPM_RS_PW, empty */
			0,    0,    0,	  1,	0,    0x0b, /* one SHA-256 digest */
			0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a,
			0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a,
			0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a};
/* TPM2_PCR_Read(SHA-256 PCR 16) */
static const uint8_t pcr16_read[] = {0x80, 0x01, 0, 0, 0, 20,	0, 0, 0x01, 0x7e,
				     0,	   0,	 0, 1, 0, 0x0b, 3, 0, 0,    1};

/* PCR 16's SHA-256 value into out: 0, or the TPM's response code. */
static uint32_t pcr16(struct tpm_swtpm *s, uint8_t out[32])
{
	uint8_t rsp[4096];
	size_t n = 0;

	if (send_cmd(s, pcr16_read, sizeof(pcr16_read), rsp, &n))
		return ~0u;
	if (rc_of(rsp))
		return rc_of(rsp);
	if (n != 62)
		return ~0u;
	memcpy(out, rsp + 30, 32);
	return 0;
}

static int swtpm_fresh(struct tpm_swtpm *s)
{
	struct tpm_swtpm_config sc = {0};
	int ret;

	sc.state_fd = file_tmp("/tmp");
	if (sc.state_fd < 0)
		return sc.state_fd;
	ret = tpm_swtpm_start(&sc, s);
	close(sc.state_fd);
	return ret;
}

/* The three state blobs of a running TPM with PCR 16 extended go into a
 * fresh swtpm (stop, set, init deleting the volatile state): PCR 16 reads
 * the same there without a TPM2_Startup, and the first TPM runs on after
 * the save. Without the volatile blob the TPM needs a Startup (what the
 * volatile blob carries); a damaged permanent blob is refused. */
static void test_swtpm_state_blobs(void)
{
	static const uint32_t types[3] = {TPM_SWTPM_BLOB_PERMANENT, TPM_SWTPM_BLOB_VOLATILE,
					  TPM_SWTPM_BLOB_SAVESTATE};
	struct tpm_swtpm a, b;
	uint8_t *blob[3] = {NULL}, rsp[4096], v1[32], v2[32], zero[32] = {0};
	size_t len[3] = {0}, n;
	uint32_t flags[3];

	if (!have_swtpm())
		SKIP("swtpm is not installed (Debian package swtpm)");
	if (swtpm_fresh(&a)) {
		test_fail(__FILE__, __LINE__, "swtpm did not start");
		return;
	}
	CHECK_EQ_U64(send_cmd(&a, startup, sizeof(startup), rsp, &n), 0);
	CHECK_EQ_U64(send_cmd(&a, pcr16_extend, sizeof(pcr16_extend), rsp, &n), 0);
	CHECK_EQ_U64(rc_of(rsp), 0);
	CHECK_EQ_U64(pcr16(&a, v1), 0);
	CHECK(memcmp(v1, zero, 32) != 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_U64(tpm_swtpm_get_blob(&a, types[i], &blob[i], &len[i], &flags[i]), 0);
	CHECK(len[0] > 0 && len[1] > 0);
	CHECK_EQ_U64(send_cmd(&a, getrandom, sizeof(getrandom), rsp, &n), 0);
	CHECK_EQ_U64(rc_of(rsp), 0); /* the saved TPM runs on */
	tpm_swtpm_stop(&a);
	/* restored */
	CHECK_EQ_U64(swtpm_fresh(&b), 0);
	CHECK_EQ_U64(tpm_swtpm_stop_tpm(&b), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_U64(tpm_swtpm_set_blob(&b, types[i], blob[i], len[i], flags[i]), 0);
	CHECK_EQ_U64(tpm_swtpm_init(&b, TPM_SWTPM_INIT_DELETE_VOLATILE), 0);
	CHECK_EQ_U64(pcr16(&b, v2), 0);
	CHECK(!memcmp(v1, v2, 32));
	tpm_swtpm_stop(&b);
	/* the permanent state alone: the TPM powers on anew (TPM_RC_INITIALIZE) */
	CHECK_EQ_U64(swtpm_fresh(&b), 0);
	CHECK_EQ_U64(tpm_swtpm_stop_tpm(&b), 0);
	CHECK_EQ_U64(tpm_swtpm_set_blob(&b, types[0], blob[0], len[0], flags[0]), 0);
	CHECK_EQ_U64(tpm_swtpm_init(&b, TPM_SWTPM_INIT_DELETE_VOLATILE), 0);
	CHECK_EQ_U64(pcr16(&b, v2), 0x100);
	tpm_swtpm_stop(&b);
	/* a damaged permanent blob */
	CHECK_EQ_U64(swtpm_fresh(&b), 0);
	CHECK_EQ_U64(tpm_swtpm_stop_tpm(&b), 0);
	blob[0][len[0] / 2] ^= 0xff;
	blob[0][len[0] - 1] ^= 0xff;
	CHECK(tpm_swtpm_set_blob(&b, types[0], blob[0], len[0], flags[0]) != 0 ||
	      tpm_swtpm_init(&b, 0) != 0);
	tpm_swtpm_stop(&b);
	for (int i = 0; i < 3; i++)
		free(blob[i]);
}

static void test_swtpm_missing(void)
{
	struct tpm_swtpm_config sc = {.binary = "/nonexistent/swtpm"};
	struct tpm_swtpm s;

	sc.state_fd = file_tmp("/tmp");
	CHECK_EQ_U64(tpm_swtpm_start(&sc, &s), (uint64_t)-ENOENT);
	close(sc.state_fd);
}

/*
 * swtpm gets none of vmlet's environment: a stand-in for swtpm writes its
 * environment into the state descriptor (fd 5) and exits; a variable
 * planted in this process must not be there, PATH must. Its exit before
 * answering CMD_INIT is a failed start (an end of stream), not a hang.
 */
static void test_swtpm_env(void)
{
	char script[] = "/tmp/vmlet-tpm-env-XXXXXX";
	static const char body[] = "#!/bin/sh\n/usr/bin/env >&5\n";
	struct tpm_swtpm_config sc = {.binary = script};
	struct tpm_swtpm s;
	char got[4096] = {0};
	int fd = mkstemp(script);
	ssize_t n;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ_U64(write(fd, body, sizeof(body) - 1), sizeof(body) - 1);
	CHECK_EQ_U64(fchmod(fd, 0700), 0);
	close(fd);
	setenv("VMLET_TEST_PLANTED", "must-not-reach-swtpm", 1);
	sc.state_fd = file_tmp("/tmp");
	CHECK(sc.state_fd >= 0);
	CHECK(tpm_swtpm_start(&sc, &s) != 0); /* no CMD_INIT answer: it exited */
	n = pread(sc.state_fd, got, sizeof(got) - 1, 0);
	CHECK(n > 0);
	CHECK(strstr(got, "PATH=") == got);
	CHECK(strstr(got, "VMLET_TEST_PLANTED") == NULL);
	close(sc.state_fd);
	unsetenv("VMLET_TEST_PLANTED");
	unlink(script);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	TEST_RUN(test_crb_registers);
	TEST_RUN(test_crb_bad_sizes);
	TEST_RUN(test_crb_command_flow);
	TEST_RUN(test_swtpm_exchange);
	TEST_RUN(test_swtpm_persistence);
	TEST_RUN(test_swtpm_death);
	TEST_RUN(test_swtpm_state_blobs);
	TEST_RUN(test_swtpm_missing);
	TEST_RUN(test_swtpm_env);
	return test_summary();
}
