/* SPDX-License-Identifier: MIT */
/*
 * diag.h - errors and warnings of one resolution, collected in order and
 * printed together as "FILE:LINE:COL: FIELD.PATH: message" (warnings say
 * "warning:" after the location). Nothing is printed while resolving, so a
 * failed resolution leaves stdout untouched.
 */
#ifndef VMLET_SPEC_DIAG_H
#define VMLET_SPEC_DIAG_H

#include <stdbool.h>
#include <stdio.h>

#include "spec/node.h"

struct diag_msg {
	const char *file;
	unsigned int line, col;
	const char *path; /* KubeVirt field path, NULL = none */
	const char *msg;
	bool warning;
	struct diag_msg *next;
};

struct diag {
	struct arena *a;
	struct diag_msg *head, **tail;
	unsigned int n_err, n_warn;
	/* location used when a message has no node: the object at hand */
	const struct node *fallback;
};

void diag_init(struct diag *d, struct arena *a);
/* at: the node the message is about (its location is printed); NULL or a
 * node without a file falls back to d->fallback. */
void diag_err(struct diag *d, const struct node *at, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diag_warn(struct diag *d, const struct node *at, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diag_err_loc(struct diag *d, const char *file, unsigned int line, unsigned int col,
		  const char *path, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void diag_print(const struct diag *d, FILE *f);
/* True when the path was already reported as an error (dedup helper). */
bool diag_has_path(const struct diag *d, const char *path);

#endif /* VMLET_SPEC_DIAG_H */
