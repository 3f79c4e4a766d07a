/* SPDX-License-Identifier: MIT */
/*
 * admit_compute.c - KubeVirt's memory, CPU, firmware and run-strategy rules
 * (spec/admit.h): the validate* functions of ValidateVirtualMachineInstanceSpec
 * in vmi-create-admitter.go that are not about disks, volumes or networks,
 * validateRunStrategy of vms-admitter.go, and vmlet's own bounds on values
 * no one can mean (resolution.md §19.3).
 */
#include <stdint.h>
#include <string.h>

#include "spec/admit.h"

#define MIN_MEMORY 1000000LL   /* KubeVirt's "1M" for requests.memory */
#define MAX_MEMORY (1LL << 46) /* vmlet: 64Ti of guest memory */
#define MAX_VCPUS  1024LL      /* vmlet: the firmware ABI's vCPU limit */

/* A quantity field: set, its value and its canonical text ("0" unset). */
struct qf {
	const struct node *n;
	const char *path;
	struct quantity q;
	bool set;
	char text[64];
};

static void qf_get(const struct admit *a, struct qf *f, const char *suffix)
{
	memset(f, 0, sizeof(*f));
	f->path = admit_path(a, "domain.%s", suffix);
	f->n = node_path(a->dom, suffix);
	f->set = resolve_qty(f->n, &f->q);
	if (!f->set)
		f->q = qty_from_int(0, QTY_DECIMAL_SI);
	qty_format(&f->q, f->text, sizeof(f->text));
}

/* Quantity.Value() and MilliValue(): rounded up */
static long long qval(const struct qf *f)
{
	return f->set ? qty_value(&f->q) : 0;
}

static __int128 qmilli(const struct qf *f)
{
	__int128 m = f->q.nanos / 1000000, r = f->q.nanos % 1000000;

	return m + (r > 0);
}

static void check_memory(const struct admit *a)
{
	struct qf req, lim;

	qf_get(a, &req, "resources.requests.memory");
	qf_get(a, &lim, "resources.limits.memory");
	if (qval(&req) < 0)
		admit_err(a, req.n, req.path, "%s '%s': must be greater than or equal to 0.",
			  req.path, req.text);
	else if (qval(&req) > 0 && qval(&req) < MIN_MEMORY)
		admit_err(a, req.n, req.path, "%s '%s': must be greater than or equal to 1M.",
			  req.path, req.text);
	if (qval(&lim) < 0)
		admit_err(a, lim.n, lim.path, "%s '%s': must be greater than or equal to 0.",
			  lim.path, lim.text);
	if (qval(&lim) > 0 && qval(&req) > qval(&lim))
		admit_err(a, req.n, req.path, "%s '%s' is greater than %s '%s'", req.path, req.text,
			  lim.path, lim.text);
}

static void check_hugepages(const struct admit *a)
{
	const struct node *ps = node_path(a->dom, "memory.hugepages.pageSize");
	const char *pp = admit_path(a, "domain.memory.hugepages.pageSize");
	struct qf req, lim, guest;
	struct quantity page;
	long long vm, pv;

	if (node_is_null(node_path(a->dom, "memory.hugepages")))
		return;
	if (qty_parse(resolve_str(ps), &page)) {
		admit_err(a, ps, pp,
			  "%s '%s': quantities must match the regular expression "
			  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
			  pp, resolve_str(ps));
		return;
	}
	qf_get(a, &req, "resources.requests.memory");
	qf_get(a, &lim, "resources.limits.memory");
	qf_get(a, &guest, "memory.guest");
	/* KubeVirt's defaults set memory.guest (from requests, limits or the
	 * page size) before the webhook reads requests, then guest, then limits */
	vm = qval(&req) ? qval(&req) : guest.set ? qval(&guest) : qval(&lim) ? qval(&lim) : 0;
	if (!vm && !guest.set && !qval(&lim))
		vm = qty_value(&page);
	pv = qty_value(&page);
	if (pv <= 0) /* KubeVirt divides by it (a panic): vmlet refuses */
		admit_err(a, ps, pp, "%s '%s': must be greater than 0", pp, resolve_str(ps));
	else if (vm != 0 && vm < pv)
		admit_err(a, req.n ? req.n : ps, req.path,
			  "%s '%s' must be equal to or larger than page size %s '%s'", req.path,
			  req.text, pp, resolve_str(ps));
	else if (vm % pv != 0)
		admit_err(a, req.n ? req.n : ps, req.path,
			  "%s '%s' is not a multiple of the page size %s '%s'", req.path, req.text,
			  pp, resolve_str(ps));
}

static void check_cpu_resources(const struct admit *a)
{
	struct qf req, lim;

	qf_get(a, &req, "resources.requests.cpu");
	qf_get(a, &lim, "resources.limits.cpu");
	if (qmilli(&req) < 0)
		admit_err(a, req.n, req.path, "%s '%s': must be greater than or equal to 0.",
			  req.path, req.text);
	if (qmilli(&lim) < 0)
		admit_err(a, lim.n, lim.path, "%s '%s': must be greater than or equal to 0.",
			  lim.path, lim.text);
	if (qmilli(&lim) > 0 && qmilli(&req) > qmilli(&lim))
		admit_err(a, req.n, req.path, "%s '%s' is greater than %s '%s'", req.path, req.text,
			  lim.path, lim.text);
}

static long long cpu_u32(const struct admit *a, const char *f)
{
	long long v = 0;

	node_ival(node_path(a->dom, f), 0, 4294967295LL, &v);
	return v;
}

/* hwutil.GetNumberOfVCPUs: the product of the non-zero counts */
static long long vcpus(const struct admit *a)
{
	static const char *const f[] = {"cpu.cores", "cpu.sockets", "cpu.threads"};
	long long n = 0, v;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		v = cpu_u32(a, f[i]);
		if (v) /* each factor < 2^32: saturate rather than overflow */
			n = !n ? v : n > INT64_MAX / v ? INT64_MAX : n * v;
	}
	return n;
}

/* validateCpuPinning: dedicatedCpuPlacement's requirements */
static void check_pinning(const struct admit *a)
{
	const char *dp = admit_path(a, "domain.cpu.dedicatedCpuPlacement");
	const struct node *at = node_path(a->dom, "cpu.dedicatedCpuPlacement");
	struct qf rc, lc, rm, lm, g;
	long long n = vcpus(a);

	qf_get(a, &rc, "resources.requests.cpu");
	qf_get(a, &lc, "resources.limits.cpu");
	qf_get(a, &rm, "resources.requests.memory");
	qf_get(a, &lm, "resources.limits.memory");
	qf_get(a, &g, "memory.guest");
	if (!lm.q.nanos && !rm.q.nanos && node_is_null(node_path(a->dom, "memory.hugepages")) &&
	    !g.q.nanos)
		admit_err(a, at, lm.path, "%s, %s, %s or %s should be provided", rm.path, lm.path,
			  admit_path(a, "domain.memory.hugepages"), g.path);
	if (qval(&rc) > 0 && (__int128)qval(&rc) * 1000 != qmilli(&rc))
		admit_err(a, rc.n, rc.path, "provided resources CPU requests must be an interger");
	if (qval(&lc) > 0 && (__int128)qval(&lc) * 1000 != qmilli(&lc))
		admit_err(a, lc.n, lc.path, "provided resources CPU limits must be an interger");
	if (qval(&rm) > 0 && qval(&lm) > 0 && qval(&rm) != qval(&lm))
		admit_err(a, rm.n, rm.path, "%s must be equal to %s", rm.path, lm.path);
	if (qval(&rc) == 0 && qval(&lc) == 0 && n == 0)
		admit_err(a, at, dp,
			  "either %s or %s or %s must be provided when DedicatedCPUPlacement is "
			  "true ",
			  rc.path, lc.path, admit_path(a, "domain.cpu.cores"));
	if (qval(&rc) > 0 && qval(&lc) > 0 && qval(&rc) != qval(&lc))
		admit_err(a, at, dp, "%s or %s must be equal when DedicatedCPUPlacement is true ",
			  rc.path, lc.path);
	if ((qval(&rc) > 0 || qval(&lc) > 0) && n > 0 && qval(&rc) != n && qval(&lc) != n)
		admit_err(a, at, dp,
			  "%s or %s must not be provided at the same time with %s when "
			  "DedicatedCPUPlacement is true ",
			  rc.path, lc.path, admit_path(a, "domain.cpu.cores"));
	if (cpu_u32(a, "cpu.threads") > 1 &&
	    strcmp(resolve_str(node_get(a->spec, "architecture")), "arm64") == 0)
		admit_err(a, node_get(a->spec, "architecture"), admit_path(a, "architecture"),
			  "threads must not be greater than 1 at %s (got %lld) when %s is arm64",
			  admit_path(a, "domain.cpu.threads"), cpu_u32(a, "cpu.threads"),
			  admit_path(a, "architecture"));
	if (cpu_u32(a, "cpu.threads") > 2)
		admit_err(a, at, dp,
			  "Not more than two threads must be provided at %s (got %lld) when "
			  "DedicatedCPUPlacement is true",
			  admit_path(a, "domain.cpu.threads"), cpu_u32(a, "cpu.threads"));
}

static void check_cpu(const struct admit *a)
{
	const struct node *cpu = node_get(a->dom, "cpu");
	bool ded = node_bval(node_get(cpu, "dedicatedCpuPlacement"), false);
	const char *gm = admit_path(a, "domain.cpu.numa.guestMappingPassthrough");
	const char *rt = admit_path(a, "domain.cpu.realtime");
	const char *dp = admit_path(a, "domain.cpu.dedicatedCpuPlacement");

	if (ded)
		check_pinning(a);
	if (!node_is_null(node_path(cpu, "numa.guestMappingPassthrough"))) {
		if (!ded)
			admit_err(a, node_path(cpu, "numa.guestMappingPassthrough"), gm,
				  "%s must be set to true when NUMA topology strategy is set in %s",
				  dp, gm);
		if (node_is_null(node_path(a->dom, "memory.hugepages")))
			admit_err(a, node_path(cpu, "numa.guestMappingPassthrough"), gm,
				  "%s must be requested when NUMA topology strategy is set in %s",
				  admit_path(a, "domain.memory.hugepages"), gm);
	}
	if (node_bval(node_get(cpu, "isolateEmulatorThread"), false) && !ded)
		admit_err(a, node_get(cpu, "isolateEmulatorThread"),
			  admit_path(a, "domain.cpu.isolateEmulatorThread"),
			  "IsolateEmulatorThread should be only set in combination with "
			  "DedicatedCPUPlacement");
	if (node_is_null(node_get(cpu, "realtime")))
		return;
	if (!ded)
		admit_err(a, node_get(cpu, "realtime"), dp,
			  "%s must be set to true when %s is used", dp, rt);
	if (node_is_null(node_path(cpu, "numa.guestMappingPassthrough")))
		admit_err(a, node_get(cpu, "realtime"), gm, "%s must be defined when %s is used",
			  gm, rt);
}

static void check_firmware(const struct admit *a)
{
	const struct node *bl = node_path(a->dom, "firmware.bootloader");

	if (!node_is_null(node_get(bl, "efi")) && !node_is_null(node_get(bl, "bios")))
		admit_err(a, bl, admit_path(a, "domain.firmware.bootloader"),
			  "%s has both EFI and BIOS configured, but they are mutually exclusive.",
			  admit_path(a, "domain.firmware.bootloader"));
}

/* vms-admitter.go validateRunStrategy (WaitAsReceiver depends on a feature
 * gate: not checked) */
static void check_run_strategy(const struct admit *a)
{
	static const char *const ok[] = {"Halted",	   "Manual", "Always",
					 "RerunOnFailure", "Once",   "WaitAsReceiver"};
	const struct node *spec = node_get(a->vm, "spec"), *rs = node_get(spec, "runStrategy");
	unsigned int i;
	bool found = false;

	if (!a->vm)
		return;
	if (node_is_null(node_get(spec, "running")) && node_is_null(rs)) {
		admit_err(a, spec, "spec.running", "RunStrategy must be specified");
		return;
	}
	if (node_is_null(rs))
		return;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		found |= strcmp(ok[i], resolve_str(rs)) == 0;
	if (!found)
		admit_err(a, rs, "spec.runStrategy", "Invalid RunStrategy (%s)", resolve_str(rs));
}

/* vmlet's bounds where KubeVirt has none (resolution.md §19.3) */
static void check_bounds(const struct admit *a)
{
	const struct node *g = node_path(a->spec, "terminationGracePeriodSeconds");
	long long v = 0, ms = cpu_u32(a, "cpu.maxSockets");
	unsigned __int128 n;
	uint32_t t[3];
	struct qf guest, cpu;
	unsigned int i;

	qf_get(a, &guest, "memory.guest");
	if (guest.set && qval(&guest) < MIN_MEMORY)
		admit_err(a, guest.n, guest.path, "%s '%s': must be greater than or equal to 1M.",
			  guest.path, guest.text);
	if (guest.set && qval(&guest) > MAX_MEMORY)
		admit_err(a, guest.n, guest.path,
			  "%s '%s': must be less than or equal to 64Ti (vmlet's limit)", guest.path,
			  guest.text);
	resolve_effective_topology(a->spec, t);
	n = (unsigned __int128)(ms > t[0] ? (uint64_t)ms : t[0]) * t[1] * t[2];
	if (n > MAX_VCPUS)
		admit_err(a, node_get(a->dom, "cpu"), admit_path(a, "domain.cpu"),
			  "%s: more vCPUs (sockets, or maxSockets, x cores x threads) than vmlet's "
			  "limit of %lld",
			  admit_path(a, "domain.cpu"), MAX_VCPUS);
	for (i = 0; i < 2; i++) {
		qf_get(a, &cpu, i ? "resources.limits.cpu" : "resources.requests.cpu");
		if (qval(&cpu) > MAX_VCPUS)
			admit_err(a, cpu.n, cpu.path,
				  "%s '%s': more CPUs than vmlet's limit of %lld vCPUs", cpu.path,
				  cpu.text, MAX_VCPUS);
	}
	if (g && node_ival(g, -9223372036854775807LL - 1, 9223372036854775807LL, &v) == 0 && v < 0)
		admit_err(a, g, admit_path(a, "terminationGracePeriodSeconds"),
			  "%s '%lld': must be greater than or equal to 0.",
			  admit_path(a, "terminationGracePeriodSeconds"), v);
}

void admit_compute(const struct admit *a)
{
	check_memory(a);
	check_hugepages(a);
	check_cpu_resources(a);
	check_cpu(a);
	check_firmware(a);
	check_run_strategy(a);
	check_bounds(a);
}
