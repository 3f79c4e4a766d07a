/* SPDX-License-Identifier: MIT */
/*
 * json_out.h - the one way vmm/ writes JSON: json-c objects, printed
 * compact ({"a":1,"b":[]}, no spaces) with '/' left unescaped, and every
 * string made valid UTF-8 first. Used by the log's JSON lines
 * (vmm/util/log.c), the probe report (vmm/probe/report*.c) and cloud-init's
 * meta-data (vmm/disk/cloudinit.c).
 *
 * Strings are untrusted (the guest's report, the manifest's names, log
 * messages that quote either): json-c escapes '"', '\\' and the control
 * characters (\b \f \n \r \t, others \u00XX), but passes any other byte
 * through, so a byte sequence that is not UTF-8 would make the text
 * invalid JSON. json_out_str() replaces each such byte with U+FFFD, as
 * Go's encoding/json (KubeVirt's writer) does.
 *
 * Functions that build return NULL or -ENOMEM when json-c cannot allocate.
 */
#ifndef VMLET_JSON_OUT_H
#define VMLET_JSON_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

/* A json-c string holding s (NULL: ""), invalid UTF-8 replaced by U+FFFD. */
struct json_object *json_out_str(const char *s);

/* obj[key] = value, the value built as json_out_str / json-c's int64,
 * uint64 and boolean; 0 or -ENOMEM. A NULL obj is -ENOMEM too, so a chain
 * of adds after a failed json_object_new_object() just fails. */
int json_out_add_str(struct json_object *obj, const char *key, const char *s);
int json_out_add_u64(struct json_object *obj, const char *key, uint64_t v);
int json_out_add_bool(struct json_object *obj, const char *key, bool v);
/* obj[key] = v, taking v (freed on failure, NULL is -ENOMEM). */
int json_out_add(struct json_object *obj, const char *key, struct json_object *v);
/* Append v to the array arr, taking v (freed on failure). */
int json_out_append(struct json_object *arr, struct json_object *v);

/* An array of the n strings at v, v + stride, ... (each NUL-terminated
 * within stride bytes, as a char [n][stride] table). */
struct json_object *json_out_str_array(const char *v, size_t stride, size_t n);

/* The text of o as described above; owned by o (valid until it is freed
 * or changed). NULL when json-c cannot allocate. */
const char *json_out_text(struct json_object *o);

/* Write the text of o on f (no newline): 0, -ENOMEM or -EIO. */
int json_out_write(FILE *f, struct json_object *o);

#endif /* VMLET_JSON_OUT_H */
