/* SPDX-License-Identifier: MIT */
/*
 * vmm/util/json_out.c, vmm/'s one JSON writer, and the three writers that use
 * it: the log's JSON lines, the probe report, cloud-init's meta-data.
 * Every string is untrusted; each must come out as valid JSON (checked
 * with json-c's strict tokener validating UTF-8) holding the same text,
 * with bytes that are not UTF-8 replaced by U+FFFD.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/disk/cloudinit.h"
#include "vmm/util/json_out.h"
#include "vmm/util/log.h"
#include "vmm/probe/report.h"
#include "vmm/vm_config.h"

#define FFFD "\xef\xbf\xbd"

static const struct {
	const char *in, *text; /* text: json_out_text of the string */
} cases[] = {
    {"", "\"\""},
    {"plain", "\"plain\""},
    {"a\"b", "\"a\\\"b\""},
    {"back\\slash", "\"back\\\\slash\""},
    {"a/b", "\"a/b\""}, /* '/' left alone (YAML 1.1 has no \/) */
    {"tab\tnl\ncr\rbs\bff\f", "\"tab\\tnl\\ncr\\rbs\\bff\\f\""},
    {"\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\""},
    {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e\""},
    {"\x80", "\"" FFFD "\""}, /* lone continuation byte */
    {"a\xff"
     "b",
     "\"a" FFFD "b\""},					 /* never in UTF-8 */
    {"\xc0\xaf", "\"" FFFD FFFD "\""},			 /* overlong '/' */
    {"\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\""},		 /* overlong, 3 bytes */
    {"\xed\xa0\x80", "\"" FFFD FFFD FFFD "\""},		 /* a surrogate */
    {"\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""}, /* above U+10FFFF */
    {"\xe2\x82", "\"" FFFD FFFD "\""},			 /* cut short at the end */
    {"\xe2\x82\"", "\"" FFFD FFFD "\\\"\""},		 /* cut short by a quote */
    {"\xc3\"\\\n", "\"" FFFD "\\\"\\\\\\n\""},
};

/* json-c's strict parser, UTF-8 validated: NULL when text is not JSON. */
static struct json_object *parse_strict(const char *text)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;

	if (!tok)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, text, (int)strlen(text));
	if (json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

static void test_strings(void)
{
	struct json_object *o;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_object *back;
		const char *t;

		o = json_out_str(cases[i].in);
		t = json_out_text(o);

		CHECK_STR(t, cases[i].text);
		back = parse_strict(t);
		if (!back)
			test_fail(__FILE__, __LINE__, "case %zu: not valid JSON: %s", i, t);
		json_object_put(back);
		json_object_put(o);
	}
	o = json_out_str(NULL);
	CHECK_STR(json_out_text(o), "\"\"");
	json_object_put(o);
}

/* A value with every kind of trouble, and what a reader gets back. */
static const char nasty[] = "q\"b\\c\x01n\nx\xff\xc3";
static const char nasty_back[] = "q\"b\\c\x01n\nx" FFFD FFFD;

static void test_log_line(void)
{
	char path[] = "/tmp/json_out_test.XXXXXX", *text, *nl;
	int fd = mkstemp(path), saved = dup(2);
	struct json_object *o;
	size_t len;

	CHECK(fd >= 0 && saved >= 0);
	if (fd < 0 || saved < 0)
		return;
	dup2(fd, 2);
	log_setup(LOG_FORMAT_JSON, LOG_INFO, "json\xfftest", nasty);
	log_field(LOG_WARN, nasty, nasty, "value %s", nasty);
	dup2(saved, 2);
	close(saved);
	close(fd);
	text = test_read_file(path, &len);
	unlink(path);
	CHECK(text && len && text[len - 1] == '\n');
	if (!text)
		return;
	nl = strchr(text, '\n');
	CHECK(nl == text + len - 1); /* one line: the newline inside is escaped */
	text[len - 1] = 0;
	o = parse_strict(text);
	if (!o)
		test_fail(__FILE__, __LINE__, "log line is not valid JSON: %s", text);
	if (o) {
		char want[256];

		snprintf(want, sizeof(want), "%s: value %s", nasty_back, nasty_back);
		CHECK_STR(json_object_get_string(json_object_object_get(o, "component")),
			  "json" FFFD "test");
		CHECK_STR(json_object_get_string(json_object_object_get(o, "vmi")), nasty_back);
		CHECK_STR(json_object_get_string(json_object_object_get(o, "source")), nasty_back);
		CHECK_STR(json_object_get_string(json_object_object_get(o, "field")), nasty_back);
		CHECK_STR(json_object_get_string(json_object_object_get(o, "msg")), want);
		CHECK_STR(json_object_get_string(json_object_object_get(o, "level")), "warning");
	}
	json_object_put(o);
	free(text);
	log_setup(LOG_FORMAT_TEXT, LOG_INFO, "vmlet", NULL);
}

/* The probe report: the manifest's disk and NIC names label both sides. */
static void test_probe_report(void)
{
	struct probe_report *e = calloc(1, sizeof(*e)), *g = calloc(1, sizeof(*g));
	struct json_object *o = NULL, *d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(e && g && f);
	if (!e || !g || !f)
		goto out;
	e->n_disks = g->n_disks = 1;
	e->n_nics = 1;
	snprintf(e->disks[0].name, sizeof(e->disks[0].name), "%s", nasty);
	snprintf(e->nics[0].name, sizeof(e->nics[0].name), "%s", nasty);
	snprintf(e->brand, sizeof(e->brand), "%s", nasty);
	CHECK(probe_report_print_json(f, e, g, false) == 0);
	fclose(f);
	f = NULL;
	CHECK(len && buf[len - 1] == '\n' && strchr(buf, '\n') == buf + len - 1);
	o = parse_strict(buf);
	if (!o) {
		test_fail(__FILE__, __LINE__, "probe report is not valid JSON: %s", buf);
		goto out;
	}
	d = json_object_object_get(o, "expected");
	CHECK_STR(json_object_get_string(json_object_object_get(d, "brand")), nasty_back);
	d = json_object_array_get_idx(json_object_object_get(d, "nics"), 0);
	CHECK_STR(json_object_get_string(json_object_object_get(d, "name")), nasty_back);
	d = json_object_array_get_idx(
	    json_object_object_get(json_object_object_get(o, "guest"), "disks"), 0);
	CHECK_STR(json_object_get_string(json_object_object_get(d, "name")), nasty_back);
out:
	if (f)
		fclose(f);
	json_object_put(o);
	free(buf);
	free(e);
	free(g);
}

/* cloud-init's meta-data, found verbatim in the seed image (ISO 9660
 * stores a file's bytes as they are). */
static void test_cloudinit(void)
{
	struct vm_disk d = {.name = "ci", .source = VM_DISK_CLOUDINIT_CONFIGDRIVE};
	char want[512];
	uint8_t *img = NULL;
	size_t len = 0;

	d.meta_instance_id = "vm.ns";
	d.meta_hostname = (char *)nasty;
	d.meta_uuid = "5a9fc181-957e-5c32-9e5a-2de5e9673531";
	CHECK(cloudinit_build(&d, &img, &len) == 0);
	snprintf(want, sizeof(want),
		 "{\"instance_id\":\"vm.ns\",\"hostname\":\"q\\\"b\\\\c\\u0001n\\nx" FFFD FFFD
		 "\",\"uuid\":\"%s\"}\n",
		 d.meta_uuid);
	CHECK(img && memmem(img, len, want, strlen(want)));
	free(img);

	img = NULL;
	d.source = VM_DISK_CLOUDINIT_NOCLOUD;
	d.meta_instance_type = "u1.small";
	CHECK(cloudinit_build(&d, &img, &len) == 0);
	snprintf(want, sizeof(want),
		 "instance-type: \"u1.small\"\ninstance-id: \"vm.ns\"\nlocal-hostname: "
		 "\"q\\\"b\\\\c\\u0001n\\nx" FFFD FFFD "\"\n");
	CHECK(img && memmem(img, len, want, strlen(want)));
	free(img);
}

int main(void)
{
	TEST_RUN(test_strings);
	TEST_RUN(test_log_line);
	TEST_RUN(test_probe_report);
	TEST_RUN(test_cloudinit);
	return test_summary();
}
