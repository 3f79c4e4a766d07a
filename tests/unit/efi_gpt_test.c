// SPDX-License-Identifier: MIT
/*
 * efi_gpt_test - the EFI firmware's GPT reader (firmware/efi/gpt.c)
 * compiled for the host (efi_disk_env.h), on disk images made here with
 * Debian's sgdisk; sgdisk's own report is the oracle. Corrupted headers
 * and entry arrays fall back to the backup GPT; headers with valid CRCs
 * that lie about sizes and places are refused.
 */
#include "tests/unit/efi_disk_env.h"

/* sgdisk -i N: "First sector: 2048 (at 1024.0 KiB)" and the unique GUID. */
static int sgdisk_info(const char *img, int n, uint64_t *first, uint64_t *last, char *guid)
{
	char cmd[512], line[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "sgdisk -i %d %s", n, img);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long v;

		if (sscanf(line, "First sector: %llu", &v) == 1)
			*first = v;
		if (sscanf(line, "Last sector: %llu", &v) == 1)
			*last = v;
		sscanf(line, "Partition unique GUID: %36s", guid);
	}
	return pclose(p);
}

/* GUID text (as sgdisk prints it) -> on-disk mixed-endian bytes. */
static void guid_bytes(const char *s, uint8_t *out)
{
	unsigned int v[16];

	sscanf(s, "%2x%2x%2x%2x-%2x%2x-%2x%2x-%2x%2x-%2x%2x%2x%2x%2x%2x", &v[3], &v[2], &v[1],
	       &v[0], &v[5], &v[4], &v[7], &v[6], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13],
	       &v[14], &v[15]);
	for (int i = 0; i < 16; i++)
		out[i] = (uint8_t)v[i];
}

static void test_gpt_sgdisk(void)
{
	char img[128], guid[40] = "";
	struct memdisk m;
	struct gpt g;
	uint64_t first = 0, last = 0;
	uint8_t want_guid[16];

	if (!have_tools())
		SKIP("sgdisk/mkfs.vfat/mtools not installed");
	snprintf(img, sizeof(img), "%s/gpt.img", tmpdir);
	CHECK(sh("truncate -s 8M %s && sgdisk -n 1:2048:+3M -t 1:ef00 -c 1:ESP "
		 "-n 2:0:+1M -t 2:8300 -n 3:0:0 -t 3:8200 %s >/dev/null",
		 img, img) == 0);
	CHECK(sgdisk_info(img, 1, &first, &last, guid) == 0);
	guid_bytes(guid, want_guid);
	CHECK(memdisk_load(&m, img, 512) == 0);

	CHECK(gpt_read(&m.dev, &g) == 0);
	CHECK_EQ_U64(g.n_parts, 3);
	CHECK(!g.from_backup);
	const struct gpt_part *esp = gpt_find_type(&g, gpt_type_esp);

	CHECK(esp != NULL);
	if (esp) {
		CHECK_EQ_U64(esp->number, 1);
		CHECK_EQ_U64(esp->first_lba, first);
		CHECK_EQ_U64(esp->last_lba, last);
		CHECK(!memcmp(esp->part_guid, want_guid, 16));
		CHECK(u16eq(esp->name, "ESP"));
	}
	CHECK(g.parts[1].number == 2 && g.parts[2].number == 3);

	/* damaged primary header: the backup takes over with the same table */
	m.buf[512 + 40] ^= 1;
	CHECK(gpt_read(&m.dev, &g) == 0);
	CHECK(g.from_backup);
	CHECK_EQ_U64(g.n_parts, 3);
	CHECK(gpt_find_type(&g, gpt_type_esp) &&
	      gpt_find_type(&g, gpt_type_esp)->first_lba == first);
	m.buf[512 + 40] ^= 1;

	/* damaged primary entry array: backup too */
	m.buf[1024 + 33] ^= 0x80;
	CHECK(gpt_read(&m.dev, &g) == 0 && g.from_backup && g.n_parts == 3);
	/* and with the backup header also damaged: no GPT at all */
	m.buf[m.len - 512 + 60] ^= 1;
	CHECK(gpt_read(&m.dev, &g) == -FW_ENOENT);
	CHECK_EQ_U64(g.n_parts, 0);

	/* a disk that is not GPT */
	memset(m.buf, 0, m.len);
	CHECK(gpt_read(&m.dev, &g) == -FW_ENOENT);
	free(m.buf);
}

/* A valid header (CRCs recomputed) that lies about sizes must be refused. */
static void test_gpt_hostile_header(void)
{
	char img[128];
	struct memdisk m;
	struct gpt g;

	if (!have_tools())
		SKIP("sgdisk not installed");
	snprintf(img, sizeof(img), "%s/gpt2.img", tmpdir);
	CHECK(sh("truncate -s 2M %s && sgdisk -n 1:0:0 -t 1:ef00 %s >/dev/null", img, img) == 0);
	CHECK(memdisk_load(&m, img, 512) == 0);
	uint8_t *h = m.buf + 512, *b = m.buf + m.len - 512;
	static const struct {
		int off;
		uint32_t val;
	} lies[] = {
	    {80, 0xffffffffu},					  /* entries */
	    {84, 0},						  /* entry size */
	    {84, 100},	       {84, 1u << 20}, {72, 0xfffffff0u}, /* entry array LBA past the end */
	    {12, 4096},						  /* header size > block */
	    {24, 7},						  /* MyLBA */
	};
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		uint8_t save[92], saveb[92];

		memcpy(save, h, 92);
		memcpy(saveb, b, 92);
		put_le32(h + lies[i].off, lies[i].val);
		put_le32(b + lies[i].off, lies[i].val);
		put_le32(h + 16, 0);
		put_le32(h + 16, efi_crc32(0, h, le32(h + 12) <= 512 ? le32(h + 12) : 92));
		put_le32(b + 16, 0);
		put_le32(b + 16, efi_crc32(0, b, le32(b + 12) <= 512 ? le32(b + 12) : 92));
		int ret = gpt_read(&m.dev, &g);

		if (ret != -FW_ENOENT)
			printf("  lie %zu accepted (%d)\n", i, ret);
		CHECK(ret == -FW_ENOENT);
		memcpy(h, save, 92);
		memcpy(b, saveb, 92);
	}
	CHECK(gpt_read(&m.dev, &g) == 0 && g.n_parts == 1);
	free(m.buf);
}

int main(void)
{
	if (efi_disk_setup("efi_gpt_test"))
		return 1;
	TEST_RUN(test_gpt_sgdisk);
	TEST_RUN(test_gpt_hostile_header);
	efi_disk_teardown();
	return test_summary();
}
