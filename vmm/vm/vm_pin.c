/* SPDX-License-Identifier: MIT */
/*
 * vm_pin.c - dedicatedCpuPlacement. KubeVirt gives each vCPU a host CPU of
 * its own (the pod's exclusive CPUs, one vCPU thread pinned to each) and,
 * with isolateEmulatorThread, one more CPU for QEMU's other threads.
 *
 * vmlet takes the CPUs it may run on (sched_getaffinity: a pod's cpuset,
 * taskset, or the whole host), lowest first: vCPU i gets the i-th, the
 * emulator CPU the next one. vm_pin_plan() (vm_create(), before any other
 * thread starts) checks there are enough and, with isolateEmulatorThread,
 * pins the calling (main) thread to the emulator CPU, so every I/O and
 * helper thread started afterwards inherits it. vm_pin_vcpus() (vm_run(),
 * once the vCPU threads exist, before the sandbox) pins each vCPU thread.
 * Without isolateEmulatorThread the other threads keep the whole set.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "vmm/util/log.h"
#include "vmm/vm/vcpu.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

#define PIN_FIELD "spec.template.spec.domain.cpu.dedicatedCpuPlacement"

/* "0-3,6" for the CPUs of set */
static void cpu_list(const cpu_set_t *set, char *buf, size_t cap)
{
	size_t n = 0;
	int c, end;

	buf[0] = 0;
	for (c = 0; c < CPU_SETSIZE && n < cap; c++) {
		if (!CPU_ISSET(c, set))
			continue;
		for (end = c; end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set); end++)
			;
		n += (size_t)snprintf(buf + n, cap - n, end > c ? "%s%d-%d" : "%s%d", n ? "," : "",
				      c, end);
		c = end;
	}
}

int vm_pin_plan(struct vm *vm)
{
	const struct vm_config *cfg = vm->cfg;
	unsigned int need = vm->n_vcpus + (cfg->isolate_emulator_thread ? 1 : 0), k = 0;
	cpu_set_t allowed, emu;
	char list[256];
	int c;

	if (!cfg->dedicated_cpu_placement)
		return 0;
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return error_errno(-errno, "vm: sched_getaffinity");
	if ((unsigned int)CPU_COUNT(&allowed) < need) {
		cpu_list(&allowed, list, sizeof(list));
		error(PIN_FIELD ": %u vCPUs need %u host CPUs of their own%s; vmlet may use %d "
				"(CPUs %s)",
		      vm->n_vcpus, need,
		      cfg->isolate_emulator_thread ? " (one more for isolateEmulatorThread)" : "",
		      CPU_COUNT(&allowed), list);
		return -EINVAL;
	}
	vm->pin_cpus = calloc(need, sizeof(*vm->pin_cpus));
	if (!vm->pin_cpus)
		return -ENOMEM;
	for (c = 0; c < CPU_SETSIZE && k < need; c++)
		if (CPU_ISSET(c, &allowed))
			vm->pin_cpus[k++] = c;
	if (cfg->isolate_emulator_thread) {
		CPU_ZERO(&emu);
		CPU_SET(vm->pin_cpus[vm->n_vcpus], &emu);
		if (sched_setaffinity(0, sizeof(emu), &emu))
			return error_errno(-errno, "vm: pinning the emulator threads to CPU %d",
					   vm->pin_cpus[vm->n_vcpus]);
		log_info("vm: isolateEmulatorThread: the main and I/O threads on CPU %d",
			 vm->pin_cpus[vm->n_vcpus]);
	}
	return 0;
}

int vm_pin_vcpus(struct vm *vm)
{
	cpu_set_t one;
	uint32_t i;
	int err;

	if (!vm->pin_cpus)
		return 0;
	for (i = 0; i < vm->n_vcpus; i++) {
		if (!vm->vcpus[i].started)
			continue;
		CPU_ZERO(&one);
		CPU_SET(vm->pin_cpus[i], &one);
		err = pthread_setaffinity_np(vm->vcpus[i].thread, sizeof(one), &one);
		if (err)
			return error_errno(-err, "vm: pinning vcpu%u to CPU %d", i,
					   vm->pin_cpus[i]);
	}
	log_info("vm: dedicatedCpuPlacement: vcpu0..%u on CPUs %d..%d, one each", vm->n_vcpus - 1,
		 vm->pin_cpus[0], vm->pin_cpus[vm->n_vcpus - 1]);
	return 0;
}
