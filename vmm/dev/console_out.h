/* SPDX-License-Identifier: MIT */
/*
 * console_out.h - the guest console's output path: a bounded ring that
 * the device fills on the vCPU thread (never blocking, never writing a
 * file descriptor) and the main thread's event loop drains to the console
 * (stdout or a file, written without blocking) and to a control client
 * attached with `vmlet ctl console`.
 *
 * When the reader stalls (a full pipe nobody reads, a stopped terminal)
 * the ring fills and further output is dropped and counted: the guest
 * keeps running and the event loop keeps serving signals, timers and the
 * control socket. One warning is logged per stall, and a line when the
 * reader catches up. A console file is capped: past max_bytes it is
 * copied to PATH.1 (replacing it) and emptied, as logrotate's copytruncate
 * does (the sandboxed loop may not open or rename files: PATH.1 is opened
 * beside PATH at setup).
 */
#ifndef VMLET_VMM_DEV_CONSOLE_OUT_H
#define VMLET_VMM_DEV_CONSOLE_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/vm/device.h"

#define CONSOLE_OUT_RING (64u << 10) /* bytes waiting for a slow reader */

struct console_out;

/* Setup, main thread: the sink for env->console (stdout, a file, or
 * none: then only an attached control client gets the output), watched
 * from env->loop. 0 or -errno (logged). */
int console_out_create(const struct device_env *env, struct console_out **out);
/* Any thread: queue n bytes (those that do not fit are dropped). */
void console_out_write(struct console_out *o, const void *buf, size_t n);
/* Bytes handed to the console so far, and dropped (atomic reads). */
uint64_t console_out_written(const struct console_out *o);
uint64_t console_out_dropped(const struct console_out *o);
/* Teardown, main thread: writes what the console takes without waiting,
 * counts the rest as dropped, closes what it opened. NULL is a no-op. */
void console_out_destroy(struct console_out *o);

#endif /* VMLET_VMM_DEV_CONSOLE_OUT_H */
