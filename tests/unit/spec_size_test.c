/* SPDX-License-Identifier: MIT */
/* spec_parse_size(): the sizes of the command line (--memory, --console-max). */
#include <errno.h>
#include <stdint.h>

#include "spec/spec.h"
#include "tests/lib/test.h"

static const struct {
	const char *in;
	int ret;
	uint64_t bytes;
} sizes[] = {
    {"0", 0, 0},
    {"4096", 0, 4096},
    {"512M", 0, 512000000ull},
    {"1Gi", 0, 1ull << 30},
    {"512Mi", 0, 512ull << 20},
    {"5G", 0, 5000000000ull},
    {"2T", 0, 2000000000000ull},
    {"3Ti", 0, 3ull << 40},
    {"10k", 0, 10000},
    {"10Ki", 0, 10240},
    {"10K", 0, 10240}, /* the command line's K is Ki */
    {"4096B", 0, 4096},
    {"0Gi", 0, 0},
    {"007Mi", 0, 7ull << 20},
    {"18446744073709551615", 0, UINT64_MAX},
    {"18446744073709551615B", 0, UINT64_MAX},
    {"16777215Ti", 0, 16777215ull << 40},
    {"16777216Ti", -EINVAL, 0},		  /* 2^64 */
    {"18446744073709551616", -EINVAL, 0}, /* 2^64 */
    {"99999999999999999999999", -EINVAL, 0},
    {"", -EINVAL, 0},
    {"Gi", -EINVAL, 0},
    {"-1", -EINVAL, 0},
    {"+1", -EINVAL, 0},
    {" 1", -EINVAL, 0},
    {"1 ", -EINVAL, 0},
    {"1 Gi", -EINVAL, 0},
    {"1.5G", -EINVAL, 0},
    {"1e3", -EINVAL, 0},
    {"1E", -EINVAL, 0},
    {"1P", -EINVAL, 0},
    {"1Pi", -EINVAL, 0},
    {"1Ei", -EINVAL, 0},
    {"500m", -EINVAL, 0},
    {"1n", -EINVAL, 0},
    {"1u", -EINVAL, 0},
    {"1g", -EINVAL, 0},
    {"1gi", -EINVAL, 0},
    {"1KiB", -EINVAL, 0},
    {"1MB", -EINVAL, 0},
    {"1b", -EINVAL, 0},
    {"1i", -EINVAL, 0},
    {"0x10", -EINVAL, 0},
    {"1Gi\n", -EINVAL, 0},
};

static void test_table(void)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t v = 12345;
		int ret = spec_parse_size(sizes[i].in, &v);

		if (ret != sizes[i].ret || (!ret && v != sizes[i].bytes))
			test_fail(__FILE__, __LINE__, "'%s': %d %llu, want %d %llu", sizes[i].in,
				  ret, (unsigned long long)v, sizes[i].ret,
				  (unsigned long long)sizes[i].bytes);
	}
	CHECK(spec_parse_size(NULL, &(uint64_t){0}) == -EINVAL);
}

int main(void)
{
	TEST_RUN(test_table);
	return test_summary();
}
