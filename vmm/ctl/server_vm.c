/* SPDX-License-Identifier: MIT */
/*
 * server_vm.c - the server's view of a struct vm: the ctl_vm_ops
 * (vmm/ctl/ctl.h) implemented with vm.h's public functions only.
 *
 * stop raises SIGTERM on the main thread: the VM's signalfd then runs the
 * same power-button-and-grace-period sequence as a SIGTERM from outside,
 * and tells the lifecycle loop not to restart the guest afterwards.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm/ctl/agent.h"
#include "vmm/ctl/ctl.h"
#include "vmm/vm/lifecycle.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"
#include "vmm/snapshot/migrate.h"
#include "vmm/snapshot/snapshot.h"
#include "vmm/vm_config.h"

struct ctl_vm {
	struct vm *vm;
	struct timespec started;
	char reason[32], message[256]; /* status's, while paused */
};

static struct ctl_vm the_vm; /* one VM per process */
static unsigned int ctl_vm_restarts;

void ctl_vm_set_restarts(unsigned int restarts)
{
	ctl_vm_restarts = restarts;
}

static void migrate_status(struct ctl_migration *out)
{
	struct migrate_stats m;

	migrate_get_stats(&m);
	*out = (struct ctl_migration){.state = m.state,
				      .dirty_log = m.dirty_log,
				      .bytes = m.bytes,
				      .pages = m.pages,
				      .iterations = m.iterations,
				      .dirty_pages_rate = m.dirty_pages_rate,
				      .downtime_ms = m.downtime_ms,
				      .total_ms = m.total_ms};
}

static int vm_status(void *p, struct ctl_status *st)
{
	struct ctl_vm *c = p;
	const struct vm_config *cfg = c->vm->cfg;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	st->state = vm_exit_reason(c->vm) != VM_EXIT_NONE ? "Stopping"
		    : vm_is_paused(c->vm)		  ? "Paused"
							  : "Running";
	st->name = cfg->name;
	st->namespace = cfg->namespace;
	st->run_strategy = cfg->run_strategy;
	st->vcpus = c->vm->n_vcpus;
	st->memory_bytes = cfg->memory_bytes;
	st->uptime_seconds = (double)(now.tv_sec - c->started.tv_sec) +
			     (double)(now.tv_nsec - c->started.tv_nsec) / 1e9;
	st->restarts = ctl_vm_restarts;
	for (unsigned int i = 0; i < c->vm->n_counters; i++) {
		struct device_counters dc = {0};

		if (!strcmp(c->vm->counters[i].kind, "channel") &&
		    !strcmp(c->vm->counters[i].name, CTL_AGENT_CHANNEL)) {
			c->vm->counters[i].read(c->vm->counters[i].opaque, &dc);
			st->agent_connected = dc.channel_guest_open;
			continue;
		}
		if (!strcmp(c->vm->counters[i].kind, "vsock")) {
			st->vsock_cid = cfg->vsock_cid;
			if (strcmp(c->vm->counters[i].name, "-"))
				st->vsock_socket = c->vm->counters[i].name;
			continue;
		}
		if (strcmp(c->vm->counters[i].kind, "console"))
			continue;
		c->vm->counters[i].read(c->vm->counters[i].opaque, &dc);
		st->console_dropped_bytes += dc.tx_dropped;
	}
	migrate_status(&st->migration);
	if (vm_paused_because(c->vm, c->reason, sizeof(c->reason), c->message,
			      sizeof(c->message))) {
		st->reason = c->reason;
		st->message = c->message;
	}
	return 0;
}

static int vm_op_pause(void *p)
{
	return vm_pause(((struct ctl_vm *)p)->vm);
}

static int vm_op_snapshot(void *p, int state_fd, int mem_fd, bool resume)
{
	return snapshot_save(((struct ctl_vm *)p)->vm, state_fd, mem_fd, resume);
}

static int vm_op_migrate(void *p, int fd, uint32_t max_downtime_ms, void (*tick)(void *),
			 void *tick_ctx, char *msg, size_t mlen)
{
	const struct migrate_tick t = {tick, tick_ctx};

	return migrate_send(((struct ctl_vm *)p)->vm, fd, max_downtime_ms, &t, msg, mlen);
}

static int vm_op_resume(void *p)
{
	return vm_resume(((struct ctl_vm *)p)->vm);
}

static int vm_op_console_attach(void *p, int fd)
{
	return vm_console_attach(((struct ctl_vm *)p)->vm, fd);
}

static void vm_op_console_detach(void *p, int fd)
{
	vm_console_detach(((struct ctl_vm *)p)->vm, fd);
}

static int vm_op_console_input(void *p, const void *buf, size_t len)
{
	vm_console_input(((struct ctl_vm *)p)->vm, buf, len);
	return 0;
}

static int vm_button(void *p)
{
	vm_power_button(((struct ctl_vm *)p)->vm);
	return 0;
}

static int vm_stop(void *p)
{
	(void)p;
	/* under runStrategy Always/RerunOnFailure: do not restart after this */
	lifecycle_request_stop();
	/* SIGTERM is blocked on every thread and read by the main thread's
	 * signalfd: this is a SIGTERM from outside. */
	return raise(SIGTERM) ? -errno : 0;
}

static const struct {
	unsigned int reason;
	const char *name;
} exit_names[] = {
    {KVM_EXIT_IO, "io"},
    {KVM_EXIT_MMIO, "mmio"},
    {KVM_EXIT_HLT, "hlt"},
    {KVM_EXIT_INTR, "intr"},
    {KVM_EXIT_IRQ_WINDOW_OPEN, "irq_window_open"},
    {KVM_EXIT_SHUTDOWN, "shutdown"},
    {KVM_EXIT_SYSTEM_EVENT, "system_event"},
    {KVM_EXIT_INTERNAL_ERROR, "internal_error"},
    {KVM_EXIT_FAIL_ENTRY, "fail_entry"},
};

/* One metric family per counter, one sample per device of the kind. */
static const struct {
	const char *kind, *name, *help;
	size_t off;
} counter_names[] = {
    {"blk", "vmlet_blk_requests_total", "Block requests completed, by disk.",
     offsetof(struct device_counters, requests)},
    {"blk", "vmlet_blk_errors_total", "Block requests that failed, by disk.",
     offsetof(struct device_counters, errors)},
    {"blk", "vmlet_blk_read_bytes_total", "Bytes read by the guest, by disk.",
     offsetof(struct device_counters, read_bytes)},
    {"blk", "vmlet_blk_written_bytes_total", "Bytes written by the guest, by disk.",
     offsetof(struct device_counters, write_bytes)},
    {"blk", "vmlet_blk_io_error_pauses_total",
     "Pauses of the VM by a host I/O error on the disk (errorPolicy stop/enospace).",
     offsetof(struct device_counters, io_pauses)},
    {"net", "vmlet_net_rx_packets_total", "Frames delivered to the guest, by interface.",
     offsetof(struct device_counters, rx_packets)},
    {"net", "vmlet_net_rx_bytes_total", "Bytes delivered to the guest, by interface.",
     offsetof(struct device_counters, rx_bytes)},
    {"net", "vmlet_net_tx_packets_total", "Frames sent by the guest, by interface.",
     offsetof(struct device_counters, tx_packets)},
    {"net", "vmlet_net_tx_bytes_total", "Bytes sent by the guest, by interface.",
     offsetof(struct device_counters, tx_bytes)},
    {"net", "vmlet_net_rx_dropped_total", "Frames for the guest dropped, by interface.",
     offsetof(struct device_counters, rx_dropped)},
    {"net", "vmlet_net_tx_dropped_total", "Frames from the guest dropped, by interface.",
     offsetof(struct device_counters, tx_dropped)},
    {"console", "vmlet_console_written_bytes_total",
     "Guest console output written to the console, by console.",
     offsetof(struct device_counters, tx_bytes)},
    {"console", "vmlet_console_dropped_bytes_total",
     "Guest console output dropped because the console's reader did not keep up.",
     offsetof(struct device_counters, tx_dropped)},
    {"channel", "vmlet_channel_rx_bytes_total",
     "Bytes from the host client to the guest, by virtio-serial channel.",
     offsetof(struct device_counters, rx_bytes)},
    {"channel", "vmlet_channel_tx_bytes_total",
     "Bytes from the guest to the host client, by virtio-serial channel.",
     offsetof(struct device_counters, tx_bytes)},
    {"vsock", "vmlet_vsock_rx_bytes_total",
     "Bytes from host sockets to the guest over virtio-vsock, by host socket.",
     offsetof(struct device_counters, rx_bytes)},
    {"vsock", "vmlet_vsock_tx_bytes_total",
     "Bytes from the guest to host sockets over virtio-vsock, by host socket.",
     offsetof(struct device_counters, tx_bytes)},
    {"vsock", "vmlet_vsock_resets_total",
     "virtio-vsock connections reset or refused by the host side, by host socket.",
     offsetof(struct device_counters, rx_dropped)},
};

/* The label a device kind's samples carry. */
static const char *counter_label(const char *kind)
{
	return !strcmp(kind, "blk")	  ? "disk"
	       : !strcmp(kind, "console") ? "console"
	       : !strcmp(kind, "channel") ? "channel"
	       : !strcmp(kind, "vsock")	  ? "socket"
					  : "interface";
}

static void vm_device_metrics(struct vm *vm, struct ctl_metrics *m)
{
	struct device_counters c[VM_MAX_COUNTERS];
	char labels[512];
	size_t k;
	unsigned int i;

	for (i = 0; i < vm->n_counters; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		vm->counters[i].read(vm->counters[i].opaque, &c[i]);
	}
	for (k = 0; k < sizeof(counter_names) / sizeof(counter_names[0]); k++)
		for (i = 0; i < vm->n_counters; i++) {
			uint64_t v;

			if (strcmp(vm->counters[i].kind, counter_names[k].kind))
				continue;
			memcpy(&v, (const char *)&c[i] + counter_names[k].off, sizeof(v));
			ctl_metrics_label(labels, sizeof(labels),
					  counter_label(counter_names[k].kind),
					  vm->counters[i].name);
			ctl_metrics_add(m, counter_names[k].name, "counter", counter_names[k].help,
					labels, (double)v);
		}
}

/* The guest's memory statistics from the balloon (virtio 1.2 §5.5.6.3
 * tags), as KubeVirt's kubevirt_vmi_memory_* metrics take them. */
static const struct {
	unsigned int tag;
	const char *name, *type, *help;
} balloon_stats[] = {
    {0, "vmlet_guest_swap_in_bytes_total", "counter", "Bytes the guest swapped in."},
    {1, "vmlet_guest_swap_out_bytes_total", "counter", "Bytes the guest swapped out."},
    {2, "vmlet_guest_major_page_faults_total", "counter", "The guest's major page faults."},
    {3, "vmlet_guest_minor_page_faults_total", "counter", "The guest's minor page faults."},
    {4, "vmlet_guest_memory_free_bytes", "gauge", "Memory the guest leaves unused."},
    {5, "vmlet_guest_memory_total_bytes", "gauge", "Memory the guest's kernel manages."},
    {6, "vmlet_guest_memory_available_bytes", "gauge",
     "Memory the guest could use without swapping (its MemAvailable)."},
    {7, "vmlet_guest_memory_cached_bytes", "gauge", "The guest's file cache."},
};

static void vm_balloon_metrics(struct vm *vm, struct ctl_metrics *m)
{
	struct device_counters c;
	size_t k;

	for (unsigned int i = 0; i < vm->n_counters; i++) {
		if (strcmp(vm->counters[i].kind, "balloon"))
			continue;
		memset(&c, 0, sizeof(c));
		vm->counters[i].read(vm->counters[i].opaque, &c);
		ctl_metrics_add(m, "vmlet_balloon_free_page_reports_total", "counter",
				"Free page reports from the guest (virtio-balloon).", NULL,
				(double)c.requests);
		ctl_metrics_add(m, "vmlet_balloon_released_bytes_total", "counter",
				"Guest memory released to the host by free page reporting.", NULL,
				(double)c.write_bytes);
		ctl_metrics_add(m, "vmlet_balloon_stats_updates_total", "counter",
				"Memory statistics the guest sent through the balloon.", NULL,
				(double)c.balloon_stats_updates);
		for (k = 0; k < sizeof(balloon_stats) / sizeof(balloon_stats[0]); k++)
			if (c.balloon_stats_valid & 1ull << balloon_stats[k].tag)
				ctl_metrics_add(m, balloon_stats[k].name, balloon_stats[k].type,
						balloon_stats[k].help, NULL,
						(double)c.balloon_stat[balloon_stats[k].tag]);
	}
}

/* Each virtio-serial channel's state: the guest-agent channel's
 * guest_open is "the agent is connected". */
static void vm_channel_metrics(struct vm *vm, struct ctl_metrics *m)
{
	struct device_counters c;
	char labels[512];

	for (unsigned int i = 0; i < vm->n_counters; i++) {
		if (strcmp(vm->counters[i].kind, "channel"))
			continue;
		memset(&c, 0, sizeof(c));
		vm->counters[i].read(vm->counters[i].opaque, &c);
		ctl_metrics_label(labels, sizeof(labels), "channel", vm->counters[i].name);
		ctl_metrics_add(m, "vmlet_channel_guest_open", "gauge",
				"1 while the guest has the channel's port open (its agent runs).",
				labels, (double)c.channel_guest_open);
		ctl_metrics_add(m, "vmlet_channel_host_connected", "gauge",
				"1 while a host client is connected to the channel's socket.",
				labels, (double)c.channel_host_connected);
	}
}

/* The last live migration's figures, when there was one. */
static void migrate_metrics(struct ctl_metrics *m)
{
	struct ctl_migration g;

	migrate_status(&g);
	if (!g.state)
		return;
	ctl_metrics_add(m, "vmlet_migration_bytes", "gauge",
			"Bytes of the last live migration (sent or received).", NULL,
			(double)g.bytes);
	ctl_metrics_add(m, "vmlet_migration_iterations", "gauge",
			"Pre-copy passes of the last live migration.", NULL, (double)g.iterations);
	ctl_metrics_add(m, "vmlet_migration_dirty_pages_rate", "gauge",
			"Pages dirtied per second in the last pre-copy pass.", NULL,
			(double)g.dirty_pages_rate);
	ctl_metrics_add(m, "vmlet_migration_downtime_seconds", "gauge",
			"Time the guest was paused by the last live migration.", NULL,
			(double)g.downtime_ms / 1000.0);
	ctl_metrics_add(m, "vmlet_migration_completed", "gauge",
			"1 when the last live migration completed, 0 when it failed or runs.", NULL,
			!strcmp(g.state, "completed"));
}

static int vm_metrics(void *p, struct ctl_metrics *m)
{
	struct ctl_vm *c = p;
	char labels[64];
	uint32_t i;
	size_t k;

	migrate_metrics(m);

	for (i = 0; i < c->vm->n_vcpus; i++) {
		const struct vcpu *v = &c->vm->vcpus[i];
		uint64_t other = 0;
		unsigned int r;

		for (r = 0; r < VCPU_EXIT_STATS; r++) {
			uint64_t n = __atomic_load_n(&v->exits[r], __ATOMIC_RELAXED);
			const char *name = NULL;

			for (k = 0; k < sizeof(exit_names) / sizeof(exit_names[0]); k++)
				if (exit_names[k].reason == r)
					name = exit_names[k].name;
			if (!name) {
				other += n;
				continue;
			}
			snprintf(labels, sizeof(labels), "vcpu=\"%u\",reason=\"%s\"", i, name);
			ctl_metrics_add(m, "vmlet_vcpu_exits_total", "counter",
					"KVM exits of a vCPU by exit reason.", labels, (double)n);
		}
		snprintf(labels, sizeof(labels), "vcpu=\"%u\",reason=\"other\"", i);
		ctl_metrics_add(m, "vmlet_vcpu_exits_total", "counter",
				"KVM exits of a vCPU by exit reason.", labels, (double)other);
	}
	vm_device_metrics(c->vm, m);
	vm_balloon_metrics(c->vm, m);
	vm_channel_metrics(c->vm, m);
	ctl_metrics_add(m, "vmlet_paused", "gauge", "1 while the guest is paused.", NULL,
			vm_is_paused(c->vm));
	ctl_metrics_add(m, "vmlet_paused_io_error", "gauge",
			"1 while the guest is paused by a disk error (errorPolicy stop).", NULL,
			vm_paused_because(c->vm, c->reason, sizeof(c->reason), c->message,
					  sizeof(c->message)) &&
			    !strcmp(c->reason, "PausedIOError"));
	ctl_metrics_add(m, "vmlet_guest_memory_bytes", "gauge", "Guest memory size.", NULL,
			(double)c->vm->cfg->memory_bytes);
	ctl_metrics_add(m, "vmlet_vcpus", "gauge", "Number of vCPUs.", NULL,
			(double)c->vm->n_vcpus);
	return m->err;
}

static const struct ctl_vm_ops vm_ops = {
    .status = vm_status,
    .pause = vm_op_pause,
    .resume = vm_op_resume,
    .power_button = vm_button,
    .stop = vm_stop,
    .metrics = vm_metrics,
    .console_attach = vm_op_console_attach,
    .console_detach = vm_op_console_detach,
    .console_input = vm_op_console_input,
    .snapshot = vm_op_snapshot,
    .migrate = vm_op_migrate,
};

int ctl_vm_serve(struct ctl_server *s, struct vm *vm)
{
	the_vm.vm = vm;
	clock_gettime(CLOCK_MONOTONIC, &the_vm.started);
	return ctl_server_start(s, &vm->loop, &vm_ops, &the_vm);
}
