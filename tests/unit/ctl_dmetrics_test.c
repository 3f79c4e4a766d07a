// SPDX-License-Identifier: MIT
/*
 * vmm/ctl/dmetrics.h: the guest's requests on the vhostmd port (valid,
 * CRLF, a query; a wrong path or method, a missing blank line, an endless
 * line, a partial one) and KubeVirt's metrics document computed from a
 * made-up /proc and /sys (memory arithmetic as KubeVirt's, vCPU threads'
 * CPU time only, physical packages counted once), well-formed XML (checked
 * with python3's parser when there is one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/ctl/dmetrics.h"
#include "vmm/vm_config.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char p[256], cmd[300];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	CHECK(system(cmd) == 0);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int req(const char *s, size_t *used)
{
	return ctl_dmetrics_request(s, strlen(s), used);
}

static void test_requests(void)
{
	char big[CTL_DMETRICS_MAX_LINE + 10];
	size_t used;

	CHECK(req("GET /metrics/XML\n\n", &used) == 1 && used == 18);
	CHECK(req("GET /metrics/XML\r\n\r\n", &used) == 1 && used == 20);
	CHECK(req("GET /metrics/XML?all=1\n\nGET", &used) == 1 && used == 24);
	CHECK(req("GET /metrics/XML\n\nGET /metrics/XML\n\n", &used) == 1 && used == 18);
	CHECK(req("GET /metrics/XMLX\n\n", &used) == -1 && used == 19);
	CHECK(req("POST /metrics/XML\n\n", &used) == -1 && used == 19);
	CHECK(req("GET /metrics/XML\nHost: x\n", &used) == -1 && used == 25);
	CHECK(req("GET /metrics/XML\n", &used) == 0 && used == 0);
	CHECK(req("GET /met", &used) == 0 && used == 0);
	CHECK(req("", &used) == 0 && used == 0);
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	CHECK(req(big, &used) == -1 && used == sizeof(big) - 1);
}

static void test_document(void)
{
	struct vm_config cfg;
	struct dmetrics_src src = {.vmm = 4242, .root = root};
	char *doc = NULL, cmd[400];
	size_t len = 0;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;

	vm_config_init(&cfg);
	cfg.sockets = 2;
	cfg.memory_bytes = 256ull << 20;
	put("/proc/meminfo", "MemTotal:       1000000 kB\nMemFree:         400000 kB\n"
			     "Buffers:          10000 kB\nCached:          90000 kB\n"
			     "SwapCached:        1000 kB\nSwapTotal:       50000 kB\n"
			     "SwapFree:         20000 kB\n");
	put("/proc/vmstat", "nr_free_pages 1\npswpin 3\npswpout 5\n");
	snprintf(cmd, sizeof(cmd), "cpu  %ld %ld %ld 999 0 0 0\ncpu0 1 1 1 1\n", 10 * hz, hz,
		 2 * hz);
	put("/proc/stat", cmd);
	put("/sys/devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
	put("/sys/devices/system/cpu/cpu1/topology/physical_package_id", "0\n");
	put("/sys/devices/system/cpu/cpu2/topology/physical_package_id", "1\n");
	put("/sys/devices/system/cpu/cpufreq/x", "");
	/* the VMM: two vCPU threads, one other thread that does not count */
	put("/proc/4242/task/4242/comm", "vmlet\n");
	put("/proc/4242/task/4242/stat", "4242 (vmlet) S 1 1 1 0 -1 0 0 0 0 0 500 500 0 0\n");
	snprintf(cmd, sizeof(cmd), "4243 (vcpu0) R 1 1 1 0 -1 0 0 0 0 0 %ld %ld 0 0\n", hz, hz);
	put("/proc/4242/task/4243/comm", "vcpu0\n");
	put("/proc/4242/task/4243/stat", cmd);
	put("/proc/4242/task/4244/comm", "vcpu1\n");
	put("/proc/4242/task/4244/stat", "4244 (a) b) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0\n");
	CHECK(ctl_dmetrics_document(&cfg, &src, &doc, &len) == 0);
	if (!doc)
		return;
	CHECK(len == strlen(doc));
	CHECK(!strncmp(doc,
		       "<metrics>\n  <metric type=\"string\" context=\"host\">\n"
		       "    <name>HostName</name>\n",
		       60));
	CHECK(len > 12 && !strcmp(doc + len - 12, "</metrics>\n\n"));
#define HAS(s) CHECK(strstr(doc, s) != NULL)
	HAS("<name>VirtualizationVendor</name>\n    <value><![CDATA[kubevirt.io]]></value>");
	HAS("<metric type=\"real64\" context=\"vm\" unit=\"s\">\n    <name>TotalCPUTime</name>\n"
	    "    <value><![CDATA[2.000000]]></value>");
	HAS("<metric type=\"uint64\" context=\"vm\">\n    <name>ResourceProcessorLimit</name>\n"
	    "    <value><![CDATA[2]]></value>");
	HAS("<name>PhysicalMemoryAllocatedToVirtualSystem</name>\n    "
	    "<value><![CDATA[262144]]></value>");
	HAS("<name>NumberOfPhysicalCPUs</name>\n    <value><![CDATA[2]]></value>");
	HAS("<name>TotalCPUTime</name>\n    <value><![CDATA[13.000000]]></value>");
	HAS("<name>FreePhysicalMemory</name>\n    <value><![CDATA[400000]]></value>");
	HAS("<name>FreeVirtualMemory</name>\n    <value><![CDATA[420000]]></value>");
	HAS("<name>MemoryAllocatedToVirtualServers</name>\n    <value><![CDATA[500000]]></value>");
	HAS("<name>UsedVirtualMemory</name>\n    <value><![CDATA[549000]]></value>");
	snprintf(cmd, sizeof(cmd), "<name>PagedOutMemory</name>\n    <value><![CDATA[%ld]]>",
		 5 * (sysconf(_SC_PAGESIZE) / 1024));
	HAS(cmd);
	HAS("<metric type=\"int64\" context=\"host\" unit=\"s\">\n    <name>Time</name>");
	f = fopen("/tmp/vmlet-dm-doc.xml", "w");
	if (f) {
		fwrite(doc, 1, len, f);
		fclose(f);
		if (system("command -v python3 >/dev/null") == 0)
			CHECK(system("python3 -c 'import xml.etree.ElementTree as E; "
				     "m = E.parse(\"/tmp/vmlet-dm-doc.xml\").getroot(); "
				     "assert len(m) == 17, len(m)'") == 0);
		unlink("/tmp/vmlet-dm-doc.xml");
	}
	free(doc);
}

int main(void)
{
	char cmd[128];

	snprintf(root, sizeof(root), "/tmp/vmlet-dm.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	TEST_RUN(test_requests);
	TEST_RUN(test_document);
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", root);
	if (system(cmd))
		return 1;
	return test_summary();
}
