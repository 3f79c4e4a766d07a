/* SPDX-License-Identifier: MIT */
/* Placeholder: spec_resolve_config lands with the resolver. */
#include <errno.h>
#include <stdio.h>

#include "spec/spec.h"

int spec_resolve_config(const struct spec_options *o, struct vm_config *cfg)
{
	(void)o;
	vm_config_init(cfg);
	fprintf(stderr, "vmlet: spec: resolution is not implemented yet\n");
	return -ENOSYS;
}
