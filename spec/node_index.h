/* SPDX-License-Identifier: MIT */
/*
 * node_index.h - the hash index of a large map's keys (node.c's only
 * helper): node_get() and node_set() on a map of n keys cost O(1) on
 * average instead of O(n), so loading and resolving a manifest stays
 * linear in its size (a map of 300,000 keys was quadratic: minutes).
 *
 * The hash is SipHash-1-3 keyed with random bytes drawn once per process,
 * so a manifest cannot choose keys that collide. An index describes the
 * map's kv array and count when it was last updated; node_index_find()
 * returns NODE_INDEX_STALE when they no longer match (a map whose kv was
 * written directly), and the caller then scans the keys.
 */
#ifndef VMLET_SPEC_NODE_INDEX_H
#define VMLET_SPEC_NODE_INDEX_H

#include "spec/node.h"

/* Maps with fewer keys are scanned: an index would not pay. */
#define NODE_INDEX_MIN	 16u
#define NODE_INDEX_NONE	 0xffffffffu /* no such key */
#define NODE_INDEX_STALE 0xfffffffeu /* no usable index: scan */

/* Key comparisons made on this thread (node_key_compares()). */
extern __thread unsigned long node_index_compares;

/* The position of key in m->kv, NODE_INDEX_NONE, or NODE_INDEX_STALE. */
unsigned int node_index_find(const struct node *m, const char *key);
/* After m->kv[m->n - 1] was appended to old_kv's entries (m->kv is
 * old_kv, or a larger copy of it): index it, building or growing the
 * index as needed. */
void node_index_added(struct arena *a, struct node *m, const struct node_kv *old_kv);
/* After any other change of m's keys (a delete, a copy): index them all
 * again, or drop the index when m is small. With a NULL arena (a delete)
 * the index is dropped when its table is too small to reuse. */
void node_index_rebuild(struct arena *a, struct node *m);

#endif /* VMLET_SPEC_NODE_INDEX_H */
