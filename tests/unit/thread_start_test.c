/* SPDX-License-Identifier: MIT */
/*
 * thread_start() and thread_start_all() (vmm/util/thread.h): every new thread
 * has its role and name before fn runs; the sandbox hook runs on the new
 * thread first; a thread whose hook fails never runs fn and its caller
 * learns which one it was, while the others of the batch run; bad
 * arguments start nothing; thread_hooked_count() follows the hooked
 * threads that run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/util/thread.h"

#define N 12

static int hook_calls;
static int fail_call = -1; /* the hook fails on this call (0-based), -1 never */
static int fn_ran[N];

static int test_hook(enum thread_role role)
{
	int call = __atomic_fetch_add(&hook_calls, 1, __ATOMIC_SEQ_CST);

	if (thread_current_role() != role)
		return -EPROTO; /* the role is set before the hook */
	return call == fail_call ? -EACCES : 0;
}

struct seen {
	int index;
	enum thread_role role;
	char name[16];
};

static void *record(void *arg)
{
	struct seen *s = arg;

	s->role = thread_current_role();
	pthread_getname_np(pthread_self(), s->name, sizeof(s->name));
	__atomic_store_n(&fn_ran[s->index], 1, __ATOMIC_SEQ_CST);
	return s;
}

static void reset(int fail)
{
	hook_calls = 0;
	fail_call = fail;
	memset(fn_ran, 0, sizeof(fn_ran));
	thread_sandbox_hook = test_hook;
}

static void test_start_all_runs_every_thread(void)
{
	struct thread_spec specs[N];
	struct seen seen[N];
	int i;

	reset(-1);
	memset(specs, 0, sizeof(specs));
	for (i = 0; i < N; i++) {
		seen[i] = (struct seen){.index = i};
		if (i % 2)
			snprintf(specs[i].name, sizeof(specs[i].name), "worker%d", i);
		specs[i].fn = record;
		specs[i].arg = &seen[i];
		specs[i].err = 1; /* must be overwritten */
	}
	CHECK_EQ_U64(thread_start_all(THREAD_BLK_IO, specs, N), 0);
	for (i = 0; i < N; i++) {
		char want[16];
		void *ret = NULL;

		CHECK_EQ_U64(specs[i].err, 0);
		if (specs[i].err)
			continue;
		pthread_join(specs[i].thread, &ret);
		CHECK(ret == &seen[i]);
		CHECK_EQ_U64(seen[i].role, THREAD_BLK_IO);
		snprintf(want, sizeof(want), i % 2 ? "worker%d" : "blk-io", i);
		CHECK_STR(seen[i].name, want);
	}
	CHECK_EQ_U64(hook_calls, N);
	thread_sandbox_hook = NULL;
}

static void test_start_all_one_hook_fails(void)
{
	struct thread_spec specs[N];
	struct seen seen[N];
	int i, failed = 0;

	reset(5); /* the sixth thread to reach the hook, whichever it is */
	memset(specs, 0, sizeof(specs));
	for (i = 0; i < N; i++) {
		seen[i] = (struct seen){.index = i};
		specs[i].fn = record;
		specs[i].arg = &seen[i];
	}
	CHECK_EQ_U64(thread_start_all(THREAD_VCPU, specs, N), (uint64_t)-EACCES);
	for (i = 0; i < N; i++) {
		if (specs[i].err) {
			CHECK_EQ_U64(specs[i].err, (uint64_t)-EACCES);
			failed++;
			/* joined by thread_start_all(): fn never ran */
			CHECK(!__atomic_load_n(&fn_ran[i], __ATOMIC_SEQ_CST));
			continue;
		}
		pthread_join(specs[i].thread, NULL);
		CHECK(fn_ran[i]);
	}
	CHECK_EQ_U64(failed, 1);
	CHECK_EQ_U64(hook_calls, N);
	thread_sandbox_hook = NULL;
}

static void test_start_single(void)
{
	struct seen s = {.index = 0};
	pthread_t t;
	void *ret = NULL;

	reset(-1);
	CHECK_EQ_U64(thread_start(&t, THREAD_NET_IO, "net0", record, &s), 0);
	pthread_join(t, &ret);
	CHECK(ret == &s);
	CHECK_STR(s.name, "net0");
	CHECK_EQ_U64(s.role, THREAD_NET_IO);
	reset(0);
	fn_ran[0] = 0;
	CHECK_EQ_U64(thread_start(&t, THREAD_NET_IO, "net0", record, &s), (uint64_t)-EACCES);
	CHECK(!fn_ran[0]);
	thread_sandbox_hook = NULL;
}

static int gate[2] = {-1, -1};

static void *wait_gate(void *arg)
{
	char c;

	(void)arg;
	return (void *)(intptr_t)read(gate[0], &c, 1);
}

/* thread_hooked_count(): from the hook's success until fn returns */
static void test_hooked_count(void)
{
	struct thread_spec specs[4];
	unsigned int before = thread_hooked_count();
	pthread_t t;
	int i;

	if (pipe(gate))
		abort();
	reset(2); /* the third thread fails its hook: never counted */
	memset(specs, 0, sizeof(specs));
	for (i = 0; i < 4; i++)
		specs[i].fn = wait_gate;
	CHECK(thread_start_all(THREAD_HELPER, specs, 4) != 0);
	CHECK_EQ_U64(thread_hooked_count(), before + 3);
	thread_sandbox_hook = NULL; /* no hook: not counted either */
	CHECK_EQ_U64(thread_start(&t, THREAD_HELPER, NULL, wait_gate, NULL), 0);
	CHECK_EQ_U64(thread_hooked_count(), before + 3);
	CHECK(write(gate[1], "xxxx", 4) == 4);
	for (i = 0; i < 4; i++)
		if (!specs[i].err)
			pthread_join(specs[i].thread, NULL);
	pthread_join(t, NULL);
	CHECK_EQ_U64(thread_hooked_count(), before);
	close(gate[0]);
	close(gate[1]);
}

static void test_bad_arguments(void)
{
	struct thread_spec specs[2] = {{.fn = record}, {.fn = NULL}};
	struct seen s = {.index = 0};
	pthread_t t;

	reset(-1);
	specs[0].arg = &s;
	CHECK_EQ_U64(thread_start_all(THREAD_VCPU, specs, 2), (uint64_t)-EINVAL);
	CHECK_EQ_U64(specs[0].err, (uint64_t)-EINVAL);
	CHECK_EQ_U64(specs[1].err, (uint64_t)-EINVAL);
	CHECK_EQ_U64(thread_start_all(THREAD_MAIN, specs, 1), (uint64_t)-EINVAL);
	CHECK_EQ_U64(thread_start(&t, THREAD_ROLE_COUNT, NULL, record, &s), (uint64_t)-EINVAL);
	CHECK_EQ_U64(hook_calls, 0);
	CHECK(!fn_ran[0]);
	CHECK_EQ_U64(thread_start_all(THREAD_VCPU, NULL, 0), 0);
	thread_sandbox_hook = NULL;
}

int main(void)
{
	TEST_RUN(test_start_all_runs_every_thread);
	TEST_RUN(test_start_all_one_hook_fails);
	TEST_RUN(test_start_single);
	TEST_RUN(test_hooked_count);
	TEST_RUN(test_bad_arguments);
	return test_summary();
}
