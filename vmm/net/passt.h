/* SPDX-License-Identifier: MIT */
/*
 * passt.h - the passt backend: unprivileged user-mode networking through
 * Debian's `passt`, which vmlet starts, talks to and restarts.
 *
 * vmlet makes a connected AF_UNIX stream socketpair and starts
 * `passt -f -q -1 -F FD` with the other end: no socket path, nothing to
 * clean up, and passt exits by itself when vmlet closes its end. On the
 * stream every frame is a 4-byte big-endian length and the Ethernet frame
 * (the qemu "stream" netdev framing passt speaks). passt runs its own
 * DHCP/ARP/NDP and copies the addresses and routes of the namespace it
 * runs in, so the guest needs nothing from vmlet's DHCP responder.
 *
 * Supervision: vmlet's sandbox forbids new processes once the VM runs, so
 * passt_create() forks a small supervisor process (during setup) that
 * starts passt and hands each new stream to vmlet over a SOCK_SEQPACKET
 * control socket (SCM_RIGHTS). When passt exits, the supervisor restarts it,
 * backing off exponentially (PASST_BACKOFF_MIN_MS doubling up to
 * PASST_BACKOFF_MAX_MS; reset after a passt lived PASST_BACKOFF_RESET_MS),
 * and the backend picks the new stream up (NET_BE_RECONNECTED) with only
 * recvmsg. Frames sent while disconnected are dropped, as on a pulled
 * cable. The supervisor holds none of vmlet's descriptors and ends, after
 * stopping passt, when the control socket closes (backend destroyed or
 * vmlet gone); vmlet never waits for it (it is re-parented to init).
 *
 * Call passt_create() before guest RAM is mapped (or with it MADV_DONTFORK)
 * so the fork does not copy its page tables.
 */
#ifndef VMLET_NET_PASST_H
#define VMLET_NET_PASST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct net_backend;
struct vm_port;

#define PASST_BACKOFF_MIN_MS   100
#define PASST_BACKOFF_MAX_MS   5000
#define PASST_BACKOFF_RESET_MS 10000
/* passt's stderr goes to its supervisor, which keeps the last line (at
 * most PASST_WHY_MAX - 1 bytes) for the restart warning in vmlet's log */
#define PASST_WHY_MAX 160

struct passt_config {
	const char *binary;	     /* NULL: "passt" from PATH */
	unsigned int mtu;	     /* 0: passt's default (65520) */
	const struct vm_port *ports; /* forwarded TCP/UDP ports */
	/* no ports listed: forward every TCP and UDP port (KubeVirt's passt
	 * binding in a pod); false: forward none */
	bool all_when_none;
	unsigned int n_ports;
};

/* Start passt and connect. The config is copied. */
int passt_create(const struct passt_config *cfg, struct net_backend **out);

/* passt's pid (for tests and messages); -1 while not running. */
pid_t passt_pid(const struct net_backend *be);
/* How many times passt was (re)started. */
unsigned int passt_starts(const struct net_backend *be);

/* The last line the passt before the current one wrote to stderr before
 * it exited ("" none or at the first start); also in the restart warning. */
const char *passt_last_words(const struct net_backend *be);

/*
 * Build the "-t"/"-u" port lists ("80,443", "none", or "all" for both
 * when no port is listed and all_when_none) into tcp/udp. A protocol
 * other than "UDP" (or none) means TCP, as in KubeVirt.
 */
int passt_port_specs(const struct vm_port *ports, unsigned int n, bool all_when_none, char *tcp,
		     size_t tcp_len, char *udp, size_t udp_len);

/* passt binds one socket per port and family for "all": the descriptor
 * limit it needs (RLIMIT_NOFILE), raised for passt up to the hard limit. */
#define PASST_ALL_PORTS_NOFILE 140000

#endif /* VMLET_NET_PASST_H */
