// SPDX-License-Identifier: MIT
/*
 * spec/uuid.c: SHA-1 against FIPS 180 test vectors (one block, two
 * blocks, the padding edge at 55/56/64 bytes), UUID version 5 against
 * RFC 9562's example and Python's uuid.uuid5 (the algorithm of Go's
 * uuid.NewSHA1), KubeVirt's legacy firmware UUID of a VM name, version 4
 * format, and the parser.
 */
#include <stdio.h>
#include <string.h>

#include "spec/uuid.h"
#include "tests/lib/test.h"

static const char *sha1_hex(const char *s, size_t n)
{
	static char hex[41];
	uint8_t h[20];

	uuid_sha1(s, n, h);
	for (int i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", h[i]);
	return hex;
}

static void test_sha1(void)
{
	char m[200];

	CHECK_STR(sha1_hex("", 0), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	CHECK_STR(sha1_hex("abc", 3), "a9993e364706816aba3e25717850c26c9cd0d89d");
	CHECK_STR(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56),
		  "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	memset(m, 'a', sizeof(m));
	CHECK_STR(sha1_hex(m, 55), "c1c8bbdc22796e28c0e15163d20899b65621d65a");
	CHECK_STR(sha1_hex(m, 64), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
	CHECK_STR(sha1_hex(m, 200), "e61cfffe0d9195a525fc6cf06ca2d77119c24a40");
}

static void test_v5(void)
{
	char u[UUID_STR_LEN];

	/* RFC 9562 appendix A.4: www.example.com in the DNS namespace */
	CHECK(uuid_v5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com", u) == 0);
	CHECK_STR(u, "2ed6657d-e927-568b-95e1-2665a8aea6a2");
	CHECK(uuid_v5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "python.org", u) == 0);
	CHECK_STR(u, "886313e1-3b8a-5372-9b90-0c9aee199e5d");
	CHECK(uuid_v5("not-a-uuid", "x", u) < 0);
	/* CalculateLegacyUUID: namespace 6a1a24a1-4061-4607-8bf4-a3963d0c5895 */
	uuid_kubevirt_legacy("testvm", u);
	CHECK_STR(u, "5a9fc181-957e-5c32-9e5a-2de5e9673531");
	uuid_kubevirt_legacy("vm-cirros", u);
	CHECK_STR(u, "0d2a2043-41c0-59c3-9b17-025022203668");
}

static void test_v4_and_parse(void)
{
	char a[UUID_STR_LEN], b[UUID_STR_LEN];
	uint8_t bin[16];

	CHECK(uuid_v4(a) == 0 && uuid_v4(b) == 0);
	CHECK(strlen(a) == 36 && a[14] == '4' && strchr("89ab", a[19]) && strcmp(a, b));
	CHECK(uuid_parse(a, bin) == 0 && (bin[6] >> 4) == 4);
	CHECK(uuid_parse("5A9FC181-957E-5C32-9E5A-2DE5E9673531", bin) == 0 && bin[0] == 0x5a &&
	      bin[15] == 0x31);
	CHECK(uuid_parse("5a9fc181-957e-5c32-9e5a-2de5e967353", bin) < 0);
	CHECK(uuid_parse("5a9fc181x957e-5c32-9e5a-2de5e9673531", bin) < 0);
	CHECK(uuid_parse("5a9fc181-957e-5c32-9e5a-2de5e967353g", bin) < 0);
}

int main(void)
{
	TEST_RUN(test_sha1);
	TEST_RUN(test_v5);
	TEST_RUN(test_v4_and_parse);
	return test_summary();
}
