/* SPDX-License-Identifier: MIT */
/*
 * log.h - vmlet's one logging interface.
 *
 * Messages follow git's style: lowercase, no full stop, subsystem prefix
 * ("kvm: ...", "virtio-blk: ..."). Output goes to stderr, one JSON object
 * per line by default ({"level","timestamp","component","msg", ...}) or
 * plain text with --log-format text; a JSON line is written through
 * vmm/util/json_out.h like all of vmm/'s JSON. Thread-safe.
 *
 * error() and error_errno() return a value so a failure path is one line:
 *     return error_errno(-errno, "kvm: KVM_SET_SREGS");
 */
#ifndef VMLET_LOG_H
#define VMLET_LOG_H

#include <stdbool.h>
#include <stdio.h>

enum log_level { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR };
enum log_format { LOG_FORMAT_JSON = 0, LOG_FORMAT_TEXT };

/* Set before any thread starts. vmi is the VM name for the "vmi" key. */
void log_setup(enum log_format fmt, enum log_level min, const char *component, const char *vmi);

void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A message about a field of the user's manifest: source is its location
 * ("FILE:LINE:COL", NULL = none), field its path; both become keys of the
 * JSON line, and the message reads "FIELD: ..." (text: "SOURCE: warning:
 * FIELD: ..."). */
void log_field(enum log_level lvl, const char *source, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Whether messages of this level are written (to skip costly detail). */
bool log_enabled(enum log_level lvl);

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)

/* Log at error level; return -1. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Log "<msg>: strerror(-err)" at error level; return err (a -errno). */
int error_errno(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Warn once per call site: for guest-caused anomalies. */
#define log_warn_once(...)                                                                         \
	do {                                                                                       \
		static bool warned_;                                                               \
		if (!__atomic_exchange_n(&warned_, true, __ATOMIC_RELAXED))                        \
			log_warn(__VA_ARGS__);                                                     \
	} while (0)

#endif /* VMLET_LOG_H */
