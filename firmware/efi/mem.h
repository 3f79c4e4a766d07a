/* SPDX-License-Identifier: MIT */
/*
 * mem.h - the UEFI memory map and the services on it: AllocatePages,
 * FreePages, GetMemoryMap, AllocatePool, FreePool. One sorted array of
 * non-overlapping descriptors (adjacent equal ones merged); every change
 * bumps the map key that ExitBootServices checks. Pure bookkeeping plus
 * pool headers written into the pool pages: host-testable on a malloc'd
 * arena.
 */
#ifndef FW_EFI_MEM_H
#define FW_EFI_MEM_H

#include "firmware/efi/efi.h"

#define MEM_MAX_DESC   192
#define MEM_POOL_SLOTS 8

struct pool_free;

struct efi_mem {
	struct efi_memory_descriptor d[MEM_MAX_DESC];
	unsigned int n;
	uint64_t key;	/* changes with every change of the map */
	uint64_t limit; /* allocations end below this address (the identity map) */
	struct {
		uint32_t type;
		bool used;
		struct pool_free *free;
	} pool[MEM_POOL_SLOTS];
};

void mem_init(struct efi_mem *m, uint64_t limit);

/* Describe [start, start + bytes) as type, replacing what was there.
 * Conventional memory is shrunk to whole pages, anything else grown to
 * cover whole pages. EFI_SUCCESS or EFI_OUT_OF_RESOURCES. */
efi_status mem_set(struct efi_mem *m, uint64_t start, uint64_t bytes, uint32_t type);

/* The type of the page at addr, or EfiMaxMemoryType when not described. */
uint32_t mem_type_at(const struct efi_mem *m, uint64_t addr);

efi_status mem_allocate_pages(struct efi_mem *m, uint32_t how, uint32_t type, uint64_t pages,
			      uint64_t *addr);
efi_status mem_free_pages(struct efi_mem *m, uint64_t addr, uint64_t pages);
efi_status mem_get_map(struct efi_mem *m, uint64_t *size, struct efi_memory_descriptor *map,
		       uint64_t *key, uint64_t *desc_size, uint32_t *desc_ver);
efi_status mem_pool_alloc(struct efi_mem *m, uint32_t type, uint64_t size, void **out);
efi_status mem_pool_free(struct efi_mem *m, void *p);

#endif /* FW_EFI_MEM_H */
