// SPDX-License-Identifier: MIT
/* probe_report_efi_test - the probe's efi* report lines (vmm/probe/report_efi.c):
 * parsing with bounds, the expectation for EFI and non-EFI VMs, the
 * comparison and the JSON member. */
#include <errno.h>
#include <stdlib.h>

#include "tests/lib/test.h"
#include "vmm/probe/report.h"
#include "vmm/vm_config.h"

static struct probe_report r, exp_;

static int parse(const char *lines)
{
	char text[4096];

	snprintf(text, sizeof(text), "VMLET-PROBE-BEGIN v1\n%sVMLET-PROBE-END\n", lines);
	return probe_report_parse(text, strlen(text), &r);
}

static void test_parse(void)
{
	CHECK(parse("efiVendor=vmlet\nefiRevision=0x00010000\nefiSpec=2.100\n"
		    "efiTables=ACPI20 ACPI SMBIOS3 01234567-89ab-cdef-0123-456789abcdef\n") == 0);
	CHECK(r.efi.present);
	CHECK_STR(r.efi.vendor, "vmlet");
	CHECK_EQ_U64(r.efi.revision, 0x10000);
	CHECK_STR(r.efi.spec, "2.100");
	CHECK_EQ_U64(r.efi.n_tables, 4);
	CHECK_STR(r.efi.tables[3], "01234567-89ab-cdef-0123-456789abcdef");
	CHECK(parse("vendor=GenuineIntel\n") == 0 && !r.efi.present);
	CHECK(parse("efiRevision=12\n") == -EBADMSG);
	CHECK(parse("efiRevision=0x1ffffffff\n") == -EBADMSG);
	CHECK(parse("efiVendor=\x01x\n") == -EBADMSG);
	CHECK(parse("efiTables=a b c d e f g h i j k l m n o p q\n") == -EBADMSG);
	CHECK(parse("efiTables=0123456789012345678901234567890123456789\n") == -EBADMSG);
	CHECK(parse("efiSomethingNew=1\n") == 0); /* a newer probe's key */
}

static void test_expected_and_compare(void)
{
	struct vm_config cfg;
	char out[512] = "";
	FILE *f;
	struct json_object *o;

	vm_config_init(&cfg);
	CHECK(probe_report_expected(&cfg, 0, 1 << 20, &exp_) == 0);
	CHECK(!exp_.efi.present);
	CHECK(parse("efiVendor=vmlet\n") == 0);
	CHECK(!probe_report_efi_compare(&exp_, &r, NULL)); /* EFI where none is expected */
	cfg.boot = VM_BOOT_EFI;
	CHECK(probe_report_expected(&cfg, 0, 1 << 20, &exp_) == 0);
	CHECK(exp_.efi.present && exp_.efi.n_tables == 2);
	CHECK(parse("efiVendor=vmlet\nefiTables=ACPI ACPI20 SMBIOS3\n") == 0);
	CHECK(probe_report_efi_compare(&exp_, &r, NULL));
	CHECK(parse("efiVendor=other\nefiTables=ACPI20\n") == 0);
	f = fmemopen(out, sizeof(out), "w");
	CHECK(!probe_report_efi_compare(&exp_, &r, f));
	fclose(f);
	CHECK(strstr(out, "vendor: expected vmlet, guest other") && strstr(out, "SMBIOS3 missing"));
	CHECK(parse("vendor=GenuineIntel\n") == 0);
	CHECK(!probe_report_efi_compare(&exp_, &r, NULL)); /* no EFI seen */

	CHECK(parse("efiVendor=a\"b\nefiSpec=2.100\nefiTables=ACPI20\n") == 0);
	o = json_object_new_object();
	CHECK(probe_report_efi_json(o, &r) == 0);
	CHECK_STR(json_out_text(o),
		  "{\"efi\":{\"vendor\":\"a\\\"b\",\"revision\":0,\"spec\":\"2.100\","
		  "\"tables\":[\"ACPI20\"]}}");
	json_object_put(o);
}

/* systemUuid= (firmware/probe/smbios.c): SMBIOS type 1's UUID, compared
 * with firmware.uuid (lower case) */
static void test_system_uuid(void)
{
	struct vm_config cfg;
	char out[512] = "";
	FILE *f;

	CHECK(parse("systemUuid=5a9fc181-957e-5c32-9e5a-2de5e9673531\n") == 0);
	CHECK_STR(r.system_uuid, "5a9fc181-957e-5c32-9e5a-2de5e9673531");
	CHECK(parse("systemUuid=5a9fc181-957e-5c32-9e5a-2de5e967353\n") == -EBADMSG);
	CHECK(parse("systemUuid=5A9FC181-957E-5C32-9E5A-2DE5E9673531\n") == -EBADMSG);
	CHECK(parse("systemUuid=5a9fc181x957e-5c32-9e5a-2de5e9673531\n") == -EBADMSG);
	vm_config_init(&cfg);
	char upper[] = "5A9FC181-957E-5C32-9E5A-2DE5E9673531";

	cfg.firmware_uuid = upper;
	CHECK(probe_report_expected(&cfg, 0, 1 << 20, &exp_) == 0);
	CHECK_STR(exp_.system_uuid, "5a9fc181-957e-5c32-9e5a-2de5e9673531");
	CHECK(parse("systemUuid=5a9fc181-957e-5c32-9e5a-2de5e9673531\n") == 0);
	CHECK(probe_report_efi_compare(&exp_, &r, NULL));
	CHECK(parse("systemUuid=00000000-0000-0000-0000-000000000000\n") == 0);
	f = fmemopen(out, sizeof(out), "w");
	CHECK(!probe_report_efi_compare(&exp_, &r, f));
	fclose(f);
	CHECK(strstr(out, "systemUuid: expected 5a9fc181-957e-5c32-9e5a-2de5e9673531, guest "
			  "00000000-0000-0000-0000-000000000000 (SMBIOS type 1)"));
}

/* biosVendor= (firmware/probe/smbios.c): whose SMBIOS the guest found */
static void test_bios_vendor(void)
{
	struct vm_config cfg;
	char out[512] = "";
	FILE *f;
	struct json_object *o;

	CHECK(parse("biosVendor=SeaBIOS\n") == 0);
	CHECK_STR(r.bios_vendor, "SeaBIOS");
	CHECK(parse("biosVendor=\x01\n") == -EBADMSG);
	CHECK(parse("biosVendor=0123456789012345678901234567890123456789012345678\n") == -EBADMSG);
	vm_config_init(&cfg);
	CHECK(probe_report_expected(&cfg, 0, 1 << 20, &exp_) == 0);
	CHECK(parse("biosVendor=vmlet\n") == 0);
	CHECK(probe_report_efi_compare(&exp_, &r, NULL)); /* nothing expected: not compared */
	strcpy(exp_.bios_vendor, "SeaBIOS");
	CHECK(!probe_report_efi_compare(&exp_, &r, NULL));
	CHECK(parse("vendor=GenuineIntel\n") == 0); /* no line: no SMBIOS seen */
	f = fmemopen(out, sizeof(out), "w");
	CHECK(!probe_report_efi_compare(&exp_, &r, f));
	fclose(f);
	CHECK(strstr(out, "biosVendor: expected SeaBIOS, guest none"));
	CHECK(parse("biosVendor=SeaBIOS\n") == 0);
	CHECK(probe_report_efi_compare(&exp_, &r, NULL));
	o = json_object_new_object();
	CHECK(probe_report_efi_json(o, &r) == 0);
	CHECK_STR(json_out_text(o), "{\"biosVendor\":\"SeaBIOS\"}");
	json_object_put(o);
}

int main(void)
{
	TEST_RUN(test_parse);
	TEST_RUN(test_expected_and_compare);
	TEST_RUN(test_bios_vendor);
	TEST_RUN(test_system_uuid);
	return test_summary();
}
