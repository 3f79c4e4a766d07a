/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "spec/emit.h"
#include "spec/load.h"

struct json_object *emit_json_value(const struct node *n)
{
	struct json_object *o;
	unsigned int i;
	long long v;
	char *end;

	if (!n)
		return NULL;
	switch (n->type) {
	case N_NULL:
		return NULL;
	case N_BOOL:
		return json_object_new_boolean(n->str[0] == 't');
	case N_INT:
		errno = 0;
		v = strtoll(n->str, &end, 0);
		if (errno || *end)
			return json_object_new_double_s(strtod(n->str, NULL), n->str);
		return json_object_new_int64(v);
	case N_FLOAT:
		if (strchr(n->str, 'n') || strchr(n->str, 'N') || strchr(n->str, 'i') ||
		    strchr(n->str, 'I'))
			return json_object_new_string(n->str); /* .inf/.nan: not JSON */
		return json_object_new_double_s(strtod(n->str, NULL), n->str);
	case N_STR:
		return json_object_new_string(n->str);
	case N_MAP:
		o = json_object_new_object();
		for (i = 0; i < n->n; i++)
			json_object_object_add(o, n->kv[i].key, emit_json_value(n->kv[i].val));
		return o;
	case N_SEQ:
		o = json_object_new_array_ext((int)n->n);
		for (i = 0; i < n->n; i++)
			json_object_array_add(o, emit_json_value(n->items[i]));
		return o;
	}
	return NULL;
}

char *emit_json_text(struct arena *a, const struct node *n)
{
	struct json_object *o = emit_json_value(n);
	char *s = arena_strdup(a, json_object_to_json_string_ext(
				      o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));

	json_object_put(o);
	return s;
}

/* json-c prints an empty object as "{" NL indent "}": make it "{}" (a raw
 * newline never occurs inside a JSON string, so this only touches layout) */
static void put_compacted(FILE *f, const char *s)
{
	const char *p, *q;

	for (p = s; *p; p++) {
		if ((*p == '{' || *p == '[') && p[1] == '\n') {
			for (q = p + 2; *q == ' '; q++)
				;
			if (*q == (*p == '{' ? '}' : ']')) {
				fputc(*p, f);
				fputc(*q, f);
				p = q;
				continue;
			}
		}
		fputc(*p, f);
	}
}

int emit_json_object(FILE *f, struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(
	    o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);

	put_compacted(f, s ? s : "null");
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int emit_json(FILE *f, const struct node *n)
{
	struct json_object *o = emit_json_value(n);
	int ret = emit_json_object(f, o);

	json_object_put(o);
	return ret;
}

/* ---- YAML ----------------------------------------------------------- */

static bool plain_ok(const char *s)
{
	const char *p;

	if (!*s || yaml_plain_type(s) != N_STR)
		return false;
	if (strchr("-?:,[]{}#&*!|>'\"%@` \t", s[0]))
		return false;
	if (s[strlen(s) - 1] == ' ' || s[strlen(s) - 1] == ':')
		return false;
	for (p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
		if ((p[0] == ':' && p[1] == ' ') || (p[0] == ' ' && p[1] == '#'))
			return false;
	}
	return true;
}

static void put_str(FILE *f, const char *s)
{
	const unsigned char *p;

	if (plain_ok(s)) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\x%02x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void put_scalar(FILE *f, const struct node *n)
{
	if (node_is_null(n))
		fputs("null", f);
	else if (n->type == N_STR)
		put_str(f, n->str);
	else if (n->type == N_MAP)
		fputs("{}", f);
	else if (n->type == N_SEQ)
		fputs("[]", f);
	else
		fputs(n->str, f);
}

static bool is_block(const struct node *n)
{
	return n && (n->type == N_MAP || n->type == N_SEQ) && n->n;
}

static void yaml_node(FILE *f, const struct node *n, int indent);

static void yaml_map(FILE *f, const struct node *n, int indent, bool first_inline)
{
	unsigned int i;

	for (i = 0; i < n->n; i++) {
		if (i || !first_inline)
			fprintf(f, "%*s", indent, "");
		put_str(f, n->kv[i].key);
		fputc(':', f);
		if (is_block(n->kv[i].val)) {
			fputc('\n', f);
			yaml_node(f, n->kv[i].val,
				  n->kv[i].val->type == N_SEQ ? indent : indent + 2);
		} else {
			fputc(' ', f);
			put_scalar(f, n->kv[i].val);
			fputc('\n', f);
		}
	}
}

static void yaml_node(FILE *f, const struct node *n, int indent)
{
	unsigned int i;
	const struct node *it;

	if (n->type == N_MAP) {
		yaml_map(f, n, indent, false);
		return;
	}
	for (i = 0; i < n->n; i++) {
		it = n->items[i];
		fprintf(f, "%*s- ", indent, "");
		if (it && it->type == N_MAP && it->n) {
			yaml_map(f, it, indent + 2, true);
		} else if (it && it->type == N_SEQ && it->n) {
			fputc('\n', f);
			yaml_node(f, it, indent + 2);
		} else {
			put_scalar(f, it);
			fputc('\n', f);
		}
	}
}

int emit_yaml(FILE *f, const struct node *n)
{
	if (is_block(n))
		yaml_node(f, n, 0);
	else {
		put_scalar(f, n);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}
