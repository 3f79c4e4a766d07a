// SPDX-License-Identifier: MIT
/*
 * guest_mem.c - guest RAM regions and the checked accessor (guest_mem.h).
 */
#include "vmm/guest_mem.h"

void *guest_mem_ptr(const struct guest_mem *m, gpa_t gpa, uint64_t len)
{
	if (!m)
		return NULL;
	for (unsigned int i = 0; i < m->n && i < GUEST_MEM_MAX_REGIONS; i++) {
		const struct guest_mem_region *r = &m->r[i];

		/* [gpa, gpa+len) inside [r->gpa, r->gpa + r->size), written
		 * with subtractions only so that nothing can wrap */
		if (gpa < r->gpa || gpa - r->gpa > r->size || len > r->size - (gpa - r->gpa))
			continue;
		return r->host + (gpa - r->gpa);
	}
	return NULL;
}
