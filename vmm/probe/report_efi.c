// SPDX-License-Identifier: MIT
/*
 * report_efi.c - the probe's EFI lines (firmware/probe/efi.c): under
 * an EFI VM the probe is vmlet's UEFI firmware's payload and reports the
 * firmware's vendor, revision, UEFI revision and configuration tables.
 * Untrusted text: every value is bounded and must be printable.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/util/json_out.h"
#include "vmm/util/log.h"
#include "vmm/probe/report.h"
#include "vmm/vm_config.h"

static bool efi_printable(const char *v, size_t n, size_t cap)
{
	if (n >= cap)
		return false;
	for (size_t i = 0; i < n; i++)
		if (v[i] < ' ' || v[i] > '~')
			return false;
	return true;
}

int probe_report_efi_line(struct probe_report *r, const char *key, const char *v, size_t n)
{
	struct probe_efi *e = &r->efi;
	char num[16], *end;

	if (!strcmp(key, "systemUuid")) {
		if (n != 36)
			return -EBADMSG;
		for (size_t i = 0; i < n; i++)
			if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f') ||
			      (v[i] == '-' && (i == 8 || i == 13 || i == 18 || i == 23))))
				return -EBADMSG;
		memcpy(r->system_uuid, v, n);
		r->system_uuid[n] = 0;
		return 0;
	}
	if (!strcmp(key, "tpm")) {
		if (!efi_printable(v, n, sizeof(r->tpm)))
			return -EBADMSG;
		memcpy(r->tpm, v, n);
		r->tpm[n] = 0;
		return 0;
	}
	if (!strcmp(key, "biosVendor")) {
		if (!efi_printable(v, n, sizeof(r->bios_vendor)))
			return -EBADMSG;
		memcpy(r->bios_vendor, v, n);
		r->bios_vendor[n] = 0;
		return 0;
	}
	if (strncmp(key, "efi", 3))
		return 1;
	if (!strcmp(key, "efiVendor") && efi_printable(v, n, sizeof(e->vendor))) {
		memcpy(e->vendor, v, n);
		e->vendor[n] = 0;
	} else if (!strcmp(key, "efiRevision") && n > 2 && n < sizeof(num) && !memcmp(v, "0x", 2)) {
		memcpy(num, v, n);
		num[n] = 0;
		unsigned long x = strtoul(num + 2, &end, 16);

		if (*end || x > UINT32_MAX)
			return -EBADMSG;
		e->revision = (uint32_t)x;
	} else if (!strcmp(key, "efiSpec") && efi_printable(v, n, sizeof(e->spec))) {
		memcpy(e->spec, v, n);
		e->spec[n] = 0;
	} else if (!strcmp(key, "efiTables") && efi_printable(v, n, 4096)) {
		for (size_t i = 0, w; i < n; i += w + 1) {
			for (w = 0; i + w < n && v[i + w] != ' '; w++)
				;
			if (!w)
				continue;
			if (e->n_tables >= PROBE_MAX_EFI_TABLES || w >= sizeof(e->tables[0]))
				return -EBADMSG;
			memcpy(e->tables[e->n_tables], v + i, w);
			e->tables[e->n_tables++][w] = 0;
		}
	} else {
		static const char *const known[] = {"efiVendor", "efiRevision", "efiSpec",
						    "efiTables"};

		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(key, known[i]))
				return -EBADMSG; /* ours, malformed */
		return 1;
	}
	e->present = true;
	return 0;
}

void probe_report_efi_expected(const struct vm_config *cfg, struct probe_report *r)
{
	struct probe_efi *e = &r->efi;
	const char *u = cfg->firmware_uuid;

	/* the SMBIOS type 1 UUID the guest must read: firmware.uuid (every
	 * VM from a manifest has one: spec/ sets KubeVirt's default) */
	for (size_t i = 0; u && i < sizeof(r->system_uuid) - 1 && u[i]; i++)
		r->system_uuid[i] = (char)(u[i] >= 'A' && u[i] <= 'F' ? u[i] - 'A' + 'a' : u[i]);
	if (cfg->tpm && cfg->acpi)
		strcpy(r->tpm, cfg->tpm_persistent ? "crb 0x0 0x0 8" : "tis 0x0 0x0 8");
	if (cfg->boot != VM_BOOT_EFI)
		return;
	e->present = true;
	strcpy(e->vendor, "vmlet");
	if (cfg->acpi)
		strcpy(e->tables[e->n_tables++], "ACPI20");
	strcpy(e->tables[e->n_tables++], "SMBIOS3");
}

static bool efi_has(const struct probe_efi *e, const char *name)
{
	for (uint32_t i = 0; i < e->n_tables; i++)
		if (!strcmp(e->tables[i], name))
			return true;
	return false;
}

bool probe_report_efi_compare(const struct probe_report *exp, const struct probe_report *got,
			      FILE *diff)
{
	const struct probe_efi *e = &exp->efi, *g = &got->efi;
	bool match = true;

	if (exp->bios_vendor[0] && strcmp(exp->bios_vendor, got->bios_vendor)) {
		if (diff)
			fprintf(diff, "biosVendor: expected %s, guest %s (SMBIOS type 0)\n",
				exp->bios_vendor, got->bios_vendor[0] ? got->bios_vendor : "none");
		match = false;
	}
	if (exp->system_uuid[0] && strcmp(exp->system_uuid, got->system_uuid)) {
		if (diff)
			fprintf(diff, "systemUuid: expected %s, guest %s (SMBIOS type 1)\n",
				exp->system_uuid, got->system_uuid[0] ? got->system_uuid : "none");
		match = false;
	}
	if (strcmp(exp->tpm, got->tpm) &&
	    !(!strcmp(exp->tpm, "crb 0x0 0x0 8") && !strcmp(got->tpm, "crb 0x100 0x0 8")) &&
	    !(!strcmp(exp->tpm, "tis 0x0 0x0 8") && !strcmp(got->tpm, "tis 0x100 0x0 8"))) {
		if (diff)
			fprintf(diff, "tpm: expected %s, guest %s\n",
				exp->tpm[0] ? exp->tpm : "none", got->tpm[0] ? got->tpm : "none");
		match = false;
	}
	if (e->present != g->present) {
		if (diff)
			fprintf(diff, "efi: expected %s, the guest saw %s\n",
				e->present ? "UEFI firmware" : "none", g->present ? "one" : "none");
		return false;
	}
	if (e->present && strcmp(e->vendor, g->vendor)) {
		if (diff)
			fprintf(diff, "efi: vendor: expected %s, guest %s\n", e->vendor, g->vendor);
		match = false;
	}
	for (uint32_t i = 0; i < e->n_tables; i++)
		if (!efi_has(g, e->tables[i])) {
			if (diff)
				fprintf(diff, "efi: configuration table %s missing\n",
					e->tables[i]);
			match = false;
		}
	return match;
}

int probe_report_efi_json(struct json_object *o, const struct probe_report *r)
{
	const struct probe_efi *e = &r->efi;
	struct json_object *efi;
	int err = 0;

	if (r->bios_vendor[0])
		err = json_out_add_str(o, "biosVendor", r->bios_vendor);
	if (r->system_uuid[0])
		err = err ?: json_out_add_str(o, "systemUuid", r->system_uuid);
	if (r->tpm[0])
		err = err ?: json_out_add_str(o, "tpm", r->tpm);
	if (r->note[0])
		err = err ?: json_out_add_str(o, "note", r->note);
	if (err || !e->present)
		return err;
	efi = json_object_new_object();
	err = json_out_add_str(efi, "vendor", e->vendor);
	if (e->spec[0]) { /* the guest's side */
		err = err ?: json_out_add_u64(efi, "revision", e->revision);
		err = err ?: json_out_add_str(efi, "spec", e->spec);
	}
	err = err
		  ?: json_out_add(
			 efi, "tables",
			 json_out_str_array(e->tables[0], sizeof(e->tables[0]), e->n_tables));
	if (err) {
		json_object_put(efi);
		return err;
	}
	return json_out_add(o, "efi", efi);
}
