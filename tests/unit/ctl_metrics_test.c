/* SPDX-License-Identifier: MIT */
/*
 * ctl_metrics: the Prometheus text builder of the control socket's metrics
 * verb (vmm/ctl/proto.c): one HELP and TYPE per family, samples in order,
 * a buffer that grows; and a label built from a manifest's name escaped
 * as the text format requires (it can neither end its label nor add a
 * sample line), cut short between escapes. The server's use of it is
 * ctl_server_test's.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/lib/test.h"
#include "vmm/ctl/ctl.h"

static void test_metrics_builder(void)
{
	struct ctl_metrics m = {0};
	int i;

	ctl_metrics_add(&m, "a_total", "counter", "A.", "x=\"1\"", 1);
	ctl_metrics_add(&m, "a_total", "counter", "A.", "x=\"2\"", 2);
	ctl_metrics_add(&m, "b", "gauge", "B.", NULL, 0.25);
	for (i = 0; i < 200; i++)
		ctl_metrics_add(&m, "c", "gauge", "C.", NULL, i);
	CHECK(m.err == 0);
	CHECK(!strncmp(
	    m.buf,
	    "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 1\n"
	    "a_total{x=\"2\"} 2\n# HELP b B.\n# TYPE b gauge\nb 0.25\n# HELP c C.\n",
	    strlen("# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 1\n"
		   "a_total{x=\"2\"} 2\n# HELP b B.\n# TYPE b gauge\nb 0.25\n# HELP c C.\n")));
	CHECK(strstr(m.buf, "\nc 199\n") != NULL);
	free(m.buf);
}

/* A disk or interface name from a manifest in a label (issue 28, finding
 * 9): escaped as the text format requires, so it can neither end its label
 * nor add a sample line; a long one is cut between escapes. */
static void test_metrics_label_escaped(void)
{
	struct ctl_metrics m = {0};
	char l[64], *nl;
	int lines = 0;

	ctl_metrics_add(&m, "vmlet_blk_requests_total", "counter", "R.",
			ctl_metrics_label(l, sizeof(l), "disk", "x\"} 1\nvmlet_fake_total 9\n#\\"),
			3);
	CHECK(m.err == 0 && m.buf);
	if (!m.buf)
		return;
	CHECK_STR(l, "disk=\"x\\\"} 1\\nvmlet_fake_total 9\\n#\\\\\"");
	CHECK(!strstr(m.buf, "\nvmlet_fake_total"));
	for (nl = m.buf; (nl = strchr(nl, '\n')); nl++)
		lines++;
	CHECK(lines == 3); /* HELP, TYPE and the one sample */
	free(m.buf);
	/* cut short: never half an escape, always a closing quote */
	ctl_metrics_label(l, 12, "disk", "ab\"\"\"\"");
	CHECK_STR(l, "disk=\"ab\\\"\"");
	ctl_metrics_label(l, 13, "disk", "ab\"\"\"\"");
	CHECK_STR(l, "disk=\"ab\\\"\"");
	ctl_metrics_label(l, 14, "disk", "ab\"\"\"\"");
	CHECK_STR(l, "disk=\"ab\\\"\\\"\"");
}

int main(void)
{
	TEST_RUN(test_metrics_builder);
	TEST_RUN(test_metrics_label_escaped);
	return test_summary();
}
