// SPDX-License-Identifier: MIT
/*
 * report_pci.c - the probe report's PCI, disk and entropy lines
 * (firmware/abi.h: pci=, disk=, rng=): parsing (bounded: the guest is
 * untrusted), the disks vmlet expects from the config, JSON output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmm/probe/report.h"

/* Copy the next space-separated word of [*v, end) into out (cap bytes). */
static int word(const char **v, const char *end, char *out, size_t cap)
{
	const char *s = *v, *e;

	while (s < end && *s == ' ')
		s++;
	for (e = s; e < end && *e != ' '; e++)
		if ((unsigned char)*e < 0x21 || (unsigned char)*e > 0x7e)
			return -EBADMSG;
	if (e == s || (size_t)(e - s) >= cap)
		return -EBADMSG;
	memcpy(out, s, (size_t)(e - s));
	out[e - s] = 0;
	*v = e;
	return 0;
}

static int num(const char **v, const char *end, int base, uint64_t max, uint64_t *out)
{
	char w[24], *stop;

	if (word(v, end, w, sizeof(w)))
		return -EBADMSG;
	errno = 0;
	*out = strtoull(w, &stop, base);
	return errno || *stop || *out > max ? -EBADMSG : 0;
}

static int parse_pci(struct probe_report *r, const char *v, const char *end)
{
	struct probe_pci_fn *f;
	char ids[16];
	uint64_t c, ven, dev;
	char *colon;

	if (r->n_pci >= PROBE_MAX_PCI)
		return 0;
	f = &r->pci[r->n_pci];
	if (word(&v, end, f->bdf, sizeof(f->bdf)) || word(&v, end, ids, sizeof(ids)) ||
	    num(&v, end, 16, 0xffffff, &c))
		return -EBADMSG;
	colon = strchr(ids, ':');
	if (!colon)
		return -EBADMSG;
	*colon = 0;
	ven = strtoull(ids, NULL, 16);
	dev = strtoull(colon + 1, NULL, 16);
	if (ven > 0xffff || dev > 0xffff)
		return -EBADMSG;
	f->vendor = (uint16_t)ven;
	f->device = (uint16_t)dev;
	f->class_code = (uint32_t)c;
	r->n_pci++;
	return 0;
}

static int parse_disk(struct probe_report *r, const char *v, const char *end)
{
	struct probe_disk *d;
	uint64_t ro;

	if (r->n_disks >= PROBE_MAX_PCI)
		return 0;
	d = &r->disks[r->n_disks];
	if (word(&v, end, d->bdf, sizeof(d->bdf)) || num(&v, end, 10, UINT64_MAX, &d->capacity) ||
	    num(&v, end, 10, 1, &ro) || word(&v, end, d->sha256, sizeof(d->sha256)) ||
	    word(&v, end, d->serial, sizeof(d->serial)))
		return -EBADMSG;
	d->read_only = ro;
	if (!strcmp(d->serial, "-"))
		d->serial[0] = 0;
	r->n_disks++;
	return 0;
}

static int parse_rng(struct probe_report *r, const char *v, const char *end)
{
	struct probe_rng *g;
	uint64_t bytes;
	char ok[8];

	if (r->n_rng >= PROBE_MAX_RNG)
		return 0;
	g = &r->rng[r->n_rng];
	if (word(&v, end, g->bdf, sizeof(g->bdf)) || num(&v, end, 10, UINT32_MAX, &bytes) ||
	    word(&v, end, ok, sizeof(ok)))
		return -EBADMSG;
	g->bytes = (uint32_t)bytes;
	g->ok = !strcmp(ok, "ok");
	r->n_rng++;
	return 0;
}

int probe_report_pci_line(struct probe_report *r, const char *key, const char *v, size_t n)
{
	if (!strcmp(key, "pci"))
		return parse_pci(r, v, v + n);
	if (!strcmp(key, "disk"))
		return parse_disk(r, v, v + n);
	if (!strcmp(key, "rng"))
		return parse_rng(r, v, v + n);
	return 0;
}

void probe_report_pci_expected(const struct vm_config *cfg, struct probe_report *r)
{
	for (unsigned int i = 0; i < cfg->n_disks && r->n_disks < PROBE_MAX_PCI; i++) {
		const struct vm_disk *d = &cfg->disks[i];
		struct probe_disk *e = &r->disks[r->n_disks++];
		struct stat st;

		snprintf(e->name, sizeof(e->name), "%s", d->name ? d->name : "");
		if (d->serial)
			snprintf(e->serial, sizeof(e->serial), "%.20s", d->serial);
		e->read_only = d->read_only || d->source == VM_DISK_CLOUDINIT_NOCLOUD ||
			       d->source == VM_DISK_CLOUDINIT_CONFIGDRIVE;
		if (d->source == VM_DISK_EMPTYDISK)
			e->capacity = d->capacity & ~511ull;
		else if (d->path && d->source != VM_DISK_CONTAINERDISK && !stat(d->path, &st) &&
			 S_ISREG(st.st_mode))
			e->capacity = (uint64_t)st.st_size & ~511ull;
	}
	r->n_rng = cfg->rng ? 1 : 0;
}

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		fprintf(f, (*s == '"' || *s == '\\') ? "\\%c" : "%c", *s);
	fputc('"', f);
}

void probe_report_pci_json(FILE *f, const struct probe_report *r, const struct probe_report *names)
{
	fputs(",\"pci\":[", f);
	for (uint32_t i = 0; i < r->n_pci; i++)
		fprintf(f,
			"%s{\"address\":\"%s\",\"vendor\":\"%04x\",\"device\":\"%04x\",\"class\":"
			"\"%06x\"}",
			i ? "," : "", r->pci[i].bdf, r->pci[i].vendor, r->pci[i].device,
			r->pci[i].class_code);
	fputs("],\"disks\":[", f);
	for (uint32_t i = 0; i < r->n_disks; i++) {
		const struct probe_disk *d = &r->disks[i];
		const char *name = names && i < names->n_disks ? names->disks[i].name : d->name;

		fputs(i ? ",{" : "{", f);
		if (name[0]) {
			fputs("\"name\":", f);
			jstr(f, name);
			fputc(',', f);
		}
		if (d->bdf[0])
			fprintf(f, "\"address\":\"%s\",", d->bdf);
		fprintf(f, "\"capacityBytes\":%" PRIu64 ",\"serial\":", d->capacity);
		jstr(f, d->serial);
		fprintf(f, ",\"readOnly\":%s", d->read_only ? "true" : "false");
		if (d->sha256[0]) {
			fputs(",\"sha256First1MiB\":", f);
			jstr(f, d->sha256);
		}
		fputc('}', f);
	}
	fputs("],\"rng\":[", f);
	for (uint32_t i = 0; i < r->n_rng; i++)
		fprintf(f, "%s{\"address\":\"%s\",\"bytes\":%u,\"ok\":%s}", i ? "," : "",
			r->rng[i].bdf, r->rng[i].bytes, r->rng[i].ok ? "true" : "false");
	fputc(']', f);
}
