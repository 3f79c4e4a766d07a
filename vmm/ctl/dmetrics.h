/* SPDX-License-Identifier: MIT */
/*
 * dmetrics.h - devices.downwardMetrics: the host side of the vhostmd
 * virtio-serial port org.github.vhostmd.1, as KubeVirt serves it
 * (pkg/downwardmetrics/virtio-serial/server.go).
 *
 * `vmlet run` forks a small process (vmlet-dmetrics) beside the guest that
 * connects to the port's host socket (PREFIX + org.github.vhostmd.1, see
 * docs/devices.md) and answers the guest: a request is an HTTP-like line
 * "GET /metrics/XML" followed by an empty line (what vhostmd's
 * vm-dump-metrics sends); the answer is the metrics document, then "\n\n"
 * (vm-dump-metrics' end mark); anything else gets "INVALID REQUEST\n\n".
 * One request is served per second at most (KubeVirt's rate limit); a
 * request line longer than CTL_DMETRICS_MAX_LINE is invalid and dropped.
 * The figures are taken at each request, so they are never older than the
 * request (KubeVirt refreshes its copy every 5 s).
 *
 * The document is KubeVirt's (vhostmd's XML: <metrics>, one <metric
 * type="..." context="host|vm" [unit="..."]> with <name> and a CDATA
 * <value> each), with KubeVirt's metrics in KubeVirt's order: host
 * HostName, HostSystemInfo ("linux"), VirtualizationVendor
 * ("kubevirt.io"), VirtProductInfo ("vmlet"); vm TotalCPUTime (s, the
 * vCPU threads' CPU time), ResourceProcessorLimit (vCPUs),
 * PhysicalMemoryAllocatedToVirtualSystem and ResourceMemoryLimit (KiB,
 * the guest memory); host NumberOfPhysicalCPUs, TotalCPUTime (s: user,
 * nice and system of /proc/stat), FreePhysicalMemory, FreeVirtualMemory,
 * MemoryAllocatedToVirtualServers, UsedVirtualMemory (KiB, from
 * /proc/meminfo as KubeVirt computes them), PagedInMemory, PagedOutMemory
 * (KiB, /proc/vmstat pswpin/pswpout), Time (s since the epoch).
 */
#ifndef VMLET_CTL_DMETRICS_H
#define VMLET_CTL_DMETRICS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CTL_DMETRICS_MAX_LINE 4096
#define CTL_DMETRICS_INVALID  "INVALID REQUEST\n\n"

struct vm_config;

/* What the guest's figures come from: the VMM's process (its vCPU threads'
 * CPU time), and the files of the host (a root, "" for /; for tests). */
struct dmetrics_src {
	pid_t vmm; /* 0: not known (TotalCPUTime 0) */
	const char *root;
};

/*
 * One request from buf (len bytes; the guest's, untrusted): 1 a valid
 * request, -1 an invalid one (answer CTL_DMETRICS_INVALID), 0 not
 * complete yet; *used the bytes it took (0 when not complete, unless the
 * line is over CTL_DMETRICS_MAX_LINE: then all of them, invalid).
 */
int ctl_dmetrics_request(const char *buf, size_t len, size_t *used);

/* The document with the "\n\n" end mark, malloc'ed in *out. 0 or -ENOMEM. */
int ctl_dmetrics_document(const struct vm_config *cfg, const struct dmetrics_src *src, char **out,
			  size_t *len);

/* Fork vmlet-dmetrics serving the port's socket at channel; 0 and *pid or
 * -errno. It dies with its parent; stop it with ctl_creds_stop(). */
int ctl_dmetrics_start(const struct vm_config *cfg, const char *channel, pid_t *pid);

#endif /* VMLET_CTL_DMETRICS_H */
