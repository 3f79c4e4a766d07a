/* SPDX-License-Identifier: MIT */
/*
 * migrate_fuzz.c - libFuzzer target for a live migration's incoming stream
 * as the destination reads it (vmm/snapshot/mig_recv.c,
 * mig_receive_stream(); docs/migration.md): the input is the stream the
 * "source" sends, through a socket pair, to a destination with two RAM
 * regions (64 KiB at 0, 32 KiB at 1 MiB), the config "CONFIG", and a
 * state loader that runs the snapshot file's whole check (snap_file.c;
 * the loaders behind it are snapshot_fuzz's). The records' bounds and
 * order are checked before anything is read into RAM: a page record must
 * land inside one region. Inputs above 60 KiB are skipped (the socket's
 * buffer holds the whole stream). Seeds: tests/fuzz/migrate_fuzz.seeds.sh.
 */
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/snapshot/mig_int.h"
#include "vmm/snapshot/snap_file.h"
#include "vmm/util/log.h"
#include "vmm/vm/guest_mem.h"

#define RAM0	 (64u << 10)
#define RAM1	 (32u << 10)
#define RAM1_GPA (1u << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t ram0[RAM0] __attribute__((aligned(4096)));
static uint8_t ram1[RAM1] __attribute__((aligned(4096)));

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_setup(LOG_FORMAT_TEXT, LOG_ERROR, "migrate-fuzz", NULL);
	return 0;
}

static int check_state(void *ctx, const void *state, size_t len)
{
	struct snap_file f;
	char err[256];
	int r = snap_file_parse(state, len, &f, err, sizeof(err));

	(void)ctx;
	if (!r)
		snap_file_release(&f);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guest_mem mem = {.n = 2, .total = RAM0 + RAM1, .page_size = 4096};
	struct mig_sink s = {.mem = &mem, .config = "CONFIG", .load = check_state};
	int sv[2];

	if (size > (60u << 10) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 0;
	mem.r[0] = (struct guest_mem_region){0, RAM0, ram0};
	mem.r[1] = (struct guest_mem_region){RAM1_GPA, RAM1, ram1};
	if (write(sv[1], data, size) == (ssize_t)size && !shutdown(sv[1], SHUT_WR))
		mig_receive_stream(sv[0], &s);
	close(sv[0]);
	close(sv[1]);
	return 0;
}
