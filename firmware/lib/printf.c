/* SPDX-License-Identifier: MIT */
/* printf.c - a small vsnprintf: integers and strings, no floating point. */
#include "firmware/lib/fw.h"

struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->cap)
		o->buf[o->len] = c;
	o->len++;
}

static void put_padded(struct out *o, const char *s, size_t n, int width, bool left, char pad)
{
	int fill = width > (int)n ? width - (int)n : 0;

	if (!left)
		while (fill-- > 0)
			put(o, pad);
	for (size_t i = 0; i < n; i++)
		put(o, s[i]);
	if (left)
		while (fill-- > 0)
			put(o, ' ');
}

static size_t utoa(char *tmp, unsigned long long v, unsigned base, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char rev[24];
	size_t n = 0, i = 0;

	do {
		rev[n++] = digits[v % base];
		v /= base;
	} while (v);
	while (n)
		tmp[i++] = rev[--n];
	return i;
}

struct spec {
	bool left, zero;
	int width, prec, len; /* len: -2 hh, -1 h, 0 int, 1 l, 2 ll, 3 z */
};

static const char *parse_spec(const char *f, struct spec *s, va_list *ap)
{
	*s = (struct spec){.prec = -1};
	for (;; f++) {
		if (*f == '-')
			s->left = true;
		else if (*f == '0')
			s->zero = true;
		else
			break;
	}
	if (*f == '*') {
		s->width = va_arg(*ap, int);
		f++;
	}
	while (*f >= '0' && *f <= '9')
		s->width = s->width * 10 + (*f++ - '0');
	if (*f == '.') {
		f++;
		s->prec = 0;
		if (*f == '*') {
			s->prec = va_arg(*ap, int);
			f++;
		}
		while (*f >= '0' && *f <= '9')
			s->prec = s->prec * 10 + (*f++ - '0');
	}
	for (;; f++) {
		if (*f == 'h')
			s->len--;
		else if (*f == 'l')
			s->len++;
		else if (*f == 'z')
			s->len = 3;
		else
			break;
	}
	return f;
}

static unsigned long long get_unsigned(const struct spec *s, va_list *ap)
{
	switch (s->len) {
	case -2:
		return (unsigned char)va_arg(*ap, unsigned int);
	case -1:
		return (unsigned short)va_arg(*ap, unsigned int);
	case 0:
		return va_arg(*ap, unsigned int);
	case 1:
		return va_arg(*ap, unsigned long);
	case 3:
		return va_arg(*ap, size_t);
	default:
		return va_arg(*ap, unsigned long long);
	}
}

static long long get_signed(const struct spec *s, va_list *ap)
{
	switch (s->len) {
	case -2:
		return (signed char)va_arg(*ap, int);
	case -1:
		return (short)va_arg(*ap, int);
	case 0:
		return va_arg(*ap, int);
	case 1:
		return va_arg(*ap, long);
	case 3:
		return (long long)va_arg(*ap, size_t);
	default:
		return va_arg(*ap, long long);
	}
}

static void put_number(struct out *o, const struct spec *s, char conv, va_list *ap)
{
	char tmp[24];
	unsigned long long v;
	bool neg = false;
	size_t n;

	if (conv == 'd' || conv == 'i') {
		long long sv = get_signed(s, ap);

		neg = sv < 0;
		v = neg ? 0ull - (unsigned long long)sv : (unsigned long long)sv;
	} else if (conv == 'p') {
		v = (uintptr_t)va_arg(*ap, void *);
		put(o, '0');
		put(o, 'x');
	} else {
		v = get_unsigned(s, ap);
	}
	n = utoa(tmp, v, conv == 'u' || conv == 'd' || conv == 'i' ? 10 : 16, conv == 'X');
	if (neg) {
		if (s->zero && !s->left) {
			put(o, '-');
			put_padded(o, tmp, n, s->width - 1, false, '0');
			return;
		}
		char t2[25];

		t2[0] = '-';
		memcpy(t2 + 1, tmp, n);
		put_padded(o, t2, n + 1, s->width, s->left, ' ');
		return;
	}
	put_padded(o, tmp, n, s->width, s->left, s->zero && !s->left ? '0' : ' ');
}

int fw_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap_in)
{
	struct out o = {buf, cap, 0};
	va_list ap;

	va_copy(ap, ap_in);
	for (const char *f = fmt; *f; f++) {
		struct spec s;

		if (*f != '%') {
			put(&o, *f);
			continue;
		}
		f = parse_spec(f + 1, &s, &ap);
		switch (*f) {
		case 's': {
			const char *str = va_arg(ap, const char *);
			size_t n;

			if (!str)
				str = "(null)";
			n = s.prec >= 0 ? strnlen(str, (size_t)s.prec) : strlen(str);
			put_padded(&o, str, n, s.width, s.left, ' ');
			break;
		}
		case 'c': {
			char c = (char)va_arg(ap, int);

			put_padded(&o, &c, 1, s.width, s.left, ' ');
			break;
		}
		case 'd':
		case 'i':
		case 'u':
		case 'x':
		case 'X':
		case 'p':
			put_number(&o, &s, *f, &ap);
			break;
		case '%':
			put(&o, '%');
			break;
		case '\0':
			f--;
			break;
		default:
			put(&o, '%');
			put(&o, *f);
			break;
		}
	}
	va_end(ap);
	if (cap)
		buf[o.len < cap ? o.len : cap - 1] = '\0';
	return (int)o.len;
}

int fw_snprintf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fw_vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

void fw_buf_init(struct fw_buf *b, char *storage, size_t cap)
{
	*b = (struct fw_buf){.p = storage, .cap = cap};
	if (cap)
		storage[0] = '\0';
}

void fw_buf_printf(struct fw_buf *b, const char *fmt, ...)
{
	va_list ap;
	size_t room = b->cap - b->len;
	int n;

	if (b->overflow || !room)
		return;
	va_start(ap, fmt);
	n = fw_vsnprintf(b->p + b->len, room, fmt, ap);
	va_end(ap);
	if ((size_t)n >= room) {
		b->overflow = true;
		b->p[b->len] = '\0';
		return;
	}
	b->len += (size_t)n;
}
