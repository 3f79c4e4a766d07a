/* SPDX-License-Identifier: MIT */
/*
 * quantity.h - Kubernetes resource quantities ("4Gi", "500m", "1.5G",
 * "12e6"), parsed exactly into nano-units and printed in Kubernetes'
 * canonical form ("1Gi", "512Mi", "1500m", "0").
 *
 * Values are limited to |v| < 2^63 base units (so every byte count fits
 * int64); sub-nano precision is rounded up like Kubernetes does.
 */
#ifndef VMLET_SPEC_QUANTITY_H
#define VMLET_SPEC_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum qty_format { QTY_DECIMAL_SI = 0, QTY_BINARY_SI, QTY_DECIMAL_EXP };

struct quantity {
	__int128 nanos; /* value * 10^9 */
	enum qty_format format;
};

/* 0, or -EINVAL (syntax) / -ERANGE (too large). */
int qty_parse(const char *s, struct quantity *q);
/* Canonical text into buf (>= 48 bytes is always enough). */
void qty_format(const struct quantity *q, char *buf, size_t len);
/* Value in base units rounded up (Quantity.Value()). */
int64_t qty_value(const struct quantity *q);
/* The value is an integer number of base units. */
bool qty_is_int(const struct quantity *q);
int qty_cmp(const struct quantity *a, const struct quantity *b);
struct quantity qty_from_int(int64_t v, enum qty_format f);

#endif /* VMLET_SPEC_QUANTITY_H */
