/* SPDX-License-Identifier: MIT */
/*
 * timings.h - `--timings`: vmlet's own time, CLOCK_MONOTONIC stamps of a
 * few phases of the process (issue 29 part 2), printed on stderr when the
 * command ends.
 *
 * Contract: timings_mark() records the FIRST time a phase is reached and
 * never again (a restarted guest does not move a stamp); it is cheap, safe
 * from any thread and a no-op until timings_enable(). The stamps live in a
 * MAP_SHARED page, so a guest run in a forked worker (jail, terminal,
 * runStrategy restarts) stamps the same table its parent prints.
 * timings_print() prints each reached phase once, in the order below, as
 *   timings: PHASE US (+DELTA)
 * US microseconds since exec (the process's first statement), DELTA since
 * the previous printed phase; phases never reached are not printed.
 */
#ifndef VMLET_VMM_UTIL_TIMINGS_H
#define VMLET_VMM_UTIL_TIMINGS_H

enum timings_phase {
	TIMINGS_EXEC,	   /* main()'s first statement */
	TIMINGS_RESOLVED,  /* the manifests resolved into a vm_config */
	TIMINGS_MAPPED,	   /* guest memory mapped and given to KVM */
	TIMINGS_LOADED,	   /* the kernel/firmware loaded, registers set */
	TIMINGS_FIRST_RUN, /* the boot vCPU's first KVM_RUN */
	TIMINGS_POWEROFF,  /* the guest's end: power-off, or any first exit request */
	TIMINGS_EXIT,	   /* main() returns */
	TIMINGS_N
};

/* main(): the exec stamp, before anything else (always taken; no syscall
 * beyond the vDSO's clock). */
void timings_start(void);

/* --timings: from now on marks are kept and timings_print() prints.
 * 0 or -errno (the shared page could not be mapped). */
int timings_enable(void);

void timings_mark(enum timings_phase p);

/* Print the reached phases on stderr (nothing without timings_enable()). */
void timings_print(void);

#endif
