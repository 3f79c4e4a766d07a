/* SPDX-License-Identifier: MIT */
/*
 * admit_disks.c - KubeVirt's disk rules (spec/admit.h): ValidateDisks of
 * pkg/storage/admitters/disks.go, and validateBootOrder of
 * vmi-create-admitter.go (every disk has its volume, lun only on a claim,
 * downwardMetrics on a virtio disk, boot orders unique across disks and
 * interfaces). Messages are KubeVirt's, its own field paths included in the
 * text (some of them malformed in KubeVirt: kept verbatim); the path
 * printed before the message is the field at fault.
 */
#include <stdlib.h>
#include <string.h>

#include "spec/admit.h"

#define MIN_BLOCK 512u
#define MAX_BLOCK 2097152u

static const char *const targets[] = {"disk", "lun", "cdrom"};

/* The target set on d ("disk", "lun", "cdrom"; "" for none) and its node. */
static const char *disk_target(const struct node *d, const struct node **t)
{
	unsigned int i;

	for (i = 0; i < 3; i++) {
		*t = node_get(d, targets[i]);
		if (!node_is_null(*t))
			return targets[i];
	}
	*t = NULL;
	return "";
}

static bool uval(const struct node *n, long long *v)
{
	return n && node_ival(n, -2147483648LL, 4294967295LL, v) == 0;
}

static void check_bus(const struct admit *a, const struct node *d, unsigned int i,
		      const char *disks)
{
	const struct node *t, *busn;
	const char *type = disk_target(d, &t), *bus;

	busn = node_get(t, "bus");
	bus = resolve_str(busn);
	if (!*bus)
		return;
	if (strcmp(bus, "ide") == 0)
		admit_err(a, busn, admit_path(a, "domain.devices.disks[%u].%s.bus", i, type),
			  "IDE bus is not supported");
	else if (strcmp(bus, "virtio") == 0) {
		if (strcmp(type, "cdrom") == 0)
			admit_err(a, busn, admit_path(a, "domain.devices.disks[%u].cdrom.bus", i),
				  "Bus type %s is invalid for CD-ROM device", bus);
	} else if (strcmp(bus, "sata") == 0) {
		if (strcmp(type, "disk") == 0 && node_bval(node_get(t, "readonly"), false))
			admit_err(a, busn, admit_path(a, "domain.devices.disks[%u].disk.bus", i),
				  "%s hard-disks do not support read-only.", bus);
	} else if (strcmp(bus, "scsi") && strcmp(bus, "usb")) {
		admit_err(a, busn, admit_path(a, "domain.devices.disks[%u].%s.bus", i, type),
			  "%s[%u] is set with an unrecognized bus %s, must be one of: [virtio scsi "
			  "sata usb]",
			  disks, i, bus);
	}
	if (node_bval(node_get(d, "dedicatedIOThread"), false) && strcmp(bus, "virtio"))
		admit_err(a, node_get(d, "dedicatedIOThread"),
			  admit_path(a, "domain.devices.disks[%u].dedicatedIOThread", i),
			  "IOThreads are not supported for disks on a %s bus", bus);
}

static bool pci_address_ok(const char *s)
{
	static const char shape[] = "xxxx:xx:xx.f";
	unsigned int i;

	if (strlen(s) != sizeof(shape) - 1)
		return false;
	for (i = 0; shape[i]; i++) {
		if (shape[i] == 'x' && !strchr("0123456789abcdefABCDEF", s[i]))
			return false;
		if (shape[i] == 'f' && (s[i] < '0' || s[i] > '7'))
			return false;
		if (shape[i] != 'x' && shape[i] != 'f' && s[i] != shape[i])
			return false;
	}
	return true;
}

static void check_pci(const struct admit *a, const struct node *d, unsigned int i,
		      const char *disks)
{
	const struct node *t = node_get(d, "disk"), *pn = node_get(t, "pciAddress");
	const char *pci = resolve_str(pn), *path;

	if (!*pci)
		return;
	path = admit_path(a, "domain.devices.disks[%u].disk.pciAddress", i);
	if (strcmp(resolve_str(node_get(t, "bus")), "virtio"))
		admit_err(a, pn, path,
			  "disk %s.domain.devices.disks.disk[%u].name - setting a PCI address is "
			  "only possible with bus type virtio.",
			  disks, i);
	if (!pci_address_ok(pci))
		admit_err(
		    a, pn, path,
		    "disk %s.domain.devices.disks.disk[%u].name has malformed PCI address (%s).",
		    disks, i, pci);
}

static void check_serial(const struct admit *a, const struct node *d, unsigned int i,
			 const char *disks)
{
	const struct node *sn = node_get(d, "serial");
	const char *s = resolve_str(sn), *p;
	size_t runes = 0;

	if (!*s)
		return;
	for (p = s; *p; p++) {
		runes += ((unsigned char)*p & 0xc0) != 0x80;
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-",
			    *p))
			break;
	}
	if (*p)
		admit_err(a, sn, admit_path(a, "domain.devices.disks[%u].serial", i),
			  "%s[%u] must be made up of the following characters [A-Za-z0-9_.+-], if "
			  "specified",
			  disks, i);
	for (; *p; p++)
		runes += ((unsigned char)*p & 0xc0) != 0x80;
	if (runes > 256)
		admit_err(a, sn, admit_path(a, "domain.devices.disks[%u].serial", i),
			  "%s[%u] must be less than or equal to 256 in length, if specified", disks,
			  i);
}

static void check_modes(const struct admit *a, const struct node *d, unsigned int i,
			const char *disks)
{
	const struct node *cn = node_get(d, "cache"), *in = node_get(d, "io");
	const struct node *en = node_get(d, "errorPolicy");
	const char *c = resolve_str(cn), *io = resolve_str(in), *e = resolve_str(en);

	if (*c && strcmp(c, "none") && strcmp(c, "writethrough") && strcmp(c, "writeback"))
		admit_err(a, cn, admit_path(a, "domain.devices.disks[%u].cache", i),
			  "%s[%u].cache has invalid value %s", disks, i, c);
	if (*io && strcmp(io, "native") && strcmp(io, "threads"))
		admit_err(a, in, admit_path(a, "domain.devices.disks[%u].io", i),
			  "Disk IO mode for %s is not supported. Supported modes are: native, "
			  "threads. (got \"%s\")",
			  disks, io);
	if (!node_is_null(en) && strcmp(e, "stop") && strcmp(e, "ignore") && strcmp(e, "report") &&
	    strcmp(e, "enospace"))
		admit_err(a, en, admit_path(a, "domain.devices.disks[%u].errorPolicy", i),
			  "%s[%u].errorPolicy has invalid value \"%s\"", disks, i, e);
}

/* validateCustomBlockSize: one cause for size */
static void check_block_size(const struct admit *a, const struct node *at, unsigned int i,
			     const char *which, long long size)
{
	const char *path = admit_path(a, "domain.devices.disks[%u].blockSize.custom.%s", i, which);

	if (size < MIN_BLOCK)
		admit_err(a, at, path,
			  "Provided size of %lld is less than the supported minimum size of %u",
			  size, MIN_BLOCK);
	else if (size > MAX_BLOCK)
		admit_err(a, at, path,
			  "Provided size of %lld is greater than the supported maximum size of %u",
			  size, MAX_BLOCK);
	else if (size & (size - 1))
		admit_err(a, at, path, "Provided size of %lld is not a power of 2", size);
}

static void check_block(const struct admit *a, const struct node *d, unsigned int i)
{
	const struct node *bs = node_get(d, "blockSize"), *cu = node_get(bs, "custom"), *t;
	const struct node *mv = node_get(bs, "matchVolume"), *ln, *pn, *gn;
	long long l = 0, p = 0, g = 0;

	if (node_is_null(cu))
		return;
	if (!node_is_null(mv) && node_bval(node_get(mv, "enabled"), true)) {
		admit_err(a, bs, admit_path(a, "domain.devices.disks[%u].blockSize", i),
			  "Block size matching can't be enabled together with a custom value");
		return;
	}
	ln = node_get(cu, "logical");
	pn = node_get(cu, "physical");
	gn = node_get(cu, "discardGranularity");
	uval(ln, &l);
	uval(pn, &p);
	disk_target(d, &t);
	if (l > p)
		admit_err(
		    a, ln, admit_path(a, "domain.devices.disks[%u].blockSize.custom.logical", i),
		    "Logical size %lld must be the same or less than the physical size of %lld", l,
		    p);
	else if (strcmp(resolve_str(node_get(t, "bus")), "sata") == 0 && l != MIN_BLOCK)
		admit_err(a, ln,
			  admit_path(a, "domain.devices.disks[%u].blockSize.custom.logical", i),
			  "Logical size %lld must be %u for SATA devices", l, MIN_BLOCK);
	else if (uval(gn, &g) && l != 0 && g % l != 0)
		admit_err(a, gn,
			  admit_path(
			      a, "domain.devices.disks[%u].blockSize.custom.discardGranularity", i),
			  "Discard granularity %lld must be multiples of logical size %lld", g, l);
	else {
		check_block_size(a, ln ? ln : cu, i, "logical", l);
		check_block_size(a, pn ? pn : cu, i, "physical", p);
	}
}

/* ValidateDisks: the rules of one disk */
static void check_disk(const struct admit *a, const struct node *disks, unsigned int i,
		       const char *dp, const struct admit_ix *ix)
{
	const struct node *d = disks->items[i], *nn = node_get(d, "name");
	const char *name = resolve_str(nn), *msg[2];
	unsigned int j, n = 0;
	long long bo;

	if (ix->first[i] != i)
		admit_err(a, nn, admit_path(a, "domain.devices.disks[%u].name", i),
			  "%s[%u] and %s[%u] must not have the same Name.", dp, i, dp,
			  ix->first[i]);
	for (j = 0; j < 3; j++)
		n += !node_is_null(node_get(d, targets[j]));
	if (n > 1)
		admit_err(a, d, admit_path(a, "domain.devices.disks[%u]", i),
			  "%s[%u] can only have a single target type defined", dp, i);
	check_pci(a, d, i, dp);
	if (uval(node_get(d, "bootOrder"), &bo) && bo < 1)
		admit_err(a, node_get(d, "bootOrder"),
			  admit_path(a, "domain.devices.disks[%u].bootOrder", i),
			  "%s[%u] must have a boot order > 0, if supplied", dp, i);
	check_bus(a, d, i, dp);
	check_serial(a, d, i, dp);
	check_modes(a, d, i, dp);
	n = admit_dns1123_label(name, msg);
	for (j = 0; j < n; j++)
		admit_err(a, nn, admit_path(a, "domain.devices.disks[%u].name", i), "%s", msg[j]);
	check_block(a, d, i);
}

/* validateBootOrder's disk half: the volume of each disk */
static void check_disk_volume(const struct admit *a, const struct node *d, unsigned int i,
			      const struct admit_ix *vols)
{
	const struct node *vol = admit_lookup(vols, resolve_str(node_get(d, "name")));
	const struct node *t = node_get(d, "disk");
	const char *dp = admit_path(a, "domain.devices.disks");
	const char *bus = resolve_str(node_get(t, "bus"));

	if (!vol) {
		/* an empty CD-ROM needs the DeclarativeHotplugVolumes gate: a
		 * cluster setting, not checked (resolution.md §19) */
		if (node_is_null(node_get(d, "cdrom")))
			admit_err(a, node_get(d, "name"),
				  admit_path(a, "domain.devices.disks[%u].name", i),
				  "%s[%u].Name '%s' not found.", dp, i,
				  resolve_str(node_get(d, "name")));
		return;
	}
	if (!node_is_null(node_get(d, "lun")) &&
	    node_is_null(node_get(vol, "persistentVolumeClaim")) &&
	    node_is_null(node_get(vol, "dataVolume")))
		admit_err(a, node_get(d, "lun"), admit_path(a, "domain.devices.disks[%u].lun", i),
			  "%s[%u].lun can only be mapped to a DataVolume or PersistentVolumeClaim "
			  "volume.",
			  dp, i);
	if (node_is_null(node_get(vol, "downwardMetrics")))
		return;
	if (node_is_null(t))
		admit_err(a, d, admit_path(a, "domain.devices.disks[%u].disk", i),
			  "DownwardMetrics volume must be mapped to a disk, but disk is not set on "
			  "%s[%u].disk.",
			  dp, i);
	else if (*bus && strcmp(bus, "virtio"))
		admit_err(
		    a, node_get(t, "bus"), admit_path(a, "domain.devices.disks[%u].disk.bus", i),
		    "DownwardMetrics volume must be mapped to virtio bus, but %s[%u].disk.bus "
		    "is set to %s",
		    dp, i, bus);
}

struct boot {
	long long order;
	unsigned int seq; /* disks first, then interfaces, in order */
};

static int boot_cmp(const void *x, const void *y)
{
	const struct boot *a = x, *b = y;

	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool boot_order_of(const struct admit *a, unsigned int k, unsigned int i, long long *bo)
{
	const struct node *seq = node_path(a->dom, k ? "devices.interfaces" : "devices.disks");

	return uval(node_get(seq->items[i], "bootOrder"), bo) && (k == 0 || *bo >= 1);
}

/* Boot orders are unique across disks, then interfaces (validateBootOrder,
 * validateInterfaceBootOrder): the first device with an order keeps it,
 * every later one is refused. Sorted, so n devices cost O(n log n). */
static void check_boot_orders(const struct admit *a)
{
	static const char *const kinds[] = {"disks", "interfaces"};
	const struct node *seq[2] = {node_path(a->dom, "devices.disks"),
				     node_path(a->dom, "devices.interfaces")};
	unsigned int n[2], k, i, m = 0, s = 0;
	struct boot *b;
	bool *dup;
	long long bo;

	for (k = 0; k < 2; k++)
		n[k] = node_is_seq(seq[k]) ? seq[k]->n : 0;
	b = arena_alloc(a->r->a, (n[0] + n[1] + 1) * sizeof(*b));
	dup = arena_alloc(a->r->a, (n[0] + n[1] + 1) * sizeof(*dup));
	for (k = 0; k < 2; k++)
		for (i = 0; i < n[k]; i++, s++) {
			dup[s] = false;
			if (boot_order_of(a, k, i, &bo))
				b[m++] = (struct boot){bo, s};
		}
	qsort(b, m, sizeof(*b), boot_cmp);
	for (i = 1; i < m; i++)
		dup[b[i].seq] = b[i].order == b[i - 1].order;
	for (s = 0, k = 0; k < 2; k++)
		for (i = 0; i < n[k]; i++, s++) {
			const struct node *bn = node_get(seq[k]->items[i], "bootOrder");

			if (k == 1 && uval(bn, &bo) && bo < 1)
				admit_err(
				    a, bn,
				    admit_path(a, "domain.devices.interfaces[%u].bootOrder", i),
				    "%s[%u] must have a boot order > 0, if supplied", a->pfx, i);
			if (dup[s])
				admit_err(
				    a, bn,
				    admit_path(a, "domain.devices.%s[%u].bootOrder", kinds[k], i),
				    "Boot order for %s.domain.devices.%s[%u].bootOrder already set "
				    "for a different device.",
				    a->pfx, kinds[k], i);
		}
}

void admit_disks(const struct admit *a)
{
	const struct node *disks = node_path(a->dom, "devices.disks");
	const char *dp = admit_path(a, "domain.devices.disks");
	struct admit_ix names, vols;
	unsigned int i;

	admit_index(a, disks, "name", &names);
	admit_index(a, node_get(a->spec, "volumes"), "name", &vols);
	for (i = 0; node_is_seq(disks) && i < disks->n; i++)
		check_disk(a, disks, i, dp, &names);
	for (i = 0; node_is_seq(disks) && i < disks->n; i++)
		check_disk_volume(a, disks->items[i], i, &vols);
	check_boot_orders(a);
}
