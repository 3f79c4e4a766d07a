/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "tests/lib/test.h"
#include "vmm/net/mac.h"

static void test_derive(void)
{
	uint8_t a[6], b[6], c[6], d[6], e[6];
	char s[NET_MAC_STRLEN];
	int i, distinct = 0;

	net_mac_derive("default", "vm1", "default", a);
	net_mac_derive("default", "vm1", "default", b);
	CHECK(!memcmp(a, b, 6)); /* stable */
	CHECK((a[0] & 3) == 2);	 /* locally administered, unicast */
	net_mac_derive("default", "vm1", "net2", c);
	net_mac_derive("other", "vm1", "default", d);
	net_mac_derive("default", "vm", "1default", e); /* field boundaries count */
	CHECK(memcmp(a, c, 6) && memcmp(a, d, 6) && memcmp(a, e, 6) && memcmp(c, d, 6));
	net_mac_derive(NULL, NULL, NULL, e);
	CHECK((e[0] & 3) == 2);

	/* many names: all unicast+local, practically no collisions */
	for (i = 0; i < 200; i++) {
		char name[16];

		snprintf(name, sizeof(name), "vm%d", i);
		net_mac_derive("ns", name, "eth0", c);
		CHECK((c[0] & 3) == 2);
		net_mac_derive("ns", name, "eth1", d);
		distinct += memcmp(c, d, 6) != 0;
	}
	CHECK(distinct == 200);
	net_mac_format(a, s);
	CHECK(strlen(s) == 17 && s[2] == ':');
}

static void test_parse(void)
{
	uint8_t m[6];
	char s[NET_MAC_STRLEN];

	CHECK(net_mac_parse("de:ad:00:00:be:af", m) == 0);
	CHECK(!memcmp(m, "\xde\xad\x00\x00\xbe\xaf", 6));
	net_mac_format(m, s);
	CHECK_STR(s, "de:ad:00:00:be:af");
	CHECK(net_mac_parse("02-AB-cd-00-11-22", m) == 0 && m[1] == 0xab && m[5] == 0x22);
	CHECK(net_mac_parse("02:ab-cd:00:11:22", m) == -EINVAL); /* mixed separators */
	CHECK(net_mac_parse("01:00:5e:00:00:01", m) == -EINVAL); /* multicast */
	CHECK(net_mac_parse("00:00:00:00:00:00", m) == -EINVAL);
	CHECK(net_mac_parse("02:00:00:00:00", m) == -EINVAL);
	CHECK(net_mac_parse("02:00:00:00:00:0g", m) == -EINVAL);
	CHECK(net_mac_parse("02:00:00:00:00:001", m) == -EINVAL);
	CHECK(net_mac_parse("0200.0000.0001", m) == -EINVAL);
	CHECK(net_mac_parse(NULL, m) == -EINVAL);
	CHECK(net_mac_parse("", m) == -EINVAL);
}

int main(void)
{
	TEST_RUN(test_derive);
	TEST_RUN(test_parse);
	return test_summary();
}
