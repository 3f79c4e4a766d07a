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

#include "vmm/log.h"

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

/* One line being formatted (under log_lock): no allocation, so any
 * confined thread may log. */
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

void log_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
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

static void log_put_json(const char *s)
{
	char esc[8];

	log_put("\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			log_put(esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			log_put(esc, 6);
		} else {
			log_put((const char *)&c, 1);
		}
	}
	log_put("\"", 1);
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
		n = log_fmt == LOG_FORMAT_JSON
			? snprintf(
			      note, sizeof(note),
			      "{\"component\":\"vmlet\",\"level\":\"warning\",\"msg\":\"log: %lu "
			      "lines lost: stderr's reader did not keep up\"}\n",
			      log_lost)
			: snprintf(
			      note, sizeof(note),
			      "vmlet: warning: log: %lu lines lost: stderr's reader did not keep "
			      "up\n",
			      log_lost);
		if (write(STDERR_FILENO, note, (size_t)n) == n)
			log_lost = 0;
	}
	if (log_lost || write(STDERR_FILENO, log_line, log_len) != (ssize_t)log_len)
		log_lost++;
	log_len = 0;
}

/* source / field: extra keys of the JSON line (NULL = none) */
static void log_vemit_at(enum log_level lvl, const char *source, const char *field, const char *fmt,
			 va_list ap, int err)
{
	char msg[1024];
	int n;

	if (lvl < log_min)
		return;
	n = field ? snprintf(msg, sizeof(msg), "%s: ", field) : 0;
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	n += vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	if (err && n >= 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - n, ": %s", strerror(-err));

	pthread_mutex_lock(&log_lock);
	log_len = 0;
	if (log_fmt == LOG_FORMAT_JSON) {
		struct timespec ts;
		struct tm tm;
		char stamp[40], head[96];

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
		log_puts("{\"component\":");
		log_put_json(log_component);
		snprintf(head, sizeof(head), ",\"level\":\"%s\",\"timestamp\":\"%s.%06ldZ\"",
			 level_names[lvl], stamp, ts.tv_nsec / 1000);
		log_puts(head);
		if (log_vmi) {
			log_puts(",\"vmi\":");
			log_put_json(log_vmi);
		}
		if (source) {
			log_puts(",\"source\":");
			log_put_json(source);
		}
		if (field) {
			log_puts(",\"field\":");
			log_put_json(field);
		}
		log_puts(",\"msg\":");
		log_put_json(msg);
		log_puts("}");
	} else {
		log_puts(source ? source : "vmlet");
		log_puts(lvl == LOG_ERROR ? ": error: " : lvl == LOG_WARN ? ": warning: " : ": ");
		log_puts(msg);
	}
	log_flush();
	pthread_mutex_unlock(&log_lock);
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
