/* SPDX-License-Identifier: MIT */
/* spec/quantity.c: exact parsing, canonical printing, limits. */
#include <errno.h>

#include "spec/quantity.h"
#include "tests/lib/test.h"

static const struct {
	const char *in, *canon;
	long long value; /* Value(): rounded up */
} cases[] = {
    {"4Gi", "4Gi", 4ll << 30},
    {"4096Mi", "4Gi", 4ll << 30},
    {"1536Mi", "1536Mi", 1536ll << 20},
    {"512Mi", "512Mi", 512ll << 20},
    {"1Ki", "1Ki", 1024},
    {"0.5Gi", "512Mi", 512ll << 20},
    {"1073741824", "1073741824", 1073741824},
    {"1G", "1G", 1000000000},
    {"1000M", "1G", 1000000000},
    {"1.5G", "1500M", 1500000000},
    {"500m", "500m", 1},
    {"2", "2", 2},
    {"0", "0", 0},
    {"0Gi", "0", 0},
    {"12e6", "12e6", 12000000},
    {"1k", "1k", 1000},
    {"100Ki", "100Ki", 102400},
    {"1023", "1023", 1023},
    {"-2Gi", "-2Gi", -(2ll << 30)},
    {"8Ei", "8Ei", 0}, /* value checked separately: 2^63 does not fit */
};

static void test_parse_and_format(void)
{
	struct quantity q;
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = qty_parse(cases[i].in, &q);

		if (strcmp(cases[i].in, "8Ei") == 0) {
			CHECK(ret == -ERANGE);
			continue;
		}
		CHECK(ret == 0);
		qty_format(&q, buf, sizeof(buf));
		CHECK_STR(buf, cases[i].canon);
		CHECK(qty_value(&q) == cases[i].value);
	}
}

static void test_invalid(void)
{
	static const char *const bad[] = {
	    "",	   "Gi", "4GB", "4 Gi", "1.2.3",
	    "--1", "4g", "1e",	"0x10", "99999999999999999999999999999999999"};
	struct quantity q;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(qty_parse(bad[i], &q) != 0);
	CHECK(qty_parse("7Ei", &q) == 0);
	CHECK(qty_parse("9223372036854775808", &q) == -ERANGE);
	CHECK(qty_parse("1e40", &q) == -ERANGE);
}

/* 30 significant digits before a binary suffix (found by resolve_fuzz: the
 * mantissa times 10^9 overflowed 128 bits): exact, rounded up in nanos. */
static void test_long_mantissa(void)
{
	struct quantity q;

	CHECK(qty_parse("0.200000000000000000000000000002Mi", &q) == 0);
	CHECK(q.nanos == (__int128)209715200000000ll + 1); /* 0.2 * 2^20, + the tail */
	CHECK(qty_parse("0.200000000000000000000000000000Mi", &q) == 0);
	CHECK(q.nanos == (__int128)209715200000000ll);
	CHECK(qty_parse("123456789012345678901234567890Ki", &q) == -ERANGE);
	CHECK(qty_parse("1234567.89012345678901234567890Ki", &q) == 0);
	CHECK(qty_value(&q) == 1264197520); /* 1234567.89...Ki rounded up */
	CHECK(qty_parse("0.000000000000000000000000000001Ei", &q) == 0);
	CHECK(q.nanos == 1); /* 0.0012 nanos, rounded up */
}

/* The parser's extremes, run under UBSan in the sanitizer build: every
 * exponent the parser takes with the shortest and the longest mantissas
 * and fractions. "1.00000000e-40" once divided by 10^8 * 10^31, past
 * 128 bits (undefined behaviour, 1 byte in the normal build by chance). */
static void test_extremes(void)
{
	static const char *const mants[] = {"1",
					    "1.00000000",
					    "999999999999999999999999999999",
					    "0.000000000000000000000000000001",
					    "99999999999999.9999999999999999",
					    "0.999999999999999999999999999999",
					    "0",
					    "-1"};
	static const char *const sfx[] = {"", "n", "m", "k", "E", "Ki", "Ei"};
	struct quantity q;
	char in[96];
	int ret;

	CHECK(qty_parse("1.00000000e-40", &q) == 0);
	CHECK(q.nanos == 1); /* 10^-31 nanos, rounded up */
	CHECK(qty_value(&q) == 1);
	CHECK(qty_parse("0.000000000000000000000000000001e-40", &q) == 0);
	CHECK(q.nanos == 1);
	CHECK(qty_parse("0e-40", &q) == 0 && q.nanos == 0);
	CHECK(qty_parse("-1e-40", &q) == 0 && q.nanos == -1);
	for (int e = -40; e <= 40; e++) {
		/* 1eN: 10^(N+9) nanos, at least 1, below 2^63 units */
		snprintf(in, sizeof(in), "1e%d", e);
		ret = qty_parse(in, &q);
		if (e >= 19) {
			CHECK(ret == -ERANGE);
			continue;
		}
		CHECK(ret == 0);
		__int128 want = 1;
		for (int i = 0; i < e + 9; i++)
			want *= 10;
		CHECK(q.nanos == want);
	}
	for (size_t m = 0; m < sizeof(mants) / sizeof(mants[0]); m++) {
		for (int e = -41; e <= 41; e++) {
			snprintf(in, sizeof(in), "%se%d", mants[m], e);
			ret = qty_parse(in, &q);
			CHECK(ret == 0 || ret == -ERANGE);
			if (ret == 0 && strcmp(mants[m], "0") && mants[m][0] != '-')
				CHECK(q.nanos > 0);
		}
		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
			snprintf(in, sizeof(in), "%s%s", mants[m], sfx[i]);
			ret = qty_parse(in, &q);
			CHECK(ret == 0 || ret == -ERANGE);
		}
	}
}

static void test_compare(void)
{
	struct quantity a, b;

	CHECK(qty_parse("1Gi", &a) == 0);
	CHECK(qty_parse("1073741824", &b) == 0);
	CHECK(qty_cmp(&a, &b) == 0);
	CHECK(qty_parse("1G", &b) == 0);
	CHECK(qty_cmp(&a, &b) > 0);
	CHECK(qty_is_int(&a));
	CHECK(qty_parse("1500m", &b) == 0);
	CHECK(!qty_is_int(&b));
}

int main(void)
{
	TEST_RUN(test_parse_and_format);
	TEST_RUN(test_invalid);
	TEST_RUN(test_compare);
	TEST_RUN(test_long_mantissa);
	TEST_RUN(test_extremes);
	return test_summary();
}
