/* SPDX-License-Identifier: MIT */
/*
 * The probe report's nic= lines (vmm/probe/report_net.c): parsing good and
 * malformed lines, the expected NICs of a configuration (manifest MAC or
 * vmlet's derived one), the attachment overriding them, every comparison
 * rule, the "nics" JSON member on both sides.
 */
#include <errno.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "tests/lib/test.h"
#include "vmm/net/mac.h"
#include "vmm/probe/report.h"

#define HEAD "VMLET-PROBE-BEGIN v1\n"
#define TAIL "VMLET-PROBE-END\n"

static struct probe_report *new_report(void)
{
	struct probe_report *r = calloc(1, sizeof(*r));

	if (!r)
		abort();
	return r;
}

static int parse(const char *nic_lines, struct probe_report *r)
{
	char text[2048];

	snprintf(text, sizeof(text), HEAD "%s" TAIL, nic_lines);
	return probe_report_parse(text, strlen(text), r);
}

static void test_parse_good(void)
{
	struct probe_report *r = new_report();

	CHECK_EQ_U64(parse("nic=00:03.0 02:00:00:aa:bb:01 1 1500 10.0.2.2/24 10.0.2.1 ok ok 18 "
			   "10 3\n"
			   "nic6=00:03.0 fe80:0:0:0:0:ff:fe00:1 ok fe80:0:0:0:1:2:3:4\n"
			   "nic=00:04.0 52:54:00:00:00:01 0 0 - - - - 0 1 0\n"
			   "nic6=00:04.0 fe80:0:0:0:5054:ff:fe00:1 - -\n"
			   "nic6=00:09.0 fe80:0:0:0:0:0:0:9 ok fe80:0:0:0:0:0:0:1\n",
			   r),
		     0);
	CHECK_STR(r->nics[0].ll6, "fe80:0:0:0:0:ff:fe00:1");
	CHECK(r->nics[0].ping6_ok);
	CHECK_STR(r->nics[0].peer6, "fe80:0:0:0:1:2:3:4");
	CHECK_STR(r->nics[1].ll6, "fe80:0:0:0:5054:ff:fe00:1");
	CHECK(!r->nics[1].ping6_ok);
	CHECK_STR(r->nics[1].peer6, "");
	CHECK_EQ_U64(r->n_nics, 2);
	CHECK_STR(r->nics[0].bdf, "00:03.0");
	CHECK_STR(r->nics[0].mac, "02:00:00:aa:bb:01");
	CHECK(r->nics[0].link_up);
	CHECK_EQ_U64(r->nics[0].mtu, 1500);
	CHECK_STR(r->nics[0].dhcp, "10.0.2.2/24");
	CHECK_STR(r->nics[0].router, "10.0.2.1");
	CHECK(r->nics[0].arp_ok && r->nics[0].ping_ok);
	CHECK_EQ_U64(r->nics[0].rx_ok, 18);
	CHECK_EQ_U64(r->nics[0].tx_ok, 10);
	CHECK_EQ_U64(r->nics[0].echoed, 3);
	CHECK(!r->nics[1].link_up);
	CHECK_STR(r->nics[1].dhcp, "");
	CHECK_STR(r->nics[1].router, "");
	CHECK(!r->nics[1].arp_ok && !r->nics[1].ping_ok);
	free(r);
}

static void test_parse_bad(void)
{
	static const char *const bad[] = {
	    "nic=00:03.0 02:00:00:aa:bb:01 1 1500 - - - - 1 1\n",      /* a field short */
	    "nic=00:03.0 02:00:00:aa:bb:01 2 1500 - - - - 1 1 0\n",    /* link 2 */
	    "nic=00:03.0 02:00:00:aa:bb:01 1 65536 - - - - 1 1 0\n",   /* mtu */
	    "nic=00:03.0 02:00:00:aa:bb:01 1 1500 - - yes - 1 1 0\n",  /* flag */
	    "nic=00:03.0 02:00:00:aa:bb:01 1 1500 - - - - -1 1 0\n",   /* sign */
	    "nic=00:03.0 02:00:00:aa:bb:01 1 1500 a\"b - - - 1 1 0\n", /* quote */
	    "nic=00:03.0 02:00:00:aa:bb:01:ff 1 1500 - - - - 1 1 0\n", /* long mac */
	    "nic=00:03.0 02:00:00:aa:bb:01 1 1500 - - - - 1 1 0x\n",   /* garbage */
	    "nic=00:03.0 02:00:00:aa:bb:01 1 1500 - - - - 1 1 0 9\n",  /* a field more */
	    "nic=00:03.0 02:00:00:aa:bb:01 1 1500  - - - 1 1 0\n",     /* an empty one */
	    "nic=\n",
	    "nic=00:03.0 02:00:00:aa:bb:01 1 1500 - - - - 1 1 0\nnic6=00:03.0 fe80::1 ok\n",
	    "nic=00:03.0 02:00:00:aa:bb:01 1 1500 - - - - 1 1 0\nnic6=00:03.0 fe80::1 yes -\n",
	};
	struct probe_report *r = new_report();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = parse(bad[i], r);

		if (err != -EBADMSG)
			test_fail(__FILE__, __LINE__, "accepted: %s", bad[i]);
	}
	/* more lines than the limit: the first ones are kept */
	char many[1024] = "";
	for (int i = 0; i < PROBE_MAX_NICS + 2; i++)
		strcat(many, "nic=00:03.0 02:00:00:aa:bb:01 1 1500 - - - - 1 1 0\n");
	CHECK_EQ_U64(parse(many, r), 0);
	CHECK_EQ_U64(r->n_nics, PROBE_MAX_NICS);
	free(r);
}

static void config(struct vm_config *cfg, struct vm_nic *nics)
{
	memset(cfg, 0, sizeof(*cfg));
	memset(nics, 0, 2 * sizeof(*nics));
	cfg->name = "netvm";
	cfg->namespace = "default";
	cfg->sockets = cfg->cores = cfg->threads = 1;
	cfg->nics = nics;
	cfg->n_nics = 2;
	nics[0].name = "default";
	nics[0].mac_set = true;
	memcpy(nics[0].mac, (uint8_t[6]){2, 0, 0, 0xaa, 0xbb, 1}, 6);
	nics[1].name = "second";
	nics[1].mtu = 9000;
}

static void test_expected(void)
{
	struct probe_report *e = new_report();
	struct vm_config cfg;
	struct vm_nic nics[2];
	uint8_t mac[6];
	char want[18];

	config(&cfg, nics);
	probe_report_net_expected(&cfg, e);
	CHECK_EQ_U64(e->n_nics, 2);
	CHECK_STR(e->nics[0].name, "default");
	CHECK_STR(e->nics[0].mac, "02:00:00:aa:bb:01");
	CHECK_EQ_U64(e->nics[0].mtu, 1500);
	net_mac_derive("default", "netvm", "second", mac);
	snprintf(want, sizeof(want), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
	CHECK_STR(e->nics[1].mac, want);
	CHECK_EQ_U64(e->nics[1].mtu, 9000);
	/* the attachment wins: bridge gives the guest the pod's MAC */
	probe_report_net_attached(e, 1, (uint8_t[6]){0x0a, 0x58, 1, 2, 3, 4}, 1450, "bridge",
				  0x0a000202, 24, true);
	CHECK_STR(e->nics[1].mac, "0a:58:01:02:03:04");
	CHECK_EQ_U64(e->nics[1].mtu, 1450);
	CHECK_STR(e->nics[1].dhcp, "10.0.2.2/24");
	CHECK_STR(e->nics[1].binding, "bridge");
	CHECK(e->nics[1].want_dhcp);
	probe_report_net_attached(e, 7, mac, 1500, "tap", 0, 0, false); /* out of range */
	free(e);
	/* an e1000e NIC is not the probe guest's to drive: not expected */
	e = new_report();
	nics[0].model = "e1000e";
	probe_report_net_expected(&cfg, e);
	CHECK_EQ_U64(e->n_nics, 1);
	CHECK_STR(e->nics[0].name, "second");
	free(e);
}

/* exp: one masquerade NIC; got: what the guest saw. */
static bool compare_one(const char *line, char *diff, size_t cap)
{
	struct probe_report *e = new_report(), *g = new_report();
	FILE *f;
	bool match;

	memset(diff, 0, cap);
	f = fmemopen(diff, cap, "w");

	e->n_nics = 1;
	snprintf(e->nics[0].name, sizeof(e->nics[0].name), "default");
	probe_report_net_attached(e, 0, (uint8_t[6]){2, 0, 0, 0xaa, 0xbb, 1}, 1500, "masquerade",
				  0x0a000202, 24, true);
	if (parse(line, g))
		abort();
	match = probe_report_net_compare(e, g, f);
	fclose(f);
	free(e);
	free(g);
	return match;
}

static void test_compare(void)
{
	static const struct {
		const char *line, *diff; /* diff NULL: a match */
	} cases[] = {
	    {"1 1500 10.0.2.2/24 10.0.2.1 ok - 5 5 0", NULL},
	    {"1 1500 10.0.2.2/24 10.0.2.1 ok - 5 5 0",
	     "mac: expected 02:00:00:aa:bb:01, guest 02:00:00:aa:bb:02"},
	    {"0 1500 10.0.2.2/24 10.0.2.1 ok - 5 5 0", "link down"},
	    {"1 1400 10.0.2.2/24 10.0.2.1 ok - 5 5 0", "mtu: expected 1500, guest 1400"},
	    {"1 1500 10.0.2.9/24 10.0.2.1 ok - 5 5 0",
	     "dhcpAddress: expected 10.0.2.2/24, guest 10.0.2.9/24"},
	    {"1 1500 - - - - 5 5 0", "no address by DHCP (masquerade binding)"},
	    {"1 1500 10.0.2.2/24 10.0.2.1 - - 5 5 0", "router 10.0.2.1 did not answer ARP"},
	    {"1 1500 10.0.2.2/24 10.0.2.1 ok - 0 5 0", "no frames received"},
	    {"1 1500 10.0.2.2/24 10.0.2.1 ok - 5 0 0", "no frames sent"},
	    {NULL, "nics: 1 expected, the guest reports 0"},
	};
	char d[1024], line[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		line[0] = 0;
		if (cases[i].line)
			snprintf(line, sizeof(line), "nic=00:03.0 02:00:00:aa:bb:%s %s\n",
				 i == 1 ? "02" : "01", cases[i].line);
		if (compare_one(line, d, sizeof(d)) != !cases[i].diff ||
		    (cases[i].diff ? !strstr(d, cases[i].diff) : d[0] != 0))
			test_fail(__FILE__, __LINE__, "case %zu: diff '%s'", i, d);
	}
}

static void test_json(void)
{
	struct probe_report *e = new_report(), *g = new_report();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_object *j, *nics, *n;

	e->n_nics = 1;
	snprintf(e->nics[0].name, sizeof(e->nics[0].name), "default");
	probe_report_net_attached(e, 0, (uint8_t[6]){2, 0, 0, 0xaa, 0xbb, 1}, 1500, "tap", 0, 0,
				  false);
	CHECK_EQ_U64(
	    parse("nic=00:03.0 02:00:00:aa:bb:01 1 1500 192.168.77.50/24 192.168.77.1 "
		  "ok ok 18 10 3\nnic6=00:03.0 fe80:0:0:0:0:ff:fe00:1 ok fe80:0:0:0:0:0:0:7\n",
		  g),
	    0);
	probe_report_print_json(f, e, g, probe_report_net_compare(e, g, NULL));
	fclose(f);
	j = json_tokener_parse(buf);
	CHECK(j);
	if (j && json_object_object_get_ex(json_object_object_get(j, "guest"), "nics", &nics)) {
		n = json_object_array_get_idx(nics, 0);
		CHECK_STR(json_object_get_string(json_object_object_get(n, "name")), "default");
		CHECK_STR(json_object_get_string(json_object_object_get(n, "mac")),
			  "02:00:00:aa:bb:01");
		CHECK_STR(json_object_get_string(json_object_object_get(n, "dhcpAddress")),
			  "192.168.77.50/24");
		CHECK_EQ_U64(json_object_get_int(json_object_object_get(n, "mtu")), 1500);
		CHECK_EQ_U64(json_object_get_int64(json_object_object_get(n, "rxOk")), 18);
		CHECK_EQ_U64(json_object_get_int64(json_object_object_get(n, "txOk")), 10);
		CHECK_EQ_U64(json_object_get_int64(json_object_object_get(n, "echoed")), 3);
		CHECK(json_object_get_boolean(json_object_object_get(n, "ping")));
		CHECK(json_object_get_boolean(json_object_object_get(n, "ping6")));
		CHECK_STR(json_object_get_string(json_object_object_get(n, "peer6")),
			  "fe80:0:0:0:0:0:0:7");
	} else {
		CHECK(!"guest.nics missing");
	}
	if (j && json_object_object_get_ex(json_object_object_get(j, "expected"), "nics", &nics)) {
		n = json_object_array_get_idx(nics, 0);
		CHECK_STR(json_object_get_string(json_object_object_get(n, "binding")), "tap");
		CHECK(!json_object_get_boolean(json_object_object_get(n, "dhcp")));
	} else {
		CHECK(!"expected.nics missing");
	}
	json_object_put(j);
	free(buf);
	free(e);
	free(g);
}

int main(void)
{
	TEST_RUN(test_parse_good);
	TEST_RUN(test_parse_bad);
	TEST_RUN(test_expected);
	TEST_RUN(test_compare);
	TEST_RUN(test_json);
	return test_summary();
}
