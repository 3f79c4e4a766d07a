/* SPDX-License-Identifier: MIT */
/*
 * fw.h - common definitions of vmlet's freestanding guest library. Only the
 * compiler's freestanding headers are used (stdint, stddef, stdarg,
 * stdbool). Everything here is usable at CPL0 and CPL3 unless a header
 * says otherwise.
 */
#ifndef FW_LIB_FW_H
#define FW_LIB_FW_H

#ifndef __ASSEMBLER__
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

#define FW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FW_NORETURN	 __attribute__((noreturn))
#define FW_PACKED	 __attribute__((packed))
#define FW_ALIGNED(n)	 __attribute__((aligned(n)))

#ifndef __ASSEMBLER__
/* string.c: the libc names, because the compiler may emit calls to them. */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/* printf.c: %d %i %u %x %X %p %s %c %% with flags '-' '0', width,
 * precision for %s, length h hh l ll z. No floating point. Always
 * NUL-terminates (when n > 0); returns the length the full output needs. */
int fw_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int fw_snprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A growing text buffer on caller-provided storage; overflow is sticky. */
struct fw_buf {
	char *p;
	size_t len, cap;
	bool overflow;
};
void fw_buf_init(struct fw_buf *b, char *storage, size_t cap);
void fw_buf_printf(struct fw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ceil(log2(n)) for n >= 1 (0 for n <= 1): Linux's get_count_order. */
static inline uint32_t fw_count_order(uint32_t n)
{
	uint32_t o = 0;

	while (n > 1 && (1u << o) < n)
		o++;
	return o;
}

#endif /* __ASSEMBLER__ */
#endif /* FW_LIB_FW_H */
