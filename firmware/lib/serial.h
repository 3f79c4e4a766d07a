/* SPDX-License-Identifier: MIT */
/*
 * serial.h - polled 16550 UART output. Each port access is a VM exit, so
 * output waits for LSR.THRE once per FIFO load (16 bytes) instead of once
 * per byte. Callable at CPL0, or at CPL3 when the port range is granted in
 * the TSS I/O bitmap (much slower there: see docs/hosts.md).
 */
#ifndef FW_LIB_SERIAL_H
#define FW_LIB_SERIAL_H

#include "firmware/lib/fw.h"

struct fw_serial {
	uint16_t port;
	uint16_t burst; /* bytes per THRE: 16 with a working FIFO, else 1 */
};

/* 115200 8N1, FIFO on, interrupts off. */
void fw_serial_init(struct fw_serial *s, uint16_t port);
/* Write len bytes, "\n" as is (the report parser accepts "\r\n" too). */
void fw_serial_write(const struct fw_serial *s, const char *buf, size_t len);

#endif /* FW_LIB_SERIAL_H */
