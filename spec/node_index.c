/* SPDX-License-Identifier: MIT */
/*
 * node_index.c - open-addressing hash index of a map's keys (node_index.h).
 * Slots hold a kv position + 1 (0 = empty); the table is kept at most
 * half full and doubled past that, in the map's arena (old tables stay
 * there: the total is still linear in the keys).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "spec/node_index.h"

struct node_index {
	const struct node_kv *kv; /* the array indexed */
	unsigned int n;		  /* its entries indexed */
	unsigned int mask;	  /* slots - 1 */
	uint32_t slot[];
};

__thread unsigned long node_index_compares;
static uint64_t index_key[2];
static pthread_once_t index_key_once = PTHREAD_ONCE_INIT;

static void index_key_init(void)
{
	struct timespec ts;

	if (getrandom(index_key, sizeof(index_key), GRND_NONBLOCK) == sizeof(index_key))
		return;
	/* no entropy yet (early boot): worse, never wrong */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	index_key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uintptr_t)&ts;
	index_key[1] = (uint64_t)ts.tv_sec ^ (uintptr_t)index_key;
}

static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND                                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = rotl(v1, 13) ^ v0;                                                            \
		v0 = rotl(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = rotl(v3, 16) ^ v2;                                                            \
		v0 += v3;                                                                          \
		v3 = rotl(v3, 21) ^ v0;                                                            \
		v2 += v1;                                                                          \
		v1 = rotl(v1, 17) ^ v2;                                                            \
		v2 = rotl(v2, 32);                                                                 \
	} while (0)

/* SipHash-1-3 of s (Aumasson and Bernstein, "SipHash: a fast short-input
 * PRF"), keyed with index_key. */
static uint64_t index_hash(const char *s)
{
	size_t len = strlen(s), i;
	uint64_t v0 = index_key[0] ^ 0x736f6d6570736575ull,
		 v1 = index_key[1] ^ 0x646f72616e646f6dull;
	uint64_t v2 = index_key[0] ^ 0x6c7967656e657261ull,
		 v3 = index_key[1] ^ 0x7465646279746573ull;
	uint64_t m;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, s + i, 8); /* little-endian hosts only (x86_64) */
		v3 ^= m;
		SIPROUND;
		v0 ^= m;
	}
	m = (uint64_t)len << 56;
	for (size_t j = 0; i + j < len; j++)
		m |= (uint64_t)(unsigned char)s[i + j] << (8 * j);
	v3 ^= m;
	SIPROUND;
	v0 ^= m;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

static bool index_usable(const struct node *m)
{
	return m->idx && m->idx->kv == m->kv && m->idx->n == m->n;
}

unsigned int node_index_find(const struct node *m, const char *key)
{
	const struct node_index *x = m->idx;
	unsigned int i;
	uint32_t s;

	if (!index_usable(m))
		return NODE_INDEX_STALE;
	for (i = (unsigned int)index_hash(key) & x->mask; (s = x->slot[i]); i = (i + 1) & x->mask) {
		node_index_compares++;
		if (strcmp(m->kv[s - 1].key, key) == 0)
			return s - 1;
	}
	return NODE_INDEX_NONE;
}

static void index_put(struct node_index *x, const struct node_kv *kv, unsigned int pos)
{
	unsigned int i = (unsigned int)index_hash(kv[pos].key) & x->mask;

	while (x->slot[i])
		i = (i + 1) & x->mask;
	x->slot[i] = pos + 1;
}

void node_index_rebuild(struct arena *a, struct node *m)
{
	struct node_index *x = m->idx;
	unsigned int slots = 64, i;

	pthread_once(&index_key_once, index_key_init);
	if (m->type != N_MAP || m->n < NODE_INDEX_MIN) {
		m->idx = NULL;
		return;
	}
	while (slots < 2 * m->n)
		slots *= 2;
	if (x && x->mask + 1 >= slots) {
		memset(x->slot, 0, (x->mask + 1) * sizeof(x->slot[0]));
	} else if (!a) { /* node_del() of a map whose kv was written directly */
		m->idx = NULL;
		return;
	} else {
		x = arena_alloc(a, sizeof(*x) + slots * sizeof(x->slot[0]));
		x->mask = slots - 1;
	}
	for (i = 0; i < m->n; i++)
		index_put(x, m->kv, i);
	x->kv = m->kv;
	x->n = m->n;
	m->idx = x;
}

void node_index_added(struct arena *a, struct node *m, const struct node_kv *old_kv)
{
	struct node_index *x = m->idx;

	if (m->n < NODE_INDEX_MIN)
		return;
	if (!x || x->kv != old_kv || x->n != m->n - 1 || 2 * m->n > x->mask + 1) {
		node_index_rebuild(a, m);
		return;
	}
	x->kv = m->kv;
	index_put(x, m->kv, m->n - 1);
	x->n = m->n;
}
