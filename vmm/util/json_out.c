/* SPDX-License-Identifier: MIT */
/* json_out.c - vmm/'s JSON writer on json-c (json_out.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/util/json_out.h"

/* Length of the UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 when it is not one. */
static size_t json_out_utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		unsigned char lo = s[0] == 0xe0 ? 0xa0 : 0x80, hi = s[0] == 0xed ? 0x9f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		unsigned char lo = s[0] == 0xf0 ? 0x90 : 0x80, hi = s[0] == 0xf4 ? 0x8f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80
			   ? 4
			   : 0;
	}
	return 0;
}

struct json_object *json_out_str(const char *s)
{
	static const char repl[] = "\xef\xbf\xbd"; /* U+FFFD */
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), i = 0, k = 0, len;
	struct json_object *o;
	char *buf;

	while (i < n && (len = json_out_utf8_len(p + i)))
		i += len;
	if (i == n) /* the common case: already UTF-8 */
		return json_object_new_string((const char *)p);
	if (n > INT_MAX / 3)
		return NULL;
	buf = malloc(3 * n + 1); /* each byte becomes at most U+FFFD */
	if (!buf)
		return NULL;
	for (i = 0; i < n; i += len ? len : 1) {
		len = json_out_utf8_len(p + i);
		memcpy(buf + k, len ? (const char *)p + i : repl, len ? len : 3);
		k += len ? len : 3;
	}
	buf[k] = 0;
	o = json_object_new_string_len(buf, (int)k);
	free(buf);
	return o;
}

int json_out_add(struct json_object *obj, const char *key, struct json_object *v)
{
	if (!obj || !v || json_object_object_add(obj, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

int json_out_append(struct json_object *arr, struct json_object *v)
{
	if (!arr || !v || json_object_array_add(arr, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

int json_out_add_str(struct json_object *obj, const char *key, const char *s)
{
	return json_out_add(obj, key, json_out_str(s));
}

int json_out_add_u64(struct json_object *obj, const char *key, uint64_t v)
{
	return json_out_add(obj, key, json_object_new_uint64(v));
}

int json_out_add_bool(struct json_object *obj, const char *key, bool v)
{
	return json_out_add(obj, key, json_object_new_boolean(v));
}

struct json_object *json_out_str_array(const char *v, size_t stride, size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_out_append(a, json_out_str(v + i * stride))) {
			json_object_put(a);
			return NULL;
		}
	return a;
}

const char *json_out_text(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						     JSON_C_TO_STRING_NOSLASHESCAPE);
}

int json_out_write(FILE *f, struct json_object *o)
{
	const char *t = o ? json_out_text(o) : NULL;

	if (!t)
		return -ENOMEM;
	return fputs(t, f) < 0 ? -EIO : 0;
}
