/* SPDX-License-Identifier: MIT */
/*
 * vm_side.c - what the control socket drives in a running VM besides the
 * pause (vmm/vm/vm_pause.c): console attach, device counters (see vm.h and
 * device.h).
 */
#include <errno.h>
#include <string.h>

#include "vmm/util/log.h"
#include "vmm/vm/vm.h"

/* ---- console attach ---------------------------------------------------- */

int vm_console_attach(struct vm *vm, int fd)
{
	int none = 0;

	if (!__atomic_compare_exchange_n(&vm->console_client, &none, fd + 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -EBUSY;
	log_info("console: client attached");
	return 0;
}

void vm_console_detach(struct vm *vm, int fd)
{
	int cur = fd + 1;

	if (__atomic_compare_exchange_n(&vm->console_client, &cur, 0, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		log_info("console: client detached");
}

void vm_console_input(struct vm *vm, const void *buf, size_t len)
{
	if (vm->console_input)
		vm->console_input(vm->console_input_opaque, buf, len);
}

/* ---- device counters --------------------------------------------------- */

void vm_log_counters(struct vm *vm)
{
	struct device_counters c;
	unsigned int i;

	for (i = 0; i < vm->n_counters; i++) {
		memset(&c, 0, sizeof(c));
		vm->counters[i].read(vm->counters[i].opaque, &c);
		if (!strcmp(vm->counters[i].kind, "blk"))
			log_info("disk '%s': %llu requests (%llu failed), %llu bytes read, %llu "
				 "written",
				 vm->counters[i].name, (unsigned long long)c.requests,
				 (unsigned long long)c.errors, (unsigned long long)c.read_bytes,
				 (unsigned long long)c.write_bytes);
		else if (!strcmp(vm->counters[i].kind, "balloon"))
			log_info("balloon: %llu free page reports, %llu bytes released; guest "
				 "statistics received %llu times",
				 (unsigned long long)c.requests, (unsigned long long)c.write_bytes,
				 (unsigned long long)c.balloon_stats_updates);
		else if (!strcmp(vm->counters[i].kind, "console")) {
			if (c.tx_dropped) /* said only when output was lost */
				log_warn(
				    "console: %llu bytes written, %llu dropped (the reader did "
				    "not keep up)",
				    (unsigned long long)c.tx_bytes,
				    (unsigned long long)c.tx_dropped);
		} else if (!strcmp(vm->counters[i].kind, "vsock"))
			log_info("vsock: %llu bytes to the guest, %llu from it, %llu connections "
				 "reset or refused",
				 (unsigned long long)c.rx_bytes, (unsigned long long)c.tx_bytes,
				 (unsigned long long)c.rx_dropped);
		else if (!strcmp(vm->counters[i].kind, "channel"))
			log_info("channel '%s': %llu bytes to the guest, %llu from it",
				 vm->counters[i].name, (unsigned long long)c.rx_bytes,
				 (unsigned long long)c.tx_bytes);
		else
			log_info("interface '%s': %llu frames (%llu bytes) received, %llu (%llu "
				 "bytes) sent, %llu + %llu dropped",
				 vm->counters[i].name, (unsigned long long)c.rx_packets,
				 (unsigned long long)c.rx_bytes, (unsigned long long)c.tx_packets,
				 (unsigned long long)c.tx_bytes, (unsigned long long)c.rx_dropped,
				 (unsigned long long)c.tx_dropped);
	}
}
