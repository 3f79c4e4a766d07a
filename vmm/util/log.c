/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmm/util/json_out.h"
#include "vmm/util/log.h"

static enum log_format log_fmt = LOG_FORMAT_TEXT;
static enum log_level log_min = LOG_INFO;
static const char *log_component = "vmlet";
static const char *log_vmi;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
/* Lines go to stderr. When it is a pipe, fd 2 becomes a non-blocking open
 * file description of the same pipe (the shell's is left as it was; the
 * sandbox still sees fd 2): a reader that stalls (`2>&1` into a pipe the
 * guest's console filled) costs log lines, counted and reported with the
 * next line that fits, never a blocked vCPU or event loop. */
static bool log_fd_set;
static unsigned long log_lost; /* under log_lock */

/* One line being formatted (under log_lock). A JSON line is built with
 * json-c (vmm/util/json_out.h), which allocates: every role's seccomp filter
 * allows malloc (vmm/sandbox/sandbox_rules.c, "common"); when it fails the
 * line is written as text rather than lost. */
static char log_line[8192];
static size_t log_len;

static const char *const level_names[] = {"debug", "info", "warning", "error"};

bool log_enabled(enum log_level lvl)
{
	return lvl >= log_min;
}

static void log_open_fd(void)
{
	struct stat st;
	int fd;

	log_fd_set = true;
	if (fstat(STDERR_FILENO, &st) < 0 || !S_ISFIFO(st.st_mode))
		return; /* a file, a terminal or a socket: written as is */
	fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return;
	if (fd != STDERR_FILENO) {
		dup2(fd, STDERR_FILENO); /* without O_CLOEXEC: children keep their stderr */
		close(fd);
	}
}

void log_setup(enum log_format fmt, enum log_level min, const char *component, const char *vmi)
{
	if (!log_fd_set)
		log_open_fd();
	log_fmt = fmt;
	log_min = min;
	if (component)
		log_component = component;
	log_vmi = vmi;
}

static void log_put(const char *s, size_t n)
{
	if (n > sizeof(log_line) - 1 - log_len)
		n = sizeof(log_line) - 1 - log_len; /* the newline always fits */
	memcpy(log_line + log_len, s, n);
	log_len += n;
}

static void log_puts(const char *s)
{
	log_put(s, strlen(s));
}

/* One JSON line's object, keys in this order (a NULL value: key left
 * out; stamp NULL: no timestamp). NULL when json-c cannot allocate. */
static struct json_object *log_json(const char *component, enum log_level lvl, const char *stamp,
				    const char *vmi, const char *source, const char *field,
				    const char *msg)
{
	struct json_object *o = json_object_new_object();
	int r = json_out_add_str(o, "component", component);

	r = r ?: json_out_add_str(o, "level", level_names[lvl]);
	if (stamp)
		r = r ?: json_out_add_str(o, "timestamp", stamp);
	if (vmi)
		r = r ?: json_out_add_str(o, "vmi", vmi);
	if (source)
		r = r ?: json_out_add_str(o, "source", source);
	if (field)
		r = r ?: json_out_add_str(o, "field", field);
	r = r ?: json_out_add_str(o, "msg", msg);
	if (r) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* The note that lines were lost, with its newline, into buf: its length. */
static int log_note_lost(char *buf, size_t cap)
{
	char msg[96];
	struct json_object *o = NULL;
	const char *t = NULL;
	int n;

	snprintf(msg, sizeof(msg), "log: %lu lines lost: stderr's reader did not keep up",
		 log_lost);
	if (log_fmt == LOG_FORMAT_JSON)
		o = log_json("vmlet", LOG_WARN, NULL, NULL, NULL, NULL, msg);
	if (o)
		t = json_out_text(o);
	n = t ? snprintf(buf, cap, "%s\n", t) : snprintf(buf, cap, "vmlet: warning: %s\n", msg);
	json_object_put(o);
	return n < 0 || (size_t)n >= cap ? 0 : n;
}

/* The line ends: one write(), which a pipe takes whole or not at all (a
 * line of up to PIPE_BUF bytes); lines a stalled pipe refused are counted
 * and said before the next one that fits. */
static void log_flush(void)
{
	char note[160];
	int n;

	log_line[log_len++] = '\n';
	if (log_lost) {
		n = log_note_lost(note, sizeof(note));
		if (write(STDERR_FILENO, note, (size_t)n) == n)
			log_lost = 0;
	}
	if (log_lost || write(STDERR_FILENO, log_line, log_len) != (ssize_t)log_len)
		log_lost++;
	log_len = 0;
}

/* Now in UTC, "2026-11-27T10:45:26.123456Z", into buf: buf. */
static const char *log_stamp(char *buf, size_t cap)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, cap - n, ".%06ldZ", ts.tv_nsec / 1000);
	return buf;
}

/* source / field: extra keys of the JSON line (NULL = none) */
static void log_vemit_at(enum log_level lvl, const char *source, const char *field, const char *fmt,
			 va_list ap, int err)
{
	struct json_object *line = NULL;
	const char *text = NULL;
	char msg[1024], stamp[48];
	int n;

	if (lvl < log_min)
		return;
	n = field ? snprintf(msg, sizeof(msg), "%s: ", field) : 0;
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	n += vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	if (err && n >= 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - n, ": %s", strerror(-err));

	if (log_fmt == LOG_FORMAT_JSON)
		line = log_json(log_component, lvl, log_stamp(stamp, sizeof(stamp)), log_vmi,
				source, field, msg);
	pthread_mutex_lock(&log_lock);
	log_len = 0;
	if (line && (text = json_out_text(line))) {
		log_puts(text);
	} else { /* text lines, or a JSON line json-c could not allocate */
		log_puts(source ? source : "vmlet");
		log_puts(lvl == LOG_ERROR ? ": error: " : lvl == LOG_WARN ? ": warning: " : ": ");
		log_puts(msg);
	}
	log_flush();
	pthread_mutex_unlock(&log_lock);
	json_object_put(line);
}

static void log_vemit(enum log_level lvl, const char *fmt, va_list ap, int err)
{
	log_vemit_at(lvl, NULL, NULL, fmt, ap, err);
}

void log_field(enum log_level lvl, const char *source, const char *field, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit_at(lvl, source, field, fmt, ap, 0);
	va_end(ap);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(lvl, fmt, ap, 0);
	va_end(ap);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_ERROR, fmt, ap, 0);
	va_end(ap);
	return -1;
}

int error_errno(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_ERROR, fmt, ap, err ? err : -EIO);
	va_end(ap);
	return err;
}
