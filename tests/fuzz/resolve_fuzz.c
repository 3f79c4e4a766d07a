/* SPDX-License-Identifier: MIT */
/*
 * resolve_fuzz.c - libFuzzer target over the whole untrusted-input path of
 * `vmlet resolve`: YAML/JSON parsing, classification, resolution, the
 * JSON/YAML/explain serializers and the vm_config mapping. Any crash,
 * sanitizer report, leak or hang is a bug. Built and run by scripts/fuzz.sh.
 *
 * Inputs up to 1 MiB (the default cap, 16 KiB, hid costs that grow with
 * the input: a map of 80,000 keys, 1.1 MB, took 40 s to resolve while
 * loading was quadratic), and a seed of 20,000 labels (resolve_fuzz.seeds.sh):
 * with fuzz.sh's 10 s timeout a quadratic path on a large input is a hang.
 *
 * FUZZ_ARGS: -max_len=1048576
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/config.h"
#include "spec/emit.h"
#include "spec/resolve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session s;
	struct vm_config cfg;
	FILE *devnull;

	session_init(&s);
	if (cluster_add_text(&s.cl, "fuzz.yaml", (const char *)data, size) == 0 &&
	    session_resolve(&s, NULL) == 0) {
		devnull = fopen("/dev/null", "w");
		if (devnull) {
			emit_json(devnull, session_list(&s));
			emit_yaml(devnull, s.r.vmi);
			emit_explain(devnull, &s.r);
			vm_config_init(&cfg);
			if (config_from_resolution(&s.r, NULL, &cfg) == 0)
				config_emit_json(devnull, &cfg);
			vm_config_release(&cfg);
			fclose(devnull);
		}
	}
	session_free(&s);
	return 0;
}
