/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/quantity.h"
#include "spec/spec.h"

#define NANO 1000000000LL
static const __int128 LIMIT = (__int128)NANO * ((__int128)1 << 63);

static __int128 pow10i(int e)
{
	__int128 v = 1;

	while (e-- > 0)
		v *= 10;
	return v;
}

struct suffix {
	const char *s;
	int base, exp; /* base^exp */
	enum qty_format f;
};

static const struct suffix suffixes[] = {
    {"Ki", 2, 10, QTY_BINARY_SI},  {"Mi", 2, 20, QTY_BINARY_SI},  {"Gi", 2, 30, QTY_BINARY_SI},
    {"Ti", 2, 40, QTY_BINARY_SI},  {"Pi", 2, 50, QTY_BINARY_SI},  {"Ei", 2, 60, QTY_BINARY_SI},
    {"n", 10, -9, QTY_DECIMAL_SI}, {"u", 10, -6, QTY_DECIMAL_SI}, {"m", 10, -3, QTY_DECIMAL_SI},
    {"", 10, 0, QTY_DECIMAL_SI},   {"k", 10, 3, QTY_DECIMAL_SI},  {"M", 10, 6, QTY_DECIMAL_SI},
    {"G", 10, 9, QTY_DECIMAL_SI},  {"T", 10, 12, QTY_DECIMAL_SI}, {"P", 10, 15, QTY_DECIMAL_SI},
    {"E", 10, 18, QTY_DECIMAL_SI},
};

/* mant / 10^frac * base^exp in nanos, rounded up in magnitude. */
static int scale(__int128 mant, int frac, int base, int exp, __int128 *out)
{
	__int128 num = mant, den = pow10i(frac);
	int e;

	/* nanos = mant * 10^9 * base^exp / 10^frac */
	if (base == 10) {
		e = exp + 9;
		if (e >= 0) {
			while (e-- > 0) {
				if (num > LIMIT)
					return -ERANGE;
				num *= 10;
			}
		} else if (frac - e > 38) {
			/* 10^(frac-e) would not fit 128 bits; mant has at most
			 * 30 digits, so the quotient is below one nano */
			*out = mant ? 1 : 0;
			return 0;
		} else {
			den *= pow10i(-e);
		}
	} else {
		/* mant * 10^(9 - frac) * 2^exp: 30 digits times 10^9 would
		 * overflow, so the powers of ten cancel first and the quotient
		 * and remainder are doubled apart (binary long division) */
		if (frac <= 9) {
			if (num > LIMIT)
				return -ERANGE;
			num *= pow10i(9 - frac);
			den = 1;
		} else {
			den = pow10i(frac - 9);
		}
		__int128 r = num % den;

		num /= den;
		for (e = 0; e < exp; e++) {
			if (num > LIMIT)
				return -ERANGE;
			num *= 2;
			r *= 2;
			if (r >= den) {
				num++;
				r -= den;
			}
		}
		num += r ? 1 : 0;
		den = 1;
	}
	*out = num / den + (num % den ? 1 : 0);
	if (*out >= LIMIT)
		return -ERANGE;
	return 0;
}

int qty_parse(const char *s, struct quantity *q)
{
	const char *p = s;
	bool neg = false, digits = false;
	__int128 mant = 0;
	int frac = 0, sig = 0, i;
	const struct suffix *sf = NULL;
	long exp;
	int ret;

	if (!s)
		return -EINVAL;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	for (; *p >= '0' && *p <= '9'; p++) {
		digits = true;
		if (mant || *p != '0')
			sig++;
		if (sig > 30)
			return -ERANGE;
		mant = mant * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			digits = true;
			if (frac >= 30)
				continue; /* far below nano precision */
			if (mant || *p != '0')
				sig++;
			if (sig > 30)
				return -ERANGE;
			mant = mant * 10 + (*p - '0');
			frac++;
		}
	}
	if (!digits)
		return -EINVAL;
	if ((*p == 'e' || *p == 'E') &&
	    ((p[1] >= '0' && p[1] <= '9') || ((p[1] == '-' || p[1] == '+') && p[2]))) {
		char *end;

		errno = 0;
		exp = strtol(p + 1, &end, 10);
		if (*end || end == p + 1 || errno || exp > 40 || exp < -40)
			return *end || end == p + 1 ? -EINVAL : -ERANGE;
		ret = scale(mant, frac, 10, (int)exp, &q->nanos);
		q->format = QTY_DECIMAL_EXP;
	} else {
		for (i = 0; i < (int)(sizeof(suffixes) / sizeof(suffixes[0])); i++)
			if (strcmp(p, suffixes[i].s) == 0)
				sf = &suffixes[i];
		if (!sf)
			return -EINVAL;
		ret = scale(mant, frac, sf->base, sf->exp, &q->nanos);
		q->format = sf->f;
	}
	if (ret)
		return ret;
	if (neg)
		q->nanos = -q->nanos;
	return 0;
}

/* The command line's units: Kubernetes' up to T/Ti, plus K and B. */
static const struct suffix *size_suffix(const char *s)
{
	if (!strcmp(s, "K"))
		s = "Ki"; /* as dd, QEMU and the sizes of --help */
	else if (!strcmp(s, "B"))
		s = "";
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (!strcmp(s, suffixes[i].s))
			return suffixes[i].exp < 0 ||
				       suffixes[i].exp > (suffixes[i].base == 2 ? 40 : 12)
				   ? NULL
				   : &suffixes[i];
	return NULL;
}

int spec_parse_size(const char *s, uint64_t *out)
{
	const struct suffix *sf;
	unsigned long long v;
	uint64_t mul = 1;
	char *end;

	if (!s || !out || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	sf = size_suffix(end);
	if (!sf)
		return -EINVAL;
	for (int e = 0; e < sf->exp; e++)
		mul *= (uint64_t)sf->base;
	if (__builtin_mul_overflow((uint64_t)v, mul, out))
		return -EINVAL;
	return 0;
}

static void put_i128(__int128 v, char *buf, size_t len)
{
	char tmp[48];
	int i = 0;
	unsigned __int128 u = v < 0 ? (unsigned __int128)-v : (unsigned __int128)v;

	do {
		tmp[i++] = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[i++] = '-';
	for (size_t j = 0; j < len - 1 && i > 0; j++)
		*buf++ = tmp[--i];
	*buf = 0;
}

void qty_format(const struct quantity *q, char *buf, size_t len)
{
	static const char *const dec[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
	static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	__int128 v = q->nanos, a = v < 0 ? -v : v;
	char num[48];
	int k, e;

	if (q->format == QTY_BINARY_SI && a % NANO == 0 && a >= (__int128)1024 * NANO) {
		__int128 n = v / NANO;

		for (k = 0; k < 6 && n % 1024 == 0; k++)
			n /= 1024;
		put_i128(n, num, sizeof(num));
		snprintf(buf, len, "%s%s", num, bin[k]);
		return;
	}
	if (v == 0) {
		snprintf(buf, len, "0");
		return;
	}
	/* largest exponent (multiple of 3, from -9) keeping an integer */
	for (e = -9; e < 18 && v % pow10i(e + 9 + 3) == 0; e += 3)
		;
	put_i128(v / pow10i(e + 9), num, sizeof(num));
	if (q->format == QTY_DECIMAL_EXP)
		snprintf(buf, len, e ? "%se%d" : "%s", num, e);
	else
		snprintf(buf, len, "%s%s", num, dec[(e + 9) / 3]);
}

int64_t qty_value(const struct quantity *q)
{
	__int128 v = q->nanos / NANO;

	if (q->nanos % NANO > 0)
		v++;
	if (v > INT64_MAX)
		return INT64_MAX;
	if (v < INT64_MIN)
		return INT64_MIN;
	return (int64_t)v;
}

bool qty_is_int(const struct quantity *q)
{
	return q->nanos % NANO == 0;
}

int qty_cmp(const struct quantity *a, const struct quantity *b)
{
	return a->nanos < b->nanos ? -1 : a->nanos > b->nanos;
}

struct quantity qty_from_int(int64_t v, enum qty_format f)
{
	struct quantity q = {.nanos = (__int128)v * NANO, .format = f};

	return q;
}
