// SPDX-License-Identifier: MIT
/* tpm_snap: the TPM device in a snapshot, with the real swtpm when it is
 * installed. A guest's PCR 16 extended through the TIS window, the device
 * frozen and saved, a fresh device (and swtpm) loaded from it: PCR 16
 * reads the same without a TPM2_Startup, and the first TPM runs on. The
 * persistent (CRB) TPM restores onto the directory it saved, and is
 * refused on another. A command being written makes the freeze refuse
 * (-EAGAIN); hostile registers, blobs of the wrong type, past
 * TPM_SWTPM_BLOB_MAX or damaged are refused (the pure checks without
 * swtpm). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/x86_64/layout.h"
#include "tests/lib/test.h"
#include "vmm/dev/tpm/tpm_dev.h"
#include "vmm/dev/tpm/tpm_snap.h"
#include "vmm/dev/tpm/tpm_swtpm.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/vm/bus.h"
#include "vmm/vm_config.h"

static const uint8_t startup[] = {0x80, 0x01, 0, 0, 0, 12, 0, 0, 0x01, 0x44, 0, 0};
/* TPM2_PCR_Extend(PCR 16, SHA-256 of 32 bytes 0x5a), password session */
static uint8_t pcr16_extend[65] = {0x80, 0x02, 0,  0, 0, 65, 0, 0,    0x01, 0x82, 0,
				   0,	 0,    16, 0, 0, 0,  9, 0x40, 0,    0,	  9,
				   0,	 0,    0,  0, 0, 0,  0, 0,    1,    0,	  0x0b};
static const uint8_t pcr16_read[] = {0x80, 0x01, 0, 0, 0, 20,	0, 0, 0x01, 0x7e,
				     0,	   0,	 0, 1, 0, 0x0b, 3, 0, 0,    1};

static struct vm_config cfg;
static struct bus mmio;

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int have_swtpm(void)
{
	return !system("command -v swtpm >/dev/null 2>&1");
}

static void wr8(uint64_t off, uint8_t v)
{
	bus_write(&mmio, ARCH_TPM_CRB_GPA + off, &v, 1);
}

static void wr32(uint64_t off, uint32_t v)
{
	bus_write(&mmio, ARCH_TPM_CRB_GPA + off, &v, 4);
}

static uint32_t rd32(uint64_t off)
{
	uint32_t v = 0;

	bus_read(&mmio, ARCH_TPM_CRB_GPA + off, &v, 4);
	return v;
}

static uint8_t rd8(uint64_t off)
{
	uint8_t v = 0;

	bus_read(&mmio, ARCH_TPM_CRB_GPA + off, &v, 1);
	return v;
}

/* The command written into the TIS FIFO (locality 0 requested, ready). */
static void tis_write_cmd(const uint8_t *cmd, size_t len)
{
	wr8(TPM_TIS_ACCESS, TPM_TIS_ACCESS_REQUEST_USE);
	wr8(TPM_TIS_STS, TPM_TIS_STS_READY);
	for (size_t i = 0; i < len; i++)
		wr8(TPM_TIS_DATA_FIFO, cmd[i]);
}

/* One command as Linux's tpm_tis does it: the response's code (~0u: none). */
static uint32_t tis_cmd(const uint8_t *cmd, size_t len, uint8_t *rsp, size_t cap)
{
	size_t n;

	tis_write_cmd(cmd, len);
	wr8(TPM_TIS_STS, TPM_TIS_STS_GO);
	for (int i = 0; i < 20000 && !(rd32(TPM_TIS_STS) & TPM_TIS_STS_DATA_AVAIL); i++)
		usleep(1000);
	for (n = 0; n < 6; n++)
		rsp[n] = rd8(TPM_TIS_DATA_FIFO);
	if (be32(rsp + 2) > cap || be32(rsp + 2) < 10)
		return ~0u;
	for (; n < be32(rsp + 2); n++)
		rsp[n] = rd8(TPM_TIS_DATA_FIFO);
	wr8(TPM_TIS_STS, TPM_TIS_STS_READY);
	return be32(rsp + 6);
}

/* The same through the CRB window. */
static uint32_t crb_cmd(const uint8_t *cmd, size_t len, uint8_t *rsp, size_t cap)
{
	wr32(TPM_CRB_LOC_CTRL, TPM_CRB_LOC_CTRL_REQUEST);
	wr32(TPM_CRB_CTRL_REQ, TPM_CRB_CTRL_REQ_READY);
	for (size_t i = 0; i < len; i++)
		wr8(TPM_CRB_BUF_OFF + i, cmd[i]);
	wr32(TPM_CRB_CTRL_START, 1);
	for (int i = 0; i < 20000 && rd32(TPM_CRB_CTRL_START); i++)
		usleep(1000);
	for (size_t i = 0; i < 10; i++)
		rsp[i] = rd8(TPM_CRB_BUF_OFF + i);
	if (be32(rsp + 2) > cap || be32(rsp + 2) < 10)
		return ~0u;
	for (size_t i = 10; i < be32(rsp + 2); i++)
		rsp[i] = rd8(TPM_CRB_BUF_OFF + i);
	return be32(rsp + 6);
}

static uint32_t cmd(const uint8_t *c, size_t len, uint8_t *rsp)
{
	return cfg.tpm_persistent ? crb_cmd(c, len, rsp, 4096) : tis_cmd(c, len, rsp, 4096);
}

/* PCR 16 into out: 0 or the response code. */
static uint32_t pcr16(uint8_t out[32])
{
	uint8_t rsp[4096];
	uint32_t rc = cmd(pcr16_read, sizeof(pcr16_read), rsp);

	if (!rc)
		memcpy(out, rsp + 30, 32);
	return rc;
}

static void *dev_new(const char *dir)
{
	struct device_firmware fw = {.tpm_state = dir, .tpm_state_fd = -1};
	struct device_env env = {.cfg = &cfg, .mmio = &mmio, .fw = &fw};
	void *d = NULL;

	if (tpm_device.create(&env, 0, &d))
		return NULL;
	return d;
}

/* freeze, save, thaw: the bytes the device wrote (0 or -errno). */
static int dev_save(void *d, struct snap_buf *b)
{
	int ret = tpm_device.freeze(d);

	if (ret)
		return ret;
	ret = tpm_device.save(d, b);
	tpm_device.thaw(d);
	return ret;
}

static int dev_load(void *d, const struct snap_buf *b)
{
	struct snap_cur c = snap_cur_make(b->p, b->len);

	return tpm_device.load(d, &c);
}

static void setup(bool persistent)
{
	memset(&cfg, 0, sizeof(cfg));
	cfg.tpm = true;
	cfg.tpm_persistent = persistent;
	memset(pcr16_extend + 33, 0x5a, 32);
	bus_init(&mmio, "mmio");
}

static void test_tis_snapshot(void)
{
	struct snap_buf b = {0};
	uint8_t rsp[4096], v1[32], v2[32], v3[32];
	void *a, *d;

	if (!have_swtpm())
		SKIP("swtpm is not installed (Debian package swtpm)");
	setup(false);
	a = dev_new(NULL);
	CHECK(a != NULL);
	if (!a)
		return;
	CHECK_EQ_U64(cmd(startup, sizeof(startup), rsp), 0);
	CHECK_EQ_U64(cmd(pcr16_extend, sizeof(pcr16_extend), rsp), 0);
	CHECK_EQ_U64(pcr16(v1), 0);
	/* a command half written: the freeze refuses, try again */
	tis_write_cmd(pcr16_read, 5);
	CHECK_EQ_U64(tpm_device.freeze(a), (uint64_t)-EAGAIN);
	wr8(TPM_TIS_STS, TPM_TIS_STS_READY);
	CHECK_EQ_U64(dev_save(a, &b), 0);
	/* the saved TPM runs on */
	CHECK_EQ_U64(cmd(pcr16_extend, sizeof(pcr16_extend), rsp), 0);
	CHECK_EQ_U64(pcr16(v3), 0);
	CHECK(memcmp(v1, v3, 32) != 0);
	tpm_device.destroy(a);
	bus_release(&mmio);

	bus_init(&mmio, "mmio");
	d = dev_new(NULL);
	CHECK(d != NULL);
	if (d) {
		CHECK_EQ_U64(dev_load(d, &b), 0);
		CHECK_EQ_U64(pcr16(v2), 0); /* no Startup: the TPM resumed */
		CHECK(!memcmp(v1, v2, 32));
		tpm_device.destroy(d);
	}
	bus_release(&mmio);
	/* a damaged permanent blob: swtpm refuses it, so does the restore */
	bus_init(&mmio, "mmio");
	d = dev_new(NULL);
	if (d) {
		struct snap_cur c = snap_cur_make(b.p, b.len), body;
		uint32_t tag;

		for (int i = 0; i < 4; i++)
			snap_cur_next(&c, &tag, &body);
		CHECK_EQ_U64(tag, TPM_SNAP_BLOB);
		memset((uint8_t *)body.p + 8 + (body.left - 8) / 2, 0xa5, 64);
		CHECK(dev_load(d, &b) != 0);
		tpm_device.destroy(d);
	}
	bus_release(&mmio);
	snap_buf_release(&b);
}

static int mkdir_tmp(char *tmpl)
{
	return mkdtemp(tmpl) ? 0 : -errno;
}

static void rm_dir(const char *dir)
{
	char cmdline[256];

	snprintf(cmdline, sizeof(cmdline), "rm -rf -- '%s'", dir);
	if (!strncmp(dir, "/tmp/vmlet-tpmsnap-", 19))
		(void)!system(cmdline);
}

static void test_crb_persistent(void)
{
	char d1[] = "/tmp/vmlet-tpmsnap-XXXXXX", d2[] = "/tmp/vmlet-tpmsnap-XXXXXX";
	struct snap_buf b = {0};
	uint8_t rsp[4096], v1[32], v2[32];
	void *a;

	if (!have_swtpm())
		SKIP("swtpm is not installed (Debian package swtpm)");
	CHECK_EQ_U64(mkdir_tmp(d1), 0);
	CHECK_EQ_U64(mkdir_tmp(d2), 0);
	setup(true);
	a = dev_new(d1);
	CHECK(a != NULL);
	if (a) {
		CHECK_EQ_U64(cmd(startup, sizeof(startup), rsp), 0);
		CHECK_EQ_U64(cmd(pcr16_extend, sizeof(pcr16_extend), rsp), 0);
		CHECK_EQ_U64(pcr16(v1), 0);
		CHECK_EQ_U64(dev_save(a, &b), 0);
		tpm_device.destroy(a);
	}
	bus_release(&mmio);
	/* the same directory: restored */
	bus_init(&mmio, "mmio");
	a = dev_new(d1);
	CHECK(a != NULL);
	if (a) {
		CHECK_EQ_U64(dev_load(a, &b), 0);
		CHECK_EQ_U64(pcr16(v2), 0);
		CHECK(!memcmp(v1, v2, 32));
		tpm_device.destroy(a);
	}
	bus_release(&mmio);
	/* another TPM's directory: refused */
	bus_init(&mmio, "mmio");
	a = dev_new(d2);
	CHECK(a != NULL);
	if (a) {
		CHECK_EQ_U64(dev_load(a, &b), (uint64_t)-ESTALE);
		tpm_device.destroy(a);
	}
	bus_release(&mmio);
	snap_buf_release(&b);
	rm_dir(d1);
	rm_dir(d2);
}

/* A TIS state as a save writes it, with v[] and the response chosen. */
static void tis_state(struct snap_buf *b, const uint32_t *v, const uint8_t *buf, size_t n,
		      uint32_t blob_type, size_t blob_len)
{
	static const uint32_t tis = 1;
	uint8_t *blob = calloc(1, blob_len + 16);

	b->len = 0;
	snap_buf_item(b, TPM_SNAP_KIND, &tis, sizeof(tis));
	snap_buf_item(b, TPM_SNAP_REGS, v, TPM_SNAP_NREGS * 4);
	snap_buf_item(b, TPM_SNAP_BUF, buf, n);
	tpm_snap_put_blob(b, blob_type, blob, blob_len, 0);
	tpm_snap_put_blob(b, TPM_SWTPM_BLOB_VOLATILE, blob, 16, 0);
	tpm_snap_put_blob(b, TPM_SWTPM_BLOB_SAVESTATE, NULL, 0, 0);
	free(blob);
}

static int parse(const struct snap_buf *b)
{
	static struct tpm_tis t;
	struct tpm_snap_if i = {.tis = true, .t = &t};
	struct snap_cur c = snap_cur_make(b->p, b->len);
	struct tpm_snap_regs r;
	struct tpm_snap_blobs bl;
	int ret = tpm_snap_parse(&i, &c, &r, &bl);

	if (!ret) { /* what passes fits the interface */
		tpm_tis_init(&t, NULL, NULL);
		tpm_snap_apply(&i, &r);
		ret = t.out <= t.rsp_len && t.rsp_len <= TPM_TIS_BUF_SIZE ? 0 : -ERANGE;
		tpm_tis_release(&t);
	}
	return ret;
}

static void test_hostile(void)
{
	struct snap_buf b = {0};
	uint8_t rsp[16] = {0x80, 0x01, 0, 0, 0, 16};
	uint32_t v[TPM_SNAP_NREGS] = {TPM_TIS_READY, 1, 0x8000000fu, 3};
	const uint32_t perm = TPM_SWTPM_BLOB_PERMANENT;

	tis_state(&b, v, NULL, 0, perm, 100);
	CHECK_EQ_U64(parse(&b), 0);
	v[0] = TPM_TIS_EXECUTION; /* a command in flight */
	tis_state(&b, v, NULL, 0, perm, 100);
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	v[0] = 77;
	tis_state(&b, v, NULL, 0, perm, 100);
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	v[0] = TPM_TIS_READY, v[1] = 2;
	tis_state(&b, v, NULL, 0, perm, 100);
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	v[1] = 1, v[3] = 16; /* INT_VECTOR keeps 4 bits */
	tis_state(&b, v, NULL, 0, perm, 100);
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	v[3] = 3, v[7] = 1;
	tis_state(&b, v, NULL, 0, perm, 100);
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	v[7] = 0, v[0] = TPM_TIS_COMPLETION, v[4] = 4, v[5] = 16;
	tis_state(&b, v, rsp, 16, perm, 100);
	CHECK_EQ_U64(parse(&b), 0);
	v[4] = 17; /* read past the response */
	tis_state(&b, v, rsp, 16, perm, 100);
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	v[4] = 0, v[5] = 5000; /* a response longer than the FIFO */
	tis_state(&b, v, rsp, 16, perm, 100);
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	v[5] = 16, rsp[5] = 12; /* its header says otherwise */
	tis_state(&b, v, rsp, 16, perm, 100);
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	v[0] = TPM_TIS_READY, v[5] = 0, v[4] = 0; /* a response outside COMPLETION */
	tis_state(&b, v, rsp, 16, perm, 100);
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	tis_state(&b, v, NULL, 0, TPM_SWTPM_BLOB_VOLATILE, 100); /* blobs out of order */
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	tis_state(&b, v, NULL, 0, perm, 0); /* no permanent state */
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	tis_state(&b, v, NULL, 0, perm, TPM_SWTPM_BLOB_MAX);
	CHECK_EQ_U64(parse(&b), 0);
	tis_state(&b, v, NULL, 0, perm, TPM_SWTPM_BLOB_MAX + 1); /* bounded */
	CHECK_EQ_U64(parse(&b), (uint64_t)-EINVAL);
	tis_state(&b, v, NULL, 0, perm, 100);
	b.len -= 12; /* cut short */
	CHECK_EQ_U64(parse(&b), (uint64_t)-EBADMSG);
	snap_buf_release(&b);
}

int main(void)
{
	TEST_RUN(test_hostile);
	TEST_RUN(test_tis_snapshot);
	TEST_RUN(test_crb_persistent);
	return test_summary();
}
