// SPDX-License-Identifier: MIT
/* The snapshot's state file (vmm/snapshot/snap_file.h) and items
 * (snap_buf.h): a written file reads back section by section; every kind
 * of damage (truncation at every length, each byte flipped, a length
 * that runs past the end, a duplicate section, bytes after the end, a
 * future version) is refused with a message, never read past; items are
 * bounded the same way. And fw_cfg's state (dev/fw_cfg.c), the one device
 * whose snapshot carries what the boot code made: a restored device goes
 * on reading where the saved one stopped; a name without its NUL, a
 * reserved key and a loaded, non-fresh device are refused. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/test.h"
#include "vmm/dev/devices.h"
#include "vmm/dev/fw_cfg.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/snapshot/snap_file.h"
#include "vmm/vm/device.h"

static void build(struct snap_buf *b)
{
	struct snap_header h = {.version = SNAP_VERSION,
				.vendor = 1,
				.n_vcpus = 2,
				.memory_bytes = 1 << 20,
				.xcr0 = 7,
				.features = SNAP_FEAT_XSAVE};
	struct snap_buf dev = {0};
	size_t mark;

	strcpy(h.writer, SNAP_WRITER);
	snap_file_begin(b, &h);
	snap_file_section(b, SNAP_SEC_CONFIG, 0, "{\"name\":\"vm\"}", 13);
	snap_buf_item(&dev, 1, "abc", 3);
	mark = snap_buf_open(&dev, 2);
	snap_buf_u32(&dev, 0x11223344);
	snap_buf_u64(&dev, 0x5566778899aabbccull);
	snap_buf_close(&dev, mark);
	snap_file_section(b, SNAP_SEC_DEVICE, 3, dev.p, dev.len);
	snap_file_section(b, SNAP_SEC_VCPU, 1, "", 0);
	snap_file_end(b);
	CHECK(!dev.err && !b->err);
	snap_buf_release(&dev);
}

static void test_roundtrip(void)
{
	struct snap_buf b = {0};
	struct snap_file f;
	const struct snap_section *s;
	struct snap_cur c, body, in;
	uint32_t tag, u32;
	uint64_t u64;
	char err[200] = "", abc[3];

	build(&b);
	CHECK_EQ_U64(snap_file_parse(b.p, b.len, &f, err, sizeof(err)), 0);
	CHECK_EQ_U64(f.n, 3);
	CHECK_EQ_U64(f.hdr.n_vcpus, 2);
	CHECK_EQ_U64(f.hdr.xcr0, 7);
	CHECK_STR(f.hdr.writer, SNAP_WRITER);
	s = snap_file_find(&f, SNAP_SEC_CONFIG, 0);
	CHECK(s && s->len == 13 && !memcmp(s->data, "{\"name\":\"vm\"}", 13));
	CHECK(snap_file_find(&f, SNAP_SEC_DEVICE, 2) == NULL);
	s = snap_file_find(&f, SNAP_SEC_DEVICE, 3);
	CHECK(s != NULL);
	if (s) {
		c = snap_cur_make(s->data, s->len);
		CHECK_EQ_U64(snap_cur_want(&c, 1, abc, 3), 0);
		CHECK(!memcmp(abc, "abc", 3));
		CHECK_EQ_U64(snap_cur_next(&c, &tag, &body), 0);
		CHECK_EQ_U64(tag, 2);
		in = body;
		CHECK(!snap_cur_u32(&in, &u32) && u32 == 0x11223344);
		CHECK(!snap_cur_u64(&in, &u64) && u64 == 0x5566778899aabbccull);
		CHECK_EQ_U64(snap_cur_u32(&in, &u32), (uint64_t)-EBADMSG); /* nothing left */
		CHECK_EQ_U64(snap_cur_next(&c, &tag, &body), (uint64_t)-ENOENT);
	}
	snap_file_release(&f);
	snap_buf_release(&b);
}

/* Every truncation and every single flipped byte is refused. */
static void test_damage(void)
{
	struct snap_buf b = {0};
	struct snap_file f;
	char err[200];
	uint8_t *copy;
	size_t bad = 0;

	build(&b);
	copy = malloc(b.len);
	for (size_t n = 0; n < b.len; n++) {
		memcpy(copy, b.p, n);
		err[0] = 0;
		if (snap_file_parse(copy, n, &f, err, sizeof(err)) == 0 || !err[0])
			bad++;
	}
	CHECK_EQ_U64(bad, 0);
	for (size_t i = 0; i < b.len; i++) {
		memcpy(copy, b.p, b.len);
		copy[i] ^= 0x40;
		err[0] = 0;
		if (snap_file_parse(copy, b.len, &f, err, sizeof(err)) == 0 || !err[0])
			bad++;
	}
	CHECK_EQ_U64(bad, 0);
	free(copy);
	snap_buf_release(&b);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void test_hostile(void)
{
	struct snap_buf b = {0}, g = {0};
	struct snap_header h = {.version = SNAP_VERSION};
	struct snap_file f;
	char err[200];
	uint64_t huge = ~0ull;

	/* a section whose length runs far past the end (CRC made valid) */
	snap_file_begin(&b, &h);
	snap_buf_u32(&b, SNAP_SEC_CONFIG);
	snap_buf_u32(&b, 0);
	snap_buf_u64(&b, huge);
	snap_buf_u32(&b, 0);
	snap_buf_u32(&b, 0);
	CHECK_EQ_U64(snap_file_parse(b.p, b.len, &f, err, sizeof(err)), (uint64_t)-EBADMSG);
	CHECK(strstr(err, "runs past the end") != NULL);
	snap_buf_release(&b);

	/* a duplicate section */
	snap_file_begin(&b, &h);
	snap_file_section(&b, SNAP_SEC_VCPU, 0, "a", 1);
	snap_file_section(&b, SNAP_SEC_VCPU, 0, "a", 1);
	snap_file_end(&b);
	CHECK_EQ_U64(snap_file_parse(b.p, b.len, &f, err, sizeof(err)), (uint64_t)-EBADMSG);
	CHECK(strstr(err, "twice") != NULL);
	snap_buf_release(&b);

	/* bytes after the end section */
	snap_file_begin(&b, &h);
	snap_file_end(&b);
	snap_buf_u64(&b, 0);
	CHECK_EQ_U64(snap_file_parse(b.p, b.len, &f, err, sizeof(err)), (uint64_t)-EBADMSG);
	CHECK(strstr(err, "after the end") != NULL);
	snap_buf_release(&b);

	/* another format version: refused as such (header CRC fixed) */
	h.version = SNAP_VERSION + 1;
	snap_file_begin(&g, &h);
	snap_file_end(&g);
	CHECK_EQ_U64(snap_file_parse(g.p, g.len, &f, err, sizeof(err)), (uint64_t)-ENOTSUP);
	CHECK(strstr(err, "version") != NULL);
	snap_buf_release(&g);
}

/* Items: a length past the end, non-zero padding, the wrong tag or size. */
static void test_items(void)
{
	uint8_t buf[16];
	struct snap_cur c, body;
	uint32_t tag;
	uint8_t out[4];

	put32(buf, 1);
	put32(buf + 4, 100); /* more than is there */
	c = snap_cur_make(buf, 12);
	CHECK_EQ_U64(snap_cur_next(&c, &tag, &body), (uint64_t)-EBADMSG);
	put32(buf + 4, 3);
	memcpy(buf + 8, "abc\x01", 4); /* padding byte not zero */
	c = snap_cur_make(buf, 12);
	CHECK_EQ_U64(snap_cur_next(&c, &tag, &body), (uint64_t)-EBADMSG);
	buf[11] = 0;
	c = snap_cur_make(buf, 12);
	CHECK_EQ_U64(snap_cur_want(&c, 1, out, 4), (uint64_t)-EBADMSG); /* size 3 */
	CHECK_EQ_U64(snap_cur_want(&c, 2, out, 3), (uint64_t)-EBADMSG); /* tag 1 */
	CHECK_EQ_U64(snap_cur_want(&c, 1, out, 3), 0);
	CHECK_EQ_U64(c.left, 0);
	c = snap_cur_make(buf, 7); /* a header cut short */
	CHECK_EQ_U64(snap_cur_next(&c, &tag, &body), (uint64_t)-EBADMSG);
}

static void fwcfg_read(struct fw_cfg *fc, uint8_t *out, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		fw_cfg_pio_read(fc, FW_CFG_PORT_DATA, &out[i], 1);
}

static void test_fw_cfg(void)
{
	static const uint8_t file[10] = "0123456789";
	struct fw_cfg *a, *b;
	struct snap_buf s = {0}, bad = {0};
	struct snap_cur c;
	uint16_t key = FW_CFG_FILE_FIRST, cpus = 4;
	uint8_t got[4];

	CHECK(fw_cfg_create(&a, NULL) == 0 && fw_cfg_create(&b, NULL) == 0);
	CHECK(fw_cfg_add_item(a, FW_CFG_NB_CPUS, &cpus, 2) == 0);
	CHECK(fw_cfg_add_file(a, "etc/test", file, sizeof(file)) == 0);
	fw_cfg_pio_write(a, FW_CFG_PORT_SEL, &key, 2);
	fwcfg_read(a, got, 3);
	CHECK(!memcmp(got, "012", 3));
	CHECK_EQ_U64(fw_cfg_device.save(a, &s), 0);
	c = snap_cur_make(s.p, s.len);
	CHECK_EQ_U64(fw_cfg_device.load(b, &c), 0);
	fwcfg_read(b, got, 4);
	CHECK(!memcmp(got, "3456", 4)); /* where the saved one was */
	key = FW_CFG_NB_CPUS;
	fw_cfg_pio_write(b, FW_CFG_PORT_SEL, &key, 2);
	fwcfg_read(b, got, 2);
	CHECK(got[0] == 4 && got[1] == 0);
	c = snap_cur_make(s.p, s.len); /* b is no longer fresh */
	CHECK(fw_cfg_device.load(b, &c) != 0);
	fw_cfg_destroy(b);

	/* the file's name without its NUL (the item after the registers and
	 * the NB_CPUS item: 8 + 24, then 8 + 4 + 2 + 2 padding; its header 8) */
	snap_buf_put(&bad, s.p, s.len);
	memset(bad.p + 32 + 24 + 8, 'x', FW_CFG_NAME_MAX);
	CHECK(fw_cfg_create(&b, NULL) == 0);
	c = snap_cur_make(bad.p, bad.len);
	CHECK_EQ_U64(fw_cfg_device.load(b, &c), (uint64_t)-EBADMSG);
	fw_cfg_destroy(b);
	/* a reserved key (the signature) */
	memcpy(bad.p, s.p, s.len);
	memset(bad.p + 32 + 8, 0, 4);
	CHECK(fw_cfg_create(&b, NULL) == 0);
	c = snap_cur_make(bad.p, bad.len);
	CHECK_EQ_U64(fw_cfg_device.load(b, &c), (uint64_t)-EBADMSG);
	fw_cfg_destroy(b);
	fw_cfg_destroy(a);
	snap_buf_release(&s);
	snap_buf_release(&bad);
}

int main(void)
{
	TEST_RUN(test_roundtrip);
	TEST_RUN(test_damage);
	TEST_RUN(test_hostile);
	TEST_RUN(test_items);
	TEST_RUN(test_fw_cfg);
	return test_summary();
}
