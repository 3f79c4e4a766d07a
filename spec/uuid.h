/* SPDX-License-Identifier: MIT */
/*
 * uuid.h - the UUIDs KubeVirt derives or draws for a VM, as text
 * ("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower-case hex, 36 characters
 * and a NUL).
 */
#ifndef VMLET_SPEC_UUID_H
#define VMLET_SPEC_UUID_H

#include <stddef.h>
#include <stdint.h>

#define UUID_STR_LEN 37

/* SHA-1 (FIPS 180-4) of data[0..n) into out. */
void uuid_sha1(const void *data, size_t n, uint8_t out[20]);

/* RFC 9562 version 5: SHA-1 of the namespace's 16 bytes and then name's
 * bytes, as Go's uuid.NewSHA1(ns, []byte(name)). ns is a UUID string;
 * -EINVAL when it is not one. */
int uuid_v5(const char *ns, const char *name, char out[UUID_STR_LEN]);

/* KubeVirt's CalculateLegacyUUID(name) (pkg/virt-controller/watch/vm/
 * firmware.go): version 5 in namespace 6a1a24a1-4061-4607-8bf4-a3963d0c5895
 * of the VM's name, the firmware UUID a VM without one is given. */
void uuid_kubevirt_legacy(const char *vm_name, char out[UUID_STR_LEN]);

/* A random version 4 UUID (getrandom(2)), as Go's uuid.NewString(). 0 or
 * -errno. */
int uuid_v4(char out[UUID_STR_LEN]);

/* 0 when s is a UUID in text form (either case); -EINVAL otherwise. */
int uuid_parse(const char *s, uint8_t out[16]);

#endif /* VMLET_SPEC_UUID_H */
