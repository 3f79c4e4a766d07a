/* SPDX-License-Identifier: MIT */
/*
 * cmd_resolve.c - `vmlet resolve`: KubeVirt manifests in, the resolved
 * VirtualMachineInstance (or List, or vm_config, or an explanation) out.
 * The command line is read here; spec/ resolves and prints
 * (spec_resolve_print).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "vmm/cmd/cmd.h"

static void usage(FILE *f)
{
	fputs("usage: vmlet resolve -f FILE|DIR|- [-f ...] [--vm NAME] [-o json|yaml|config]\n"
	      "                     [--list] [--explain] [--volume NAME=PATH] [--disk-root DIR]\n"
	      "\n"
	      "Resolve a KubeVirt VirtualMachine with its instancetype, preference and presets\n"
	      "exactly as KubeVirt would, and print the VirtualMachineInstance it creates.\n"
	      "\n"
	      "  -f, --file PATH     manifest file, directory (*.yaml|*.yml|*.json) or - for\n"
	      "                      stdin; repeatable; all inputs form the \"cluster\".\n"
	      "                      Without -f the manifest text in $VMLET_MANIFEST is used.\n"
	      "      --vm NAME       the VirtualMachine to resolve (default: the only one)\n"
	      "  -o, --output FMT    json (default), yaml, or config: the vm_config the VMM runs\n"
	      "      --list          a v1 List: the VM after admission and sync, the VMI and the\n"
	      "                      ControllerRevisions captured\n"
	      "      --explain       which object set every resolved field, and where\n"
	      "      --volume N=PATH host path backing volume N (-o config)\n"
	      "      --disk-root DIR containerDisk image root (-o config; "
	      "default " SPEC_DEFAULT_DISK_ROOT ")\n"
	      "\n"
	      "Errors: FILE:LINE:COL: FIELD.PATH: message on stderr, exit status 1;\n"
	      "usage errors exit 2.\n",
	      f);
}

struct args {
	const char **files;
	unsigned int n_files;
	const char **volumes;
	unsigned int n_volumes;
	const char *vm, *disk_root;
	struct spec_print_options p;
};

static int parse_output(struct args *a, const char *arg)
{
	if (strcmp(arg, "json") == 0)
		a->p.format = SPEC_FORMAT_JSON;
	else if (strcmp(arg, "yaml") == 0)
		a->p.format = SPEC_FORMAT_YAML;
	else if (strcmp(arg, "config") == 0)
		a->p.format = SPEC_FORMAT_CONFIG;
	else {
		fprintf(stderr,
			"vmlet resolve: unknown output format '%s' (json, yaml or config)\n", arg);
		return -EINVAL;
	}
	return 0;
}

/* One option c (getopt's answer) of argv: 0, 1 (--help: done), -EINVAL. */
static int parse_option(struct args *a, int c, char **argv)
{
	char *end;

	switch (c) {
	case 'f':
		a->files[a->n_files++] = optarg;
		return 0;
	case 'v':
		a->vm = optarg;
		return 0;
	case 'o':
		return parse_output(a, optarg);
	case 'l':
		a->p.list = true;
		return 0;
	case 'e':
		a->p.explain = true;
		return 0;
	case 'V':
		if (!strchr(optarg, '=') || optarg[0] == '=') {
			fprintf(stderr, "vmlet resolve: --volume wants NAME=PATH, got '%s'\n",
				optarg);
			return -EINVAL;
		}
		a->volumes[a->n_volumes++] = optarg;
		return 0;
	case 'D':
		a->disk_root = optarg;
		return 0;
	case 'B':
		a->p.bench = strtol(optarg, &end, 10);
		if (*end || a->p.bench <= 0) {
			fprintf(stderr, "vmlet resolve: --bench wants a count\n");
			return -EINVAL;
		}
		return 0;
	case 'h':
		usage(stdout);
		return 1;
	case ':':
		fprintf(stderr, "vmlet resolve: option '%s' needs an argument\n", argv[optind - 1]);
		return -EINVAL;
	default:
		fprintf(stderr, "vmlet resolve: unknown option '%s'\n", argv[optind - 1]);
		return -EINVAL;
	}
}

static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
	    {"file", required_argument, NULL, 'f'},
	    {"vm", required_argument, NULL, 'v'},
	    {"output", required_argument, NULL, 'o'},
	    {"list", no_argument, NULL, 'l'},
	    {"explain", no_argument, NULL, 'e'},
	    {"volume", required_argument, NULL, 'V'},
	    {"disk-root", required_argument, NULL, 'D'},
	    {"bench", required_argument, NULL, 'B'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, r;

	a->files = calloc((size_t)argc, sizeof(*a->files));
	a->volumes = calloc((size_t)argc, sizeof(*a->volumes));
	if (!a->files || !a->volumes)
		return -ENOMEM;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", opts, NULL)) != -1)
		if ((r = parse_option(a, c, argv)))
			return r;
	if (optind < argc) {
		fprintf(stderr, "vmlet resolve: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!a->n_files && !getenv("VMLET_MANIFEST")) {
		fprintf(stderr,
			"vmlet resolve: no input: give -f FILE|DIR|- or set VMLET_MANIFEST\n");
		return -EINVAL;
	}
	return 0;
}

int cmd_resolve(int argc, char **argv)
{
	struct args a = {0};
	struct spec_options o = {0};
	int ret;

	ret = parse_args(argc, argv, &a);
	if (ret) {
		free(a.files);
		free(a.volumes);
		if (ret == 1)
			return VMLET_EXIT_OK;
		if (ret == -EINVAL)
			usage(stderr);
		return ret == -EINVAL ? VMLET_EXIT_USAGE : VMLET_EXIT_ERROR;
	}
	o.files = a.files;
	o.n_files = a.n_files;
	o.vm_name = a.vm;
	o.volume_overrides = a.volumes;
	o.n_volume_overrides = a.n_volumes;
	o.disk_root = a.disk_root;
	ret = spec_resolve_print(&o, &a.p, stdout);
	free(a.files);
	free(a.volumes);
	return ret ? VMLET_EXIT_ERROR : VMLET_EXIT_OK;
}
