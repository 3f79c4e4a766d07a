/* SPDX-License-Identifier: MIT */
/*
 * cli.c - `vmlet resolve`: KubeVirt manifests in, the resolved
 * VirtualMachineInstance (or List, or vm_config, or an explanation) out.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spec/config.h"
#include "spec/emit.h"
#include "vmm/cmd.h"

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
	enum { OUT_JSON, OUT_YAML, OUT_CONFIG } out;
	bool list, explain;
	long bench;
};

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
	char *end;
	int c;

	a->files = calloc((size_t)argc, sizeof(*a->files));
	a->volumes = calloc((size_t)argc, sizeof(*a->volumes));
	if (!a->files || !a->volumes)
		return -ENOMEM;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			a->files[a->n_files++] = optarg;
			break;
		case 'v':
			a->vm = optarg;
			break;
		case 'o':
			if (strcmp(optarg, "json") == 0)
				a->out = OUT_JSON;
			else if (strcmp(optarg, "yaml") == 0)
				a->out = OUT_YAML;
			else if (strcmp(optarg, "config") == 0)
				a->out = OUT_CONFIG;
			else {
				fprintf(stderr,
					"vmlet resolve: unknown output format '%s' "
					"(json, yaml or config)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'l':
			a->list = true;
			break;
		case 'e':
			a->explain = true;
			break;
		case 'V':
			if (!strchr(optarg, '=') || optarg[0] == '=') {
				fprintf(stderr,
					"vmlet resolve: --volume wants NAME=PATH, got '%s'\n",
					optarg);
				return -EINVAL;
			}
			a->volumes[a->n_volumes++] = optarg;
			break;
		case 'D':
			a->disk_root = optarg;
			break;
		case 'B':
			a->bench = strtol(optarg, &end, 10);
			if (*end || a->bench <= 0) {
				fprintf(stderr, "vmlet resolve: --bench wants a count\n");
				return -EINVAL;
			}
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			fprintf(stderr, "vmlet resolve: option '%s' needs an argument\n",
				argv[optind - 1]);
			return -EINVAL;
		default:
			fprintf(stderr, "vmlet resolve: unknown option '%s'\n", argv[optind - 1]);
			return -EINVAL;
		}
	}
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --bench N: N resolutions in this process (parse once / parse each time) */
static int bench(struct session *s, const struct args *a)
{
	double t0, t1, t2;
	long i;
	struct session s2;
	int ret = 0;

	t0 = now();
	for (i = 0; i < a->bench && !ret; i++)
		ret = session_resolve(s, a->vm);
	t1 = now();
	for (i = 0; i < a->bench && !ret; i++) {
		session_init(&s2);
		ret = session_load(&s2, a->files, a->n_files, NULL);
		if (!ret)
			ret = session_resolve(&s2, a->vm);
		session_free(&s2);
	}
	t2 = now();
	if (ret)
		return ret;
	printf("resolve_only_per_s %.0f\nparse_and_resolve_per_s %.0f\n",
	       (double)a->bench / (t1 - t0), (double)a->bench / (t2 - t1));
	return 0;
}

static int output(struct session *s, const struct args *a)
{
	struct spec_options o = {
	    .volume_overrides = a->volumes,
	    .n_volume_overrides = a->n_volumes,
	    .disk_root = a->disk_root,
	};
	struct vm_config cfg;
	const struct node *doc;
	int ret;

	if (a->explain)
		return emit_explain(stdout, &s->r);
	if (a->out == OUT_CONFIG) {
		vm_config_init(&cfg);
		ret = config_from_resolution(&s->r, &o, &cfg);
		if (ret == 0)
			ret = config_emit_json(stdout, &cfg);
		vm_config_release(&cfg);
		return ret;
	}
	doc = a->list ? session_list(s) : s->r.vmi;
	return a->out == OUT_YAML ? emit_yaml(stdout, doc) : emit_json(stdout, doc);
}

int cmd_resolve(int argc, char **argv)
{
	struct args a = {0};
	struct session s;
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
	session_init(&s);
	ret = session_load(&s, a.files, a.n_files, NULL);
	if (!ret)
		ret = session_resolve(&s, a.vm);
	if (!ret && a.bench)
		ret = bench(&s, &a);
	else if (!ret) {
		/* validate -o config before printing anything */
		if (a.out == OUT_CONFIG && !a.explain) {
			struct vm_config cfg;
			struct spec_options o = {.volume_overrides = a.volumes,
						 .n_volume_overrides = a.n_volumes,
						 .disk_root = a.disk_root};

			vm_config_init(&cfg);
			ret = config_from_resolution(&s.r, &o, &cfg);
			vm_config_release(&cfg);
		}
		session_report(&s, stderr);
		if (!ret)
			ret = output(&s, &a);
		if (!ret && fflush(stdout))
			ret = -EIO;
	} else {
		session_report(&s, stderr);
	}
	session_free(&s);
	free(a.files);
	free(a.volumes);
	return ret ? VMLET_EXIT_ERROR : VMLET_EXIT_OK;
}
