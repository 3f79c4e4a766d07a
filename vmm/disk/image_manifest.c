// SPDX-License-Identifier: MIT
/*
 * image_manifest.c - an image store's JSON documents and the image
 * reference grammar, from untrusted bytes (image_manifest.h).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/disk/image_manifest.h"
#include "vmm/disk/tar.h"

#define REF_MAX 4096

void image_names_release(struct image_names *n)
{
	for (unsigned int i = 0; i < n->n; i++)
		free(n->name[i]);
	memset(n, 0, sizeof(*n));
}

static bool lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool alnum(char c)
{
	return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* path-component := [a-z0-9]+ (separator [a-z0-9]+)*, separator :=
 * [_.] | __ | -+ ; [s, e) */
static bool ref_path_component(const char *s, const char *e)
{
	if (s == e || !lower_alnum(*s) || !lower_alnum(e[-1]))
		return false;
	while (s < e) {
		const char *sep = s;

		while (s < e && lower_alnum(*s))
			s++;
		if (s == e)
			return true;
		sep = s;
		if (*s == '.' || *s == '_')
			s += (*s == '_' && s + 1 < e && s[1] == '_') ? 2 : 1;
		else
			while (s < e && *s == '-')
				s++;
		if (s == sep || s == e || !lower_alnum(*s))
			return false;
	}
	return true;
}

/* domain := component ('.' component)* [':' port] | '[' IPv6 ']' [':' port] */
static bool ref_domain(const char *s, const char *e)
{
	const char *colon = NULL;

	if (s < e && *s == '[') {
		const char *rb = memchr(s, ']', (size_t)(e - s));

		if (!rb || rb == s + 1 ||
		    strspn(s + 1, "0123456789abcdefABCDEF:") < (size_t)(rb - s - 1))
			return false;
		colon = rb + 1 < e ? rb + 1 : NULL;
		if (colon && *colon != ':')
			return false;
	} else {
		colon = memchr(s, ':', (size_t)(e - s));
		for (const char *c = s, *end = colon ? colon : e; c < end;) {
			const char *d = c;

			while (d < end && (alnum(*d) || *d == '-'))
				d++;
			if (d == c || !alnum(*c) || !alnum(d[-1]) || (d < end && *d != '.'))
				return false;
			c = d + (d < end);
			if (d < end && c == end)
				return false; /* trailing dot */
		}
	}
	if (colon) {
		size_t l = (size_t)(e - colon - 1);

		if (!l || strspn(colon + 1, "0123456789") < l)
			return false;
	}
	return s < e;
}

/* digest := algorithm ':' hex{32,} ; algorithm := [A-Za-z][A-Za-z0-9]*
 * ([+._-][A-Za-z][A-Za-z0-9]*)* */
static bool ref_digest(const char *s)
{
	const char *c = strchr(s, ':');
	bool start = true;

	if (!c || c == s)
		return false;
	for (const char *p = s; p < c; p++) {
		if (start ? !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
			  : !(alnum(*p) || strchr("+._-", *p)))
			return false;
		start = *p && strchr("+._-", *p);
	}
	return !start && strlen(c + 1) >= 32 &&
	       strspn(c + 1, "0123456789abcdefABCDEF") == strlen(c + 1);
}

/* tag := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127} */
static bool ref_tag(const char *s, const char *e)
{
	if (s == e || e - s > 128 || !(alnum(*s) || *s == '_'))
		return false;
	for (; s < e; s++)
		if (!(alnum(*s) || *s == '_' || *s == '.' || *s == '-'))
			return false;
	return true;
}

bool image_ref_valid(const char *ref)
{
	const char *at, *end, *slash, *colon, *c;
	size_t len = ref ? strnlen(ref, REF_MAX + 1) : 0;
	bool first = true;

	if (!len || len > REF_MAX)
		return false;
	at = strchr(ref, '@');
	if (at && !ref_digest(at + 1))
		return false;
	end = at ? at : ref + len;
	slash = NULL;
	for (c = ref; c < end; c++)
		if (*c == '/')
			slash = c;
	colon = memchr(slash ? slash : ref, ':', (size_t)(end - (slash ? slash : ref)));
	if (colon && !ref_tag(colon + 1, end))
		return false;
	end = colon ? colon : end;
	if (end - ref > 255) /* distribution's NameTotalLengthMax */
		return false;
	for (c = ref; c <= end;) {
		const char *e = memchr(c, '/', (size_t)(end - c));

		e = e ? e : end;
		/* the first of several components is a domain when it looks
		 * like one (a dot, a port, or "localhost"), as docker reads it */
		if (first && e < end &&
		    (memchr(c, '.', (size_t)(e - c)) || memchr(c, ':', (size_t)(e - c)) ||
		     (e - c == 9 && !strncmp(c, "localhost", 9)) || *c == '[')) {
			if (!ref_domain(c, e))
				return false;
		} else if (!ref_path_component(c, e)) {
			return false;
		}
		first = false;
		c = e + 1;
	}
	return true;
}

bool image_digest_valid(const char *d)
{
	return d && !strncmp(d, "sha256:", 7) && strlen(d + 7) == 64 &&
	       strspn(d + 7, "0123456789abcdef") == 64;
}

static json_object *parse(const char *json, size_t len)
{
	json_tokener *tok;
	json_object *o;
	size_t end;

	if (len > IMAGE_MANIFEST_MAX || !(tok = json_tokener_new()))
		return NULL;
	o = json_tokener_parse_ex(tok, json, (int)len);
	end = json_tokener_get_parse_end(tok);
	while (end < len && strchr(" \t\r\n", json[end]) && json[end])
		end++;
	/* one whole document: no error, nothing but spaces after it */
	if (json_tokener_get_error(tok) != json_tokener_success || end < len) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

static json_object *get(json_object *o, const char *key, json_type type)
{
	json_object *v;

	return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) &&
		       json_object_is_type(v, type)
		   ? v
		   : NULL;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v = get(o, key, json_type_string);

	return v ? json_object_get_string(v) : NULL;
}

int image_oci_index(const char *json, size_t len, const char *ref, char digest[72])
{
	json_object *idx = parse(json, len), *list = get(idx, "manifests", json_type_array);
	int r = idx ? -ENOENT : -EINVAL;

	for (size_t i = 0; list && r == -ENOENT && i < json_object_array_length(list); i++) {
		json_object *m = json_object_array_get_idx(list, i);
		const char *name = get_str(get(m, "annotations", json_type_object),
					   "org.opencontainers.image.ref.name");
		const char *d = get_str(m, "digest");

		if (!name || strcmp(name, ref))
			continue;
		r = image_digest_valid(d) ? 0 : -EINVAL;
		if (!r)
			memcpy(digest, d, strlen(d) + 1);
	}
	json_object_put(idx);
	return r;
}

int image_oci_layers(const char *json, size_t len, struct image_names *out)
{
	json_object *man = parse(json, len), *layers = get(man, "layers", json_type_array);
	int r = layers ? 0 : -EINVAL;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; !r && i < json_object_array_length(layers); i++) {
		const char *d = get_str(json_object_array_get_idx(layers, i), "digest");

		if (out->n == IMAGE_MAX_LAYERS || !image_digest_valid(d))
			r = -EINVAL;
		else if (!(out->name[out->n++] = strdup(d)))
			r = -ENOMEM;
	}
	if (r)
		image_names_release(out);
	json_object_put(man);
	return r;
}

static bool has_tag(json_object *e, const char *ref)
{
	json_object *tags = get(e, "RepoTags", json_type_array);

	for (size_t t = 0; tags && t < json_object_array_length(tags); t++) {
		json_object *s = json_object_array_get_idx(tags, t);

		if (json_object_is_type(s, json_type_string) &&
		    !strcmp(json_object_get_string(s), ref))
			return true;
	}
	return false;
}

int image_docker_layers(const char *json, size_t len, const char *ref, struct image_names *out)
{
	json_object *man = parse(json, len), *layers = NULL;
	int r = json_object_is_type(man, json_type_array) ? -ENOENT : -EINVAL;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; r == -ENOENT && i < json_object_array_length(man); i++) {
		json_object *e = json_object_array_get_idx(man, i);

		if (has_tag(e, ref))
			r = (layers = get(e, "Layers", json_type_array)) ? 0 : -EINVAL;
	}
	for (size_t l = 0; !r && l < json_object_array_length(layers); l++) {
		json_object *s = json_object_array_get_idx(layers, l);
		char *m;

		if (out->n == IMAGE_MAX_LAYERS || !json_object_is_type(s, json_type_string))
			r = -EINVAL;
		else if (!(m = out->name[out->n++] = strdup(json_object_get_string(s))))
			r = -ENOMEM;
		else if (tar_name_norm(m) || !*m)
			r = -EINVAL;
	}
	if (r)
		image_names_release(out);
	json_object_put(man);
	return r;
}
