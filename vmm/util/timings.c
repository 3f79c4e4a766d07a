/* SPDX-License-Identifier: MIT */
/*
 * timings.c - `--timings` phase stamps (timings.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#include "vmm/util/timings.h"

static const char *const timings_names[TIMINGS_N] = {
    [TIMINGS_EXEC] = "exec",	 [TIMINGS_RESOLVED] = "resolved",   [TIMINGS_MAPPED] = "mapped",
    [TIMINGS_LOADED] = "loaded", [TIMINGS_FIRST_RUN] = "first_run", [TIMINGS_POWEROFF] = "poweroff",
    [TIMINGS_EXIT] = "exit",
};

static uint64_t timings_exec_ns;
static uint64_t *timings_tab; /* TIMINGS_N stamps in a shared page; NULL: off */

static uint64_t timings_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void timings_start(void)
{
	timings_exec_ns = timings_now();
}

int timings_enable(void)
{
	void *p;

	if (timings_tab)
		return 0;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	timings_tab = p;
	timings_tab[TIMINGS_EXEC] = timings_exec_ns ? timings_exec_ns : timings_now();
	return 0;
}

void timings_mark(enum timings_phase p)
{
	uint64_t none = 0, now;

	if (!timings_tab || (unsigned int)p >= TIMINGS_N ||
	    __atomic_load_n(&timings_tab[p], __ATOMIC_ACQUIRE))
		return;
	now = timings_now();
	__atomic_compare_exchange_n(&timings_tab[p], &none, now, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}

void timings_print(void)
{
	uint64_t t0, prev, t;
	unsigned int i;

	if (!timings_tab)
		return;
	t0 = prev = timings_tab[TIMINGS_EXEC];
	for (i = 0; i < TIMINGS_N; i++) {
		t = __atomic_load_n(&timings_tab[i], __ATOMIC_ACQUIRE);
		if (!t)
			continue;
		fprintf(stderr, "timings: %-9s %10llu us (+%llu)\n", timings_names[i],
			(unsigned long long)(t - t0) / 1000,
			(unsigned long long)(t > prev ? t - prev : 0) / 1000);
		prev = t;
	}
	fflush(stderr);
}
