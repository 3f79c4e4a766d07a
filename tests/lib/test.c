/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/lib/test.h"

int test_failed_checks, test_n_failed, test_n_passed, test_n_skipped;
int test_skip_current;

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "  %s:%d: check failed: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	test_failed_checks++;
}

void test_run(const char *name, void (*fn)(void))
{
	int before = test_failed_checks;

	test_skip_current = 0;
	fn();
	if (test_failed_checks != before) {
		printf("FAIL %s\n", name);
		test_n_failed++;
	} else if (test_skip_current) {
		printf("skip %s\n", name);
		test_n_skipped++;
	} else {
		printf("ok   %s\n", name);
		test_n_passed++;
	}
	fflush(stdout);
}

int test_summary(void)
{
	printf("%d passed, %d failed, %d skipped\n", test_n_passed, test_n_failed, test_n_skipped);
	if (test_n_failed)
		return 1;
	if (!test_n_passed && test_n_skipped)
		return 77;
	return 0;
}

char *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc((size_t)n + 1);
	if (!buf)
		goto out;
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[n] = 0;
	if (len)
		*len = (size_t)n;
out:
	fclose(f);
	return buf;
}

int test_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}
