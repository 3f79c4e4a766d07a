/* SPDX-License-Identifier: MIT */
/*
 * node.h - the generic document tree every manifest is loaded into (by
 * spec/yaml.c) and that resolution reads and builds: maps (ordered),
 * sequences and typed scalars, each node knowing the file, line and column
 * it came from and which object set it (for --explain).
 *
 * All nodes and strings live in an arena: nothing is freed one by one,
 * arena_free() releases a whole tree at once. Trees are never shared
 * between arenas except read-only (a node may point into another arena's
 * strings as long as that arena outlives it).
 */
#ifndef VMLET_SPEC_NODE_H
#define VMLET_SPEC_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- arena ---------------------------------------------------------- */
struct arena_chunk;
struct arena {
	struct arena_chunk *head;
	size_t used, size; /* of head */
	size_t total;	   /* bytes handed out, for limits */
};

/*
 * spec/'s one out-of-memory policy: an allocation that fails ends the
 * process, "vmlet: out of memory" on stderr and abort(). Every allocation
 * in spec/ (the arenas, the heap strings and arrays of a vm_config, the
 * input buffers, libyaml's parser) fails through spec_oom(); no spec/
 * function returns -ENOMEM. Resolution runs before any guest exists, and
 * the node trees it builds could not be unwound half-way anyway.
 */
__attribute__((noreturn)) void spec_oom(void);

void arena_init(struct arena *a);
void arena_free(struct arena *a);
/* Zeroed memory (spec_oom() when there is none). */
void *arena_alloc(struct arena *a, size_t n);
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- nodes ---------------------------------------------------------- */
enum node_type {
	N_NULL = 0,
	N_BOOL,
	N_INT,
	N_FLOAT,
	N_STR,
	N_MAP,
	N_SEQ,
};

struct node;
struct node_index;
struct node_kv {
	const char *key;
	struct node *val;
	/* where the key was written (0 for keys made by resolution) */
	unsigned int line, col;
};

struct node {
	enum node_type type;
	/* scalars: the text ("true", "42", "4Gi"); NULL for maps/seqs */
	const char *str;
	/* N_MAP: kv[0..n), N_SEQ: items[0..n) */
	struct node_kv *kv;
	struct node **items;
	unsigned int n, cap;
	/* N_MAP of NODE_INDEX_MIN keys or more: the hash of its keys, kept by
	 * node_set/node_add/node_del/node_copy (spec/node_index.h); a map
	 * whose kv is written directly is scanned instead */
	struct node_index *idx;
	/* where it came from (file NULL for nodes made by resolution) */
	const char *file;
	unsigned int line, col;
	/* who set it, e.g. "VM", "instancetype u1.small"; NULL = inherit */
	const char *origin;
};

struct node *node_new(struct arena *a, enum node_type t);
struct node *node_str(struct arena *a, const char *s);
struct node *node_strf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct node *node_int(struct arena *a, long long v);
struct node *node_bool(struct arena *a, bool v);
struct node *node_map(struct arena *a);
struct node *node_seq(struct arena *a);

/* Deep copy into arena a; origin, if non-NULL, is stamped on every copied
 * node that has none. */
struct node *node_copy(struct arena *a, const struct node *n, const char *origin);
/* Set origin on n and all descendants (overwriting). */
void node_set_origin(struct node *n, const char *origin);

/* Map access. node_get returns NULL when m is not a map or key missing. */
struct node *node_get(const struct node *m, const char *key);
/* Key comparisons node_get/node_set/node_del made on this thread so far: a
 * cost measure for tests (loading and resolving stay linear in the keys). */
unsigned long node_key_compares(void);
/* Dotted path lookup ("spec.template.spec"); NULL when any step fails. */
struct node *node_path(const struct node *m, const char *dotted);
/* Insert or replace; returns val. m must be a map. */
struct node *node_set(struct arena *a, struct node *m, const char *key, struct node *val);
/* Get a child map, creating it (replacing a null/non-map value). */
/* Append key without looking for an existing one (fresh maps only). */
struct node *node_add(struct arena *a, struct node *m, const char *key, struct node *val);
struct node *node_get_map(struct arena *a, struct node *m, const char *key);
bool node_del(struct node *m, const char *key);
/* Append to a sequence. */
void node_push(struct arena *a, struct node *seq, struct node *val);

/* Scalar helpers (NULL-safe). */
bool node_is_map(const struct node *n);
bool node_is_seq(const struct node *n);
bool node_is_null(const struct node *n); /* NULL pointer or N_NULL */
/* The string of an N_STR node, else NULL. */
const char *node_sval(const struct node *n);
/* Any scalar's text (str/int/bool/float), else NULL. */
const char *node_text(const struct node *n);
/* N_BOOL value; def when absent or not a bool. */
bool node_bval(const struct node *n, bool def);
/* N_INT in [lo, hi] -> 0, else -ERANGE / -EINVAL. */
int node_ival(const struct node *n, long long lo, long long hi, long long *out);
/* "empty": NULL, null, "" string, empty map/seq. */
bool node_empty(const struct node *n);
/* Semantic equality (types and values; map key order ignored). */
bool node_equal(const struct node *a, const struct node *b);

#endif /* VMLET_SPEC_NODE_H */
