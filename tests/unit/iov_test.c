// SPDX-License-Identifier: MIT
/* The iovec helpers (vmm/util/iov.h) the virtio devices, the disk formats and
 * the network backends share: sizes, slices across segment edges and
 * empty segments, copies that start mid-segment and stop at the end. */
#include <string.h>

#include "tests/lib/test.h"
#include "vmm/util/iov.h"

static char a[4] = "abcd", b[1] = "e", c[5] = "fghij";

static void list(struct iovec v[4])
{
	v[0] = (struct iovec){a, 4};
	v[1] = (struct iovec){NULL, 0}; /* an empty segment */
	v[2] = (struct iovec){b, 1};
	v[3] = (struct iovec){c, 5};
}

static void test_size(void)
{
	struct iovec v[4];

	list(v);
	CHECK_EQ_U64(iov_size(v, 4), 10);
	CHECK_EQ_U64(iov_size(v, 1), 4);
	CHECK_EQ_U64(iov_size(v, 0), 0);
}

static void test_slice(void)
{
	struct iovec v[4], d[4];
	int k;

	list(v);
	/* [3, 8): "d", "e", "fgh"; the empty segment is left out */
	k = iov_slice(v, 4, 3, 5, d);
	CHECK_EQ_U64(k, 3);
	CHECK(d[0].iov_base == a + 3 && d[0].iov_len == 1);
	CHECK(d[1].iov_base == b && d[1].iov_len == 1);
	CHECK(d[2].iov_base == c && d[2].iov_len == 3);
	/* past the end: what there is */
	k = iov_slice(v, 4, 8, 100, d);
	CHECK_EQ_U64(k, 1);
	CHECK(d[0].iov_base == c + 3 && d[0].iov_len == 2);
	CHECK_EQ_U64(iov_slice(v, 4, 10, 1, d), 0);
	CHECK_EQ_U64(iov_slice(v, 4, 0, 0, d), 0);
}

static void test_copy(void)
{
	struct iovec v[4];
	char buf[16];

	list(v);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ_U64(iov_to_buf(v, 4, 2, buf, 5), 5);
	CHECK(!memcmp(buf, "cdefg", 5));
	/* the list ends first: a short copy */
	CHECK_EQ_U64(iov_to_buf(v, 4, 7, buf, sizeof(buf)), 3);
	CHECK(!memcmp(buf, "hij", 3));
	CHECK_EQ_U64(iov_to_buf(v, 4, 10, buf, 1), 0);
	CHECK_EQ_U64(iov_from_buf(v, 4, 3, "XYZ", 3), 3);
	CHECK(!memcmp(a, "abcX", 4) && b[0] == 'Y' && c[0] == 'Z');
	CHECK_EQ_U64(iov_from_buf(v, 4, 9, "12", 2), 1);
	CHECK(c[4] == '1');
}

int main(void)
{
	TEST_RUN(test_size);
	TEST_RUN(test_slice);
	TEST_RUN(test_copy);
	return test_summary();
}
