// SPDX-License-Identifier: MIT
/*
 * dmetrics.c - the downward metrics document and the guest's requests
 * (dmetrics.h); the serving process is dmetrics_run.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmm/ctl/dmetrics.h"
#include "vmm/vm_config.h"

/* The next line of buf (without "\r\n"): its length, or -1 when there is
 * no '\n' yet. */
static long dm_line(const char *buf, size_t len, size_t *next)
{
	const char *nl = memchr(buf, '\n', len);
	size_t n;

	if (!nl)
		return -1;
	n = (size_t)(nl - buf);
	*next = n + 1;
	if (n && buf[n - 1] == '\r')
		n--;
	return (long)n;
}

int ctl_dmetrics_request(const char *buf, size_t len, size_t *used)
{
	static const char want[] = "GET /metrics/XML";
	size_t n1, n2;
	long l1, l2;

	*used = 0;
	l1 = dm_line(buf, len, &n1);
	if (l1 < 0) {
		if (len <= CTL_DMETRICS_MAX_LINE)
			return 0;
		*used = len; /* an endless line: drop it */
		return -1;
	}
	l2 = dm_line(buf + n1, len - n1, &n2);
	if (l2 < 0)
		return len - n1 > CTL_DMETRICS_MAX_LINE ? (*used = len, -1) : 0;
	*used = n1 + n2;
	if (l2 != 0 || (size_t)l1 < sizeof(want) - 1 || memcmp(buf, want, sizeof(want) - 1))
		return -1;
	/* the path is /metrics/XML exactly; a query may follow */
	return (size_t)l1 == sizeof(want) - 1 || buf[sizeof(want) - 1] == '?' ? 1 : -1;
}

/* ---- the figures ----------------------------------------------------- */

static FILE *dm_open(const struct dmetrics_src *src, const char *path)
{
	char p[512];

	snprintf(p, sizeof(p), "%s%s", src->root ? src->root : "", path);
	return fopen(p, "re");
}

/* "Key: N kB" of /proc/meminfo, "key N" of /proc/vmstat: 0 when absent. */
static uint64_t dm_field(const struct dmetrics_src *src, const char *file, const char *key)
{
	unsigned long long v = 0;
	size_t kl = strlen(key);
	char line[256];
	FILE *f = dm_open(src, file);

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && (line[kl] == ':' || line[kl] == ' ')) {
			sscanf(line + kl + 1, "%llu", &v);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

/* user + nice + system of /proc/stat's cpu line, in seconds */
static double dm_host_cpu(const struct dmetrics_src *src)
{
	unsigned long long u = 0, n = 0, s = 0;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = dm_open(src, "/proc/stat");

	if (f && fscanf(f, "cpu %llu %llu %llu", &u, &n, &s) != 3)
		u = n = s = 0;
	if (f)
		fclose(f);
	return (double)(u + n + s) / (double)(hz > 0 ? hz : 100);
}

static unsigned int dm_packages(const struct dmetrics_src *src)
{
	char ids[256] = {0}, p[300];
	unsigned int n = 0, id;
	struct dirent *de;
	DIR *d;

	snprintf(p, sizeof(p), "%s/sys/devices/system/cpu", src->root ? src->root : "");
	d = opendir(p);
	while (d && (de = readdir(d))) {
		FILE *f;

		if (strncmp(de->d_name, "cpu", 3) || de->d_name[3] < '0' || de->d_name[3] > '9')
			continue;
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/%.32s/topology/physical_package_id",
			 de->d_name);
		f = dm_open(src, p);
		if (f && fscanf(f, "%u", &id) == 1 && id < sizeof(ids) && !ids[id]++)
			n++;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* utime + stime of /proc/PID/task/TID/stat, in ticks */
static uint64_t dm_task_ticks(const struct dmetrics_src *src, pid_t pid, const char *tid)
{
	unsigned long long ut = 0, st = 0;
	char p[96], buf[1024], *rp;
	size_t n;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/task/%.16s/stat", (int)pid, tid);
	f = dm_open(src, p);
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	rp = strrchr(buf, ')'); /* the name may hold anything */
	if (!rp ||
	    sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return ut + st;
}

/* The CPU time of the VMM's vCPU threads (named "vcpu..."), seconds. */
static double dm_vm_cpu(const struct dmetrics_src *src)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t ticks = 0;
	char p[64], comm[64];
	struct dirent *de;
	DIR *d;

	if (src->vmm <= 0)
		return 0;
	snprintf(p, sizeof(p), "%s/proc/%d/task", src->root ? src->root : "", (int)src->vmm);
	d = opendir(p);
	while (d && (de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/%d/task/%.16s/comm", (int)src->vmm, de->d_name);
		f = dm_open(src, p);
		if (f && fgets(comm, sizeof(comm), f) && !strncmp(comm, "vcpu", 4))
			ticks += dm_task_ticks(src, src->vmm, de->d_name);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return (double)ticks / (double)(hz > 0 ? hz : 100);
}

/* ---- the document ------------------------------------------------------ */

static void dm_metric(FILE *f, const char *type, const char *ctx, const char *unit,
		      const char *name, const char *value)
{
	fprintf(f, "  <metric type=\"%s\" context=\"%s\"", type, ctx);
	if (unit)
		fprintf(f, " unit=\"%s\"", unit);
	fprintf(f, ">\n    <name>%s</name>\n    <value><![CDATA[%s]]></value>\n  </metric>\n", name,
		value);
}

static void dm_u64(FILE *f, const char *ctx, const char *unit, const char *name, uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
	dm_metric(f, "uint64", ctx, unit, name, s);
}

static void dm_real(FILE *f, const char *ctx, const char *name, double v)
{
	char s[64];

	snprintf(s, sizeof(s), "%.6f", v);
	dm_metric(f, "real64", ctx, "s", name, s);
}

static void dm_host(FILE *f, const struct dmetrics_src *src)
{
	uint64_t mfree = dm_field(src, "/proc/meminfo", "MemFree"),
		 sfree = dm_field(src, "/proc/meminfo", "SwapFree"),
		 mtotal = dm_field(src, "/proc/meminfo", "MemTotal"),
		 stotal = dm_field(src, "/proc/meminfo", "SwapTotal"),
		 buffers = dm_field(src, "/proc/meminfo", "Buffers"),
		 cached = dm_field(src, "/proc/meminfo", "Cached"),
		 scached = dm_field(src, "/proc/meminfo", "SwapCached");
	uint64_t page_kib = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
	char s[32];

	snprintf(s, sizeof(s), "%u", dm_packages(src));
	dm_metric(f, "int64", "host", NULL, "NumberOfPhysicalCPUs", s);
	dm_real(f, "host", "TotalCPUTime", dm_host_cpu(src));
	dm_u64(f, "host", "KiB", "FreePhysicalMemory", mfree);
	dm_u64(f, "host", "KiB", "FreeVirtualMemory", mfree + sfree);
	dm_u64(f, "host", "KiB", "MemoryAllocatedToVirtualServers",
	       mtotal - mfree - buffers - cached);
	dm_u64(f, "host", "KiB", "UsedVirtualMemory",
	       mtotal + stotal - mfree - cached - buffers - scached);
	dm_u64(f, "host", "KiB", "PagedInMemory",
	       dm_field(src, "/proc/vmstat", "pswpin") * page_kib);
	dm_u64(f, "host", "KiB", "PagedOutMemory",
	       dm_field(src, "/proc/vmstat", "pswpout") * page_kib);
	snprintf(s, sizeof(s), "%lld", (long long)time(NULL));
	dm_metric(f, "int64", "host", "s", "Time", s);
}

int ctl_dmetrics_document(const struct vm_config *cfg, const struct dmetrics_src *src, char **out,
			  size_t *len)
{
	char host[256] = "", *p;
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	gethostname(host, sizeof(host) - 1);
	for (p = host; *p; p++) /* nothing that could end the CDATA */
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
			*p = '_';
	fputs("<metrics>\n", f);
	dm_metric(f, "string", "host", NULL, "HostName", host);
	dm_metric(f, "string", "host", NULL, "HostSystemInfo", "linux");
	dm_metric(f, "string", "host", NULL, "VirtualizationVendor", "kubevirt.io");
	dm_metric(f, "string", "host", NULL, "VirtProductInfo", "vmlet");
	dm_real(f, "vm", "TotalCPUTime", dm_vm_cpu(src));
	dm_u64(f, "vm", NULL, "ResourceProcessorLimit", vm_config_vcpus(cfg));
	dm_u64(f, "vm", "KiB", "PhysicalMemoryAllocatedToVirtualSystem", cfg->memory_bytes >> 10);
	dm_u64(f, "vm", "KiB", "ResourceMemoryLimit", cfg->memory_bytes >> 10);
	dm_host(f, src);
	fputs("</metrics>\n\n", f);
	if (fclose(f)) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}
