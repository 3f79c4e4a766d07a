/* SPDX-License-Identifier: MIT */
/*
 * aml.h - a small emitter of ACPI Machine Language (ACPI 6.5 §20.2 "AML
 * Grammar Definition") for the DSDT vmlet builds, plus resource template
 * descriptors (§6.4 "Resource Data Types for ACPI").
 *
 * Output goes to a caller-supplied buffer; on overflow or a bad name the
 * emitter sets err (-ENOSPC / -EINVAL) and ignores further output, so a
 * builder can emit everything and check err once. Blocks with a PkgLength
 * (Scope, Device, Method, Package) are opened and closed in LIFO order.
 */
#ifndef VMLET_ARCH_X86_64_AML_H
#define VMLET_ARCH_X86_64_AML_H

#include <stddef.h>
#include <stdint.h>

struct aml {
	uint8_t *buf;
	size_t cap, len;
	int err;
};

void aml_init(struct aml *a, uint8_t *buf, size_t cap);
void aml_bytes(struct aml *a, const void *p, size_t n);
/* NameString: "\\_SB_.PCI0", "_HID", "^FOO"; segments are padded with '_'. */
void aml_name_string(struct aml *a, const char *path);
void aml_integer(struct aml *a, uint64_t v); /* Zero/One/Ones or shortest prefix */
void aml_string(struct aml *a, const char *s);
/* EISA ID "PNP0A03" as its compressed DWord (ACPI 6.5 §6.1.5 _HID). */
void aml_eisaid(struct aml *a, const char *id);
/* Buffer(n) { bytes } */
void aml_buffer(struct aml *a, const uint8_t *bytes, size_t n);

/* Name(path, <object emitted next>) */
void aml_name(struct aml *a, const char *path);
void aml_name_integer(struct aml *a, const char *path, uint64_t v);
void aml_name_string_obj(struct aml *a, const char *path, const char *s);
void aml_name_eisaid(struct aml *a, const char *path, const char *id);

/* Blocks: each *_open returns a token to pass to aml_close(). */
size_t aml_scope_open(struct aml *a, const char *path);
size_t aml_device_open(struct aml *a, const char *path);
size_t aml_method_open(struct aml *a, const char *path, unsigned nargs, int serialized);
size_t aml_package_open(struct aml *a, unsigned n_elements);
void aml_close(struct aml *a, size_t token);
void aml_return_integer(struct aml *a, uint64_t v);

/* Resource templates: append descriptors to rt, end with aml_rt_end(). */
struct aml_rt {
	uint8_t b[256];
	size_t len;
	int err;
};
void aml_rt_io(struct aml_rt *rt, uint16_t base, uint8_t len);	      /* IO(Decode16) */
void aml_rt_irq(struct aml_rt *rt, unsigned irq);		      /* IRQNoFlags */
void aml_rt_word_bus(struct aml_rt *rt, uint16_t min, uint16_t max);  /* WordBusNumber */
void aml_rt_word_io(struct aml_rt *rt, uint16_t min, uint16_t max);   /* WordIO window */
void aml_rt_dword_mem(struct aml_rt *rt, uint32_t min, uint32_t max); /* DWordMemory window */
/* Memory32Fixed(ReadWrite, base, len) */
void aml_rt_mem32_fixed(struct aml_rt *rt, uint32_t base, uint32_t len);
void aml_rt_end(struct aml_rt *rt);
/* Name(path, ResourceTemplate() {...}) */
void aml_name_rt(struct aml *a, const char *path, const struct aml_rt *rt);

#endif /* VMLET_ARCH_X86_64_AML_H */
