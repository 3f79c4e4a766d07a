// SPDX-License-Identifier: MIT
/* mem.c - UEFI memory map, page allocator and pool allocator. */
#include "firmware/efi/mem.h"

#define PAGE	   EFI_PAGE_SIZE
#define POOL_MAGIC 0x6c6f6f70u /* "pool" */
#define POOL_CHUNK (16 * PAGE) /* small pools grow by this much */
#define POOL_BIG   (4 * PAGE)  /* and bigger ones get pages of their own */

struct pool_hdr {
	uint32_t magic, slot; /* slot MEM_POOL_SLOTS: own pages */
	uint64_t size;	      /* bytes including this header */
};

struct pool_free {
	uint64_t size;
	struct pool_free *next;
};

static uint64_t md_end(const struct efi_memory_descriptor *d)
{
	return d->phys_start + d->n_pages * PAGE;
}

static uint64_t type_attr(uint32_t type)
{
	switch (type) {
	case EfiRuntimeServicesCode:
	case EfiRuntimeServicesData:
		return EFI_MEMORY_WB | EFI_MEMORY_RUNTIME;
	case EfiMemoryMappedIO:
		return EFI_MEMORY_UC | EFI_MEMORY_RUNTIME;
	default:
		return EFI_MEMORY_WB;
	}
}

void mem_init(struct efi_mem *m, uint64_t limit)
{
	memset(m, 0, sizeof(*m));
	m->limit = limit & ~(PAGE - 1);
}

static void md_remove(struct efi_mem *m, unsigned int i)
{
	memmove(&m->d[i], &m->d[i + 1], (m->n - i - 1) * sizeof(m->d[0]));
	m->n--;
}

static void md_insert(struct efi_mem *m, unsigned int i, uint64_t start, uint64_t end,
		      uint32_t type)
{
	memmove(&m->d[i + 1], &m->d[i], (m->n - i) * sizeof(m->d[0]));
	m->d[i] = (struct efi_memory_descriptor){
	    .type = type,
	    .phys_start = start,
	    .n_pages = (end - start) / PAGE,
	    .attribute = type_attr(type),
	};
	m->n++;
}

/* Merge d[i] with equal neighbours that touch it. */
static void md_merge(struct efi_mem *m, unsigned int i)
{
	if (i + 1 < m->n && m->d[i + 1].type == m->d[i].type &&
	    m->d[i + 1].phys_start == md_end(&m->d[i])) {
		m->d[i].n_pages += m->d[i + 1].n_pages;
		md_remove(m, i + 1);
	}
	if (i > 0 && m->d[i - 1].type == m->d[i].type &&
	    md_end(&m->d[i - 1]) == m->d[i].phys_start) {
		m->d[i - 1].n_pages += m->d[i].n_pages;
		md_remove(m, i);
	}
}

static efi_status mem_set_pages(struct efi_mem *m, uint64_t start, uint64_t end, uint32_t type)
{
	unsigned int i = 0;

	if (start >= end)
		return EFI_SUCCESS;
	/* worst case: one split into head + new + tail */
	if (m->n + 2 > MEM_MAX_DESC)
		return EFI_OUT_OF_RESOURCES;
	while (i < m->n && md_end(&m->d[i]) <= start)
		i++;
	/* i: first descriptor ending after start; trim everything overlapping */
	while (i < m->n && m->d[i].phys_start < end) {
		struct efi_memory_descriptor d = m->d[i];

		md_remove(m, i);
		if (d.phys_start < start)
			md_insert(m, i++, d.phys_start, start, d.type);
		if (md_end(&d) > end) {
			md_insert(m, i, end, md_end(&d), d.type);
			break;
		}
	}
	md_insert(m, i, start, end, type);
	md_merge(m, i);
	m->key++;
	return EFI_SUCCESS;
}

efi_status mem_set(struct efi_mem *m, uint64_t start, uint64_t bytes, uint32_t type)
{
	uint64_t end = start + bytes;

	if (end < start)
		end = UINT64_MAX & ~(PAGE - 1);
	if (type == EfiConventionalMemory) {
		start = (start + PAGE - 1) & ~(PAGE - 1);
		end &= ~(PAGE - 1);
	} else {
		start &= ~(PAGE - 1);
		end = (end + PAGE - 1) & ~(PAGE - 1);
	}
	return mem_set_pages(m, start, end, type);
}

uint32_t mem_type_at(const struct efi_mem *m, uint64_t addr)
{
	for (unsigned int i = 0; i < m->n; i++)
		if (addr >= m->d[i].phys_start && addr < md_end(&m->d[i]))
			return m->d[i].type;
	return EfiMaxMemoryType;
}

/* Every page of [start, end) is described, and free (conventional) or
 * allocated (a type AllocatePages hands out), as wanted. */
static bool range_is(const struct efi_mem *m, uint64_t start, uint64_t end, bool free_wanted)
{
	uint64_t at = start;

	for (unsigned int i = 0; i < m->n && at < end; i++) {
		const struct efi_memory_descriptor *d = &m->d[i];

		if (md_end(d) <= at)
			continue;
		if (d->phys_start > at)
			return false;
		bool is_free = d->type == EfiConventionalMemory;
		bool allocated = (d->type >= EfiLoaderCode && d->type <= EfiRuntimeServicesData) ||
				 d->type == EfiACPIReclaimMemory || d->type == EfiACPIMemoryNVS ||
				 d->type >= 0x70000000u;

		if (free_wanted ? !is_free : !allocated)
			return false;
		at = md_end(d);
	}
	return at >= end;
}

static bool valid_type(uint32_t type)
{
	return (type < EfiMaxMemoryType && type != EfiConventionalMemory &&
		type != EfiPersistentMemory && type != EfiUnacceptedMemoryType) ||
	       type >= 0x70000000u;
}

efi_status mem_allocate_pages(struct efi_mem *m, uint32_t how, uint32_t type, uint64_t pages,
			      uint64_t *addr)
{
	uint64_t max = m->limit, bytes = pages * PAGE;

	if (!addr || !valid_type(type) || how > AllocateAddress)
		return EFI_INVALID_PARAMETER;
	if (!pages || pages > m->limit / PAGE)
		return pages ? EFI_OUT_OF_RESOURCES : EFI_INVALID_PARAMETER;
	if (how == AllocateAddress) {
		uint64_t a = *addr;

		if (a & (PAGE - 1))
			return EFI_INVALID_PARAMETER;
		if (a + bytes < a || !range_is(m, a, a + bytes, true))
			return EFI_NOT_FOUND;
		return mem_set_pages(m, a, a + bytes, type);
	}
	if (how == AllocateMaxAddress && *addr < max)
		max = (*addr + 1) & ~(PAGE - 1);
	/* top-down: keeps low memory for images that want fixed addresses */
	for (unsigned int i = m->n; i-- > 0;) {
		const struct efi_memory_descriptor *d = &m->d[i];
		uint64_t top = md_end(d) < max ? md_end(d) : max;

		if (d->type != EfiConventionalMemory || top < d->phys_start + bytes)
			continue;
		uint64_t a = top - bytes;

		if (a == 0)
			continue; /* never hand out page 0: NULL */
		efi_status st = mem_set_pages(m, a, top, type);

		if (st == EFI_SUCCESS)
			*addr = a;
		return st;
	}
	return EFI_OUT_OF_RESOURCES;
}

efi_status mem_free_pages(struct efi_mem *m, uint64_t addr, uint64_t pages)
{
	uint64_t end = addr + pages * PAGE;

	if (addr & (PAGE - 1))
		return EFI_INVALID_PARAMETER;
	if (!pages || end < addr || !range_is(m, addr, end, false))
		return EFI_NOT_FOUND;
	return mem_set_pages(m, addr, end, EfiConventionalMemory);
}

efi_status mem_get_map(struct efi_mem *m, uint64_t *size, struct efi_memory_descriptor *map,
		       uint64_t *key, uint64_t *desc_size, uint32_t *desc_ver)
{
	uint64_t need = m->n * sizeof(m->d[0]);

	if (!size)
		return EFI_INVALID_PARAMETER;
	if (desc_size)
		*desc_size = sizeof(m->d[0]);
	if (desc_ver)
		*desc_ver = EFI_MEMDESC_VERSION;
	if (*size < need) {
		/* room for the descriptors an allocation of the buffer adds */
		*size = need + 2 * sizeof(m->d[0]);
		return EFI_BUFFER_TOO_SMALL;
	}
	if (!map)
		return EFI_INVALID_PARAMETER;
	memcpy(map, m->d, need);
	*size = need;
	if (key)
		*key = m->key;
	return EFI_SUCCESS;
}

/* ---- pool ----------------------------------------------------------------- */

static int pool_slot(struct efi_mem *m, uint32_t type)
{
	for (int i = 0; i < MEM_POOL_SLOTS; i++)
		if (m->pool[i].used && m->pool[i].type == type)
			return i;
	for (int i = 0; i < MEM_POOL_SLOTS; i++)
		if (!m->pool[i].used) {
			m->pool[i].used = true;
			m->pool[i].type = type;
			return i;
		}
	return -1;
}

efi_status mem_pool_alloc(struct efi_mem *m, uint32_t type, uint64_t size, void **out)
{
	uint64_t need = (size + sizeof(struct pool_hdr) + 15) & ~15ull;
	struct pool_hdr *h;
	efi_status st;
	uint64_t a;

	if (!out || !valid_type(type) || need < size)
		return EFI_INVALID_PARAMETER;
	int slot = need >= POOL_BIG ? MEM_POOL_SLOTS : pool_slot(m, type);

	if (slot == MEM_POOL_SLOTS || slot < 0) {
		st = mem_allocate_pages(m, AllocateAnyPages, type, (need + PAGE - 1) / PAGE, &a);
		if (st)
			return st;
		h = (struct pool_hdr *)(uintptr_t)a;
		*h = (struct pool_hdr){POOL_MAGIC, MEM_POOL_SLOTS, need};
		*out = h + 1;
		return EFI_SUCCESS;
	}
	struct pool_free **pp = &m->pool[slot].free;

	while (*pp && (*pp)->size < need)
		pp = &(*pp)->next;
	if (!*pp) {
		st = mem_allocate_pages(m, AllocateAnyPages, type, POOL_CHUNK / PAGE, &a);
		if (st)
			return st;
		struct pool_free *f = (struct pool_free *)(uintptr_t)a;

		f->size = POOL_CHUNK;
		f->next = m->pool[slot].free;
		m->pool[slot].free = f;
		pp = &m->pool[slot].free;
	}
	struct pool_free *f = *pp;

	if (f->size - need >= 64) { /* split: the tail stays free */
		struct pool_free *rest = (struct pool_free *)((uint8_t *)f + need);

		rest->size = f->size - need;
		rest->next = f->next;
		*pp = rest;
	} else {
		need = f->size;
		*pp = f->next;
	}
	h = (struct pool_hdr *)f;
	*h = (struct pool_hdr){POOL_MAGIC, (uint32_t)slot, need};
	*out = h + 1;
	return EFI_SUCCESS;
}

efi_status mem_pool_free(struct efi_mem *m, void *p)
{
	struct pool_hdr *h = (struct pool_hdr *)p - 1;

	if (!p || ((uintptr_t)p & 15) || h->magic != POOL_MAGIC || h->slot > MEM_POOL_SLOTS)
		return EFI_INVALID_PARAMETER;
	h->magic = 0;
	if (h->slot == MEM_POOL_SLOTS)
		return mem_free_pages(m, (uintptr_t)h, (h->size + PAGE - 1) / PAGE);
	struct pool_free *f = (struct pool_free *)h;
	uint64_t size = h->size;

	f->size = size;
	f->next = m->pool[h->slot].free;
	m->pool[h->slot].free = f;
	return EFI_SUCCESS;
}
