/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "vmm/log.h"

static enum log_format log_fmt = LOG_FORMAT_TEXT;
static enum log_level log_min = LOG_INFO;
static const char *log_component = "vmlet";
static const char *log_vmi;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = {"debug", "info", "warning", "error"};

bool log_enabled(enum log_level lvl)
{
	return lvl >= log_min;
}

void log_setup(enum log_format fmt, enum log_level min, const char *component, const char *vmi)
{
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
	if (log_fmt == LOG_FORMAT_JSON) {
		struct timespec ts;
		struct tm tm;
		char stamp[40];

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(stderr, "{\"component\":");
		log_json_string(stderr, log_component);
		fprintf(stderr, ",\"level\":\"%s\",\"timestamp\":\"%s.%06ldZ\"", level_names[lvl],
			stamp, ts.tv_nsec / 1000);
		if (log_vmi) {
			fprintf(stderr, ",\"vmi\":");
			log_json_string(stderr, log_vmi);
		}
		if (source) {
			fprintf(stderr, ",\"source\":");
			log_json_string(stderr, source);
		}
		if (field) {
			fprintf(stderr, ",\"field\":");
			log_json_string(stderr, field);
		}
		fprintf(stderr, ",\"msg\":");
		log_json_string(stderr, msg);
		fputs("}\n", stderr);
	} else {
		fprintf(stderr, "%s%s%s%s\n", source ? source : "vmlet",
			lvl == LOG_ERROR  ? ": error: "
			: lvl == LOG_WARN ? ": warning: "
					  : ": ",
			"", msg);
	}
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
