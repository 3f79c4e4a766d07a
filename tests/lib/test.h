/* SPDX-License-Identifier: MIT */
/*
 * test.h - the unit-test harness. A test file defines test functions and a
 * main() that runs them with TEST_RUN(fn). Failed checks print file:line and
 * the expression and mark the test failed; the process exits 1 if any test
 * failed, 77 if every test skipped, else 0.
 */
#ifndef VMLET_TEST_H
#define VMLET_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern int test_failed_checks;
extern int test_n_failed, test_n_passed, test_n_skipped;
extern int test_skip_current;

void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void test_run(const char *name, void (*fn)(void));
int test_summary(void);
/* Read a whole file into a malloc'd NUL-terminated buffer (NULL on error). */
char *test_read_file(const char *path, size_t *len);
/* system() of a printf-formatted command line (at most 1023 bytes). */
int test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define CHECK(expr)                                                                                \
	do {                                                                                       \
		if (!(expr))                                                                       \
			test_fail(__FILE__, __LINE__, "%s", #expr);                                \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
	do {                                                                                       \
		unsigned long long a_ = (a), b_ = (b);                                             \
		if (a_ != b_)                                                                      \
			test_fail(__FILE__, __LINE__, "%s == %s (0x%llx != 0x%llx)", #a, #b, a_,   \
				  b_);                                                             \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (!a_ || !b_ || strcmp(a_, b_))                                                  \
			test_fail(__FILE__, __LINE__, "%s == %s (\"%s\" != \"%s\")", #a, #b,       \
				  a_ ? a_ : "(null)", b_ ? b_ : "(null)");                         \
	} while (0)

#define SKIP(why)                                                                                  \
	do {                                                                                       \
		printf("  skip: %s\n", why);                                                       \
		test_skip_current = 1;                                                             \
		return;                                                                            \
	} while (0)

#define TEST_RUN(fn) test_run(#fn, fn)

#endif /* VMLET_TEST_H */
