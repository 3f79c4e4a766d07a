// SPDX-License-Identifier: MIT
/* efi_vars_test - the persistent EFI variable store (vmm/boot/efi_vars.c): saves
 * survive reopening, a torn or corrupted tail falls back to the last good
 * record, opening compacts, garbage is not taken for variables. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "firmware/abi.h"
#include "tests/lib/test.h"
#include "vmm/boot/efi_vars.h"

static char dir[] = "/tmp/efi_vars_test.XXXXXX";
static char path[256];

static off_t file_size(void)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static void append(const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);

	CHECK(fd >= 0 && write(fd, p, n) == (ssize_t)n);
	close(fd);
}

static void test_roundtrip(void)
{
	struct efi_vars v;
	static uint8_t big[FW_ABI_EFI_VARS_MAX + 1];

	unlink(path);
	CHECK(efi_vars_open(&v, path) == 0);
	CHECK(v.len == 0);
	CHECK(file_size() == 24); /* one empty record */
	CHECK(efi_vars_save(&v, "first", 5) == 0);
	CHECK(efi_vars_save(&v, "second!", 7) == 0);
	CHECK(efi_vars_save(&v, big, sizeof(big)) == -E2BIG);
	CHECK(v.len == 7);
	efi_vars_close(&v);
	CHECK(file_size() == 24 + 29 + 31);
	CHECK(efi_vars_open(&v, path) == 0);
	CHECK(v.len == 7 && !memcmp(v.blob, "second!", 7));
	efi_vars_close(&v);
	CHECK(file_size() == 31); /* compacted to its last record */
}

/* A guest saving in a loop: the file stops growing where opening it would
 * still accept it, and the last good blob stays. */
static void test_bounded(void)
{
	static uint8_t blob[FW_ABI_EFI_VARS_MAX];
	struct efi_vars v;
	int ret = 0, n = 0;

	unlink(path);
	CHECK(efi_vars_open(&v, path) == 0);
	while (!ret && n < 2000)
		blob[0] = (uint8_t)n++, ret = efi_vars_save(&v, blob, sizeof(blob));
	CHECK(ret == -ENOSPC && n < 2000);
	CHECK((uint64_t)file_size() <= EFI_VARS_FILE_MAX);
	efi_vars_close(&v);
	CHECK(efi_vars_open(&v, path) == 0);
	CHECK(v.len == sizeof(blob) && v.blob[0] == (uint8_t)(n - 2));
	efi_vars_close(&v);
	CHECK(file_size() == 24 + (off_t)sizeof(blob));
}

static void test_torn(void)
{
	struct efi_vars v;
	uint8_t rec[40];

	/* a record cut short, then one whose hash does not match */
	memcpy(rec, "VMLETEV1\x10\0\0\0\0\0\0\0", 16);
	append(rec, 20);
	CHECK(efi_vars_open(&v, path) == 0);
	CHECK(v.len == 7 && !memcmp(v.blob, "second!", 7));
	efi_vars_close(&v);
	memset(rec + 16, 0x55, 24);
	append(rec, 40);
	CHECK(efi_vars_open(&v, path) == 0);
	CHECK(v.len == 7 && !memcmp(v.blob, "second!", 7));
	efi_vars_close(&v);
	/* a file that never was a store: no variables, and it is rewritten */
	unlink(path);
	append("not a variable store at all, just text", 38);
	CHECK(efi_vars_open(&v, path) == 0);
	CHECK(v.len == 0);
	efi_vars_close(&v);
	CHECK(file_size() == 24);
	/* a directory in the way */
	unlink(path);
	CHECK(mkdir(path, 0700) == 0);
	CHECK(efi_vars_open(&v, path) < 0);
	rmdir(path);
}

static void test_default_path(void)
{
	char *p;

	p = efi_vars_default_path("/a/b/vm.yaml", "web");
	CHECK_STR(p, "/a/b/web.efivars");
	free(p);
	p = efi_vars_default_path("vm.yaml", "web");
	CHECK_STR(p, "./web.efivars");
	free(p);
	p = efi_vars_default_path(dir, "x");
	CHECK(p && !strncmp(p, dir, strlen(dir)) && !strcmp(p + strlen(dir), "/x.efivars"));
	free(p);
	/* a name is made safe for a file name (issue 28, finding 9) */
	p = efi_vars_default_path(NULL, "../evil/name");
	CHECK_STR(p, "./_._evil_name.efivars");
	free(p);
	p = efi_vars_default_path(NULL, "a\nb\\c\"d");
	CHECK_STR(p, "./a_b_c_d.efivars");
	free(p);
	p = efi_vars_default_path("/vm.yaml", NULL);
	CHECK_STR(p, "//vm.efivars");
	free(p);
}

static bool victim_intact(const char *victim)
{
	char *got = test_read_file(victim, NULL);
	bool ok = got && !strcmp(got, "precious\n");

	free(got);
	return ok;
}

/* Links planted next to the store (issue 28, finding 7): the temporary
 * file used to be PATH.tmp, opened O_CREAT|O_TRUNC through any link there
 * (truncating and overwriting its target as vmlet's user, root on a bare
 * host) and renamed over the store, and saves then appended to the link's
 * target; a store that is itself a link was read and appended to. */
static void test_planted_links(void)
{
	char victim[300], tmp[300];
	struct efi_vars v;
	struct stat st;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	CHECK(test_sh("printf 'precious\\n' >%s", victim) == 0);
	unlink(path);
	CHECK(symlink(victim, tmp) == 0);
	CHECK(efi_vars_open(&v, path) == 0);
	CHECK(efi_vars_save(&v, "vars", 4) == 0);
	efi_vars_close(&v);
	CHECK(victim_intact(victim));
	CHECK(!lstat(path, &st) && S_ISREG(st.st_mode) && st.st_size == 24 + 28);
	CHECK(!lstat(tmp, &st) && S_ISLNK(st.st_mode));
	unlink(tmp);
	/* the store itself a link: refused, its target untouched */
	unlink(path);
	CHECK(symlink(victim, path) == 0);
	CHECK(efi_vars_open(&v, path) == -ELOOP);
	CHECK(victim_intact(victim));
	unlink(path);
	unlink(victim);
}

/* The in-memory store (efi_vars_open_fd): what one VM saved, the next
 * one on the same memfd finds; compacted to one record at each open; an
 * emptied file (the supervisor's truncate) is an empty store. */
static void test_memfd(void)
{
	int fd = memfd_create("efi_vars_test", MFD_CLOEXEC);
	struct efi_vars v;
	struct stat st;

	CHECK(fd >= 0);
	CHECK(efi_vars_open_fd(&v, fd) == 0);
	CHECK(v.len == 0);
	CHECK(efi_vars_save(&v, "first", 5) == 0);
	CHECK(efi_vars_save(&v, "second!", 7) == 0);
	efi_vars_close(&v);
	CHECK(fstat(fd, &st) == 0 && st.st_size == 24 + 29 + 31);
	CHECK(efi_vars_open_fd(&v, fd) == 0);
	CHECK(v.len == 7 && !memcmp(v.blob, "second!", 7));
	CHECK(fstat(fd, &st) == 0 && st.st_size == 24 + 7); /* one record */
	CHECK(efi_vars_save(&v, "third", 5) == 0);
	efi_vars_close(&v);
	CHECK(efi_vars_open_fd(&v, fd) == 0);
	CHECK(v.len == 5 && !memcmp(v.blob, "third", 5));
	efi_vars_close(&v);
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(efi_vars_open_fd(&v, fd) == 0);
	CHECK(v.len == 0);
	efi_vars_close(&v);
	CHECK(fcntl(fd, F_GETFD) >= 0); /* the caller's fd stays open */
	close(fd);
}

static uint8_t race_buf[FW_ABI_EFI_VARS_MAX];
static volatile sig_atomic_t race_hits;

/* Another vCPU rewriting the buffer the firmware saves from: a timer
 * signal that lands anywhere in efi_vars_save() changes a byte. */
static void race_signal(int sig)
{
	unsigned int k = (unsigned int)race_hits;

	(void)sig;
	race_buf[k * 4099u % sizeof(race_buf)] = (uint8_t)(k + 1);
	race_hits = (sig_atomic_t)(k + 1);
}

/* Saving from memory the guest changes meanwhile still writes records
 * that match their hash, and what the store holds (VARS_LOAD) is what
 * the file has: after reopening, the last save is back. (Each record
 * used to be hashed from the guest's buffer and then copied from it
 * again, so a racing guest left records whose hash failed, and reopening
 * fell back to the save before the first of them.) */
static void test_racing_guest(void)
{
	static uint8_t expect[FW_ABI_EFI_VARS_MAX];
	struct sigaction sa = {.sa_handler = race_signal, .sa_flags = SA_RESTART}, old;
	struct itimerval tv = {{0, 50}, {0, 50}}, off = {{0, 0}, {0, 0}};
	int fd = memfd_create("efi_vars_test", MFD_CLOEXEC), saves = 0;
	struct efi_vars v;

	CHECK(fd >= 0);
	CHECK(efi_vars_open_fd(&v, fd) == 0);
	memset(race_buf, 'x', sizeof(race_buf));
	CHECK(sigaction(SIGALRM, &sa, &old) == 0);
	CHECK(setitimer(ITIMER_REAL, &tv, NULL) == 0);
	/* until the signal came a few hundred times (at most 32 MiB saved) */
	while (race_hits < 300 && saves++ < 500)
		CHECK(efi_vars_save(&v, race_buf, sizeof(race_buf)) == 0);
	CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0);
	sigaction(SIGALRM, &old, NULL);
	CHECK(race_hits >= 100); /* the race was run */
	CHECK(v.len == sizeof(race_buf));
	memcpy(expect, v.blob, sizeof(expect));
	efi_vars_close(&v);
	CHECK(efi_vars_open_fd(&v, fd) == 0);
	CHECK(v.len == sizeof(race_buf) && !memcmp(v.blob, expect, sizeof(expect)));
	efi_vars_close(&v);
	close(fd);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/vm.efivars", dir);
	TEST_RUN(test_roundtrip);
	TEST_RUN(test_torn);
	TEST_RUN(test_bounded);
	TEST_RUN(test_default_path);
	TEST_RUN(test_memfd);
	TEST_RUN(test_planted_links);
	TEST_RUN(test_racing_guest);
	unlink(path);
	rmdir(dir);
	return test_summary();
}
