/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <string.h>

#include "spec/diag.h"

void diag_init(struct diag *d, struct arena *a)
{
	memset(d, 0, sizeof(*d));
	d->a = a;
	d->tail = &d->head;
}

static void add(struct diag *d, const char *file, unsigned int line, unsigned int col,
		const char *path, bool warning, const char *fmt, va_list ap)
{
	struct diag_msg *m = arena_alloc(d->a, sizeof(*m));
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	m->file = file;
	m->line = line;
	m->col = col;
	m->path = path ? arena_strdup(d->a, path) : NULL;
	m->msg = arena_strdup(d->a, buf);
	m->warning = warning;
	*d->tail = m;
	d->tail = &m->next;
	if (warning)
		d->n_warn++;
	else
		d->n_err++;
}

static const struct node *locate(const struct diag *d, const struct node *at)
{
	if (at && at->file)
		return at;
	return d->fallback;
}

void diag_err(struct diag *d, const struct node *at, const char *path, const char *fmt, ...)
{
	const struct node *l = locate(d, at);
	va_list ap;

	va_start(ap, fmt);
	add(d, l ? l->file : NULL, l ? l->line : 0, l ? l->col : 0, path, false, fmt, ap);
	va_end(ap);
}

void diag_warn(struct diag *d, const struct node *at, const char *path, const char *fmt, ...)
{
	const struct node *l = locate(d, at);
	va_list ap;

	va_start(ap, fmt);
	add(d, l ? l->file : NULL, l ? l->line : 0, l ? l->col : 0, path, true, fmt, ap);
	va_end(ap);
}

void diag_err_loc(struct diag *d, const char *file, unsigned int line, unsigned int col,
		  const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(d, file, line, col, path, false, fmt, ap);
	va_end(ap);
}

void diag_print(const struct diag *d, FILE *f)
{
	const struct diag_msg *m;

	for (m = d->head; m; m = m->next) {
		if (m->file)
			fprintf(f, "%s:%u:%u: ", m->file, m->line, m->col);
		else
			fputs("vmlet: ", f);
		if (m->warning)
			fputs("warning: ", f);
		if (m->path)
			fprintf(f, "%s: ", m->path);
		fprintf(f, "%s\n", m->msg);
	}
}

bool diag_has_path(const struct diag *d, const char *path)
{
	const struct diag_msg *m;

	for (m = d->head; m; m = m->next)
		if (!m->warning && m->path && strcmp(m->path, path) == 0)
			return true;
	return false;
}
