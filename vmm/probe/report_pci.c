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

#include "vmm/util/json_out.h"
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

static int pci_fn_json(struct json_object *a, const struct probe_pci_fn *p)
{
	struct json_object *o = json_object_new_object();
	char hex[3][16];
	int e;

	snprintf(hex[0], sizeof(hex[0]), "%04x", p->vendor);
	snprintf(hex[1], sizeof(hex[1]), "%04x", p->device);
	snprintf(hex[2], sizeof(hex[2]), "%06x", p->class_code);
	e = json_out_add_str(o, "address", p->bdf);
	e = e ?: json_out_add_str(o, "vendor", hex[0]);
	e = e ?: json_out_add_str(o, "device", hex[1]);
	e = e ?: json_out_add_str(o, "class", hex[2]);
	if (e) {
		json_object_put(o);
		return e;
	}
	return json_out_append(a, o);
}

static int disk_json(struct json_object *a, const struct probe_disk *d, const char *name)
{
	struct json_object *o = json_object_new_object();
	int e = 0;

	if (name[0])
		e = json_out_add_str(o, "name", name);
	if (d->bdf[0])
		e = e ?: json_out_add_str(o, "address", d->bdf);
	e = e ?: json_out_add_u64(o, "capacityBytes", d->capacity);
	e = e ?: json_out_add_str(o, "serial", d->serial);
	e = e ?: json_out_add_bool(o, "readOnly", d->read_only);
	if (d->sha256[0])
		e = e ?: json_out_add_str(o, "sha256First1MiB", d->sha256);
	if (e) {
		json_object_put(o);
		return e;
	}
	return json_out_append(a, o);
}

static int rng_json(struct json_object *a, const struct probe_rng *g)
{
	struct json_object *o = json_object_new_object();
	int e = json_out_add_str(o, "address", g->bdf);

	e = e ?: json_out_add_u64(o, "bytes", g->bytes);
	e = e ?: json_out_add_bool(o, "ok", g->ok);
	if (e) {
		json_object_put(o);
		return e;
	}
	return json_out_append(a, o);
}

int probe_report_pci_json(struct json_object *o, const struct probe_report *r,
			  const struct probe_report *names)
{
	struct json_object *pci = json_object_new_array(), *disks = json_object_new_array(),
			   *rng = json_object_new_array();
	int e = pci && disks && rng ? 0 : -ENOMEM;

	for (uint32_t i = 0; !e && i < r->n_pci; i++)
		e = pci_fn_json(pci, &r->pci[i]);
	for (uint32_t i = 0; !e && i < r->n_disks; i++)
		e = disk_json(disks, &r->disks[i],
			      names && i < names->n_disks ? names->disks[i].name
							  : r->disks[i].name);
	for (uint32_t i = 0; !e && i < r->n_rng; i++)
		e = rng_json(rng, &r->rng[i]);
	if (e) {
		json_object_put(pci);
		json_object_put(disks);
		json_object_put(rng);
		return e;
	}
	e = json_out_add(o, "pci", pci);
	e = e ?: json_out_add(o, "disks", disks);
	return e ?: json_out_add(o, "rng", rng);
}
