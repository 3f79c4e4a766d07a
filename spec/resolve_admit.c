/* SPDX-License-Identifier: MIT */
/*
 * resolve_admit.c - the admission rules of instancetype and preference
 * objects (docs/resolution.md §1, §12, §7.4), checked on the object resolution
 * uses. Field names, types, enums and required fields were checked when
 * the object was loaded (spec/schema_decode.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "spec/resolve.h"

static const char *describe(struct resolver *r, const struct node *obj)
{
	return arena_printf(r->a, "%s \"%s\"", resolve_str(node_get(obj, "kind")),
			    resolve_str(node_path(obj, "metadata.name")));
}

int admit_instancetype(struct resolver *r, const struct node *obj)
{
	const char *what = describe(r, obj);
	const struct node *mem = node_path(obj, "spec.memory"), *oc;
	long long pct = 0;

	oc = node_get(mem, "overcommitPercent");
	if (oc && node_ival(oc, -2147483648LL, 2147483647LL, &pct) == 0) {
		if (pct < 0 || pct > 100) {
			diag_err(
			    r->d, oc, "spec.memory.overcommitPercent",
			    "%s: spec.memory.overcommitPercent must be in range between 0 and 100.",
			    what);
			return -EINVAL;
		}
		if (pct != 0 && !node_is_null(node_get(mem, "hugepages"))) {
			diag_err(
			    r->d, oc, "spec.memory.overcommitPercent",
			    "%s: spec.memory.overcommitPercent and spec.memory.hugepages should "
			    "not be requested together.",
			    what);
			return -EINVAL;
		}
	}
	if (!node_is_null(node_path(obj, "spec.launchSecurity")))
		diag_warn(r->d, node_path(obj, "spec.launchSecurity"), "spec.launchSecurity",
			  "%s: launchSecurity in an instancetype is deprecated", what);
	return 0;
}

int admit_preference(struct resolver *r, const struct node *obj)
{
	const char *what = describe(r, obj);
	const struct node *spec = node_get(obj, "spec");
	const struct node *topo = node_path(spec, "cpu.preferredCPUTopology");
	const struct node *across_n = node_path(spec, "cpu.spreadOptions.across");
	static const char *const known[] = {
	    "sockets",	   "cores",	    "threads",	    "spread",	 "any", "preferSockets",
	    "preferCores", "preferThreads", "preferSpread", "preferAny", NULL};
	const char *t = node_sval(topo), *across;
	unsigned int i;
	bool ok = false;

	if (t && *t) {
		for (i = 0; known[i]; i++)
			ok |= strcmp(known[i], t) == 0;
		if (!ok) {
			diag_err(r->d, topo, "spec.cpu.preferredCPUTopology",
				 "%s: unknown preferredCPUTopology %s", what, t);
			return -EINVAL;
		}
		if (strncmp(t, "prefer", 6) == 0)
			diag_warn(r->d, topo, "spec.cpu.preferredCPUTopology",
				  "PreferredCPUTopology %s is deprecated for removal in a future "
				  "release, please use %s instead",
				  t, preference_cpu_topology(spec));
	}
	if (strcmp(preference_cpu_topology(spec), "spread") != 0)
		return 0;
	across = preference_spread_across(spec);
	if (strcmp(across, "SocketsCores") && strcmp(across, "CoresThreads") &&
	    strcmp(across, "SocketsCoresThreads")) {
		diag_err(r->d, across_n, "spec.cpu.spreadOptions.across",
			 "%s: across %s is not supported", what, across);
		return -EINVAL;
	}
	if (preference_spread_ratio(spec) == 0) {
		diag_err(r->d, node_path(spec, "cpu.spreadOptions.ratio"),
			 "spec.cpu.spreadOptions.ratio", "%s: a spread ratio of 0 is not supported",
			 what);
		return -EINVAL;
	}
	if (strcmp(across, "CoresThreads") == 0 && preference_spread_ratio(spec) != 2) {
		const struct node *rn = node_path(spec, "cpu.spreadOptions.ratio");

		diag_err(r->d, rn ? rn : node_get(spec, "preferSpreadSocketToCoreRatio"),
			 "spec.cpu.spreadOptions.ratio",
			 "%s: only a ratio of 2 (1 core 2 threads) is allowed when spreading vCPUs "
			 "over cores and threads",
			 what);
		return -EINVAL;
	}
	return 0;
}
