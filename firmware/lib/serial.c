/* SPDX-License-Identifier: MIT */
/* serial.c - polled 16550 output. */
#include "firmware/lib/io.h"
#include "firmware/lib/serial.h"

#define UART_THR 0
#define UART_DLL 0
#define UART_IER 1
#define UART_DLM 1
#define UART_FCR 2
#define UART_IIR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5

#define LSR_THRE    0x20
#define LCR_DLAB    0x80
#define LCR_8N1	    0x03
#define FCR_ON	    0x07 /* enable, clear both FIFOs */
#define MCR_DTR_RTS 0x03

/* Bounded: a missing UART reads 0xff (THRE set), a stuck one gives up. */
#define THRE_SPINS 100000

void fw_serial_init(struct fw_serial *s, uint16_t port)
{
	s->port = port;
	outb(port + UART_IER, 0);
	outb(port + UART_LCR, LCR_DLAB);
	outb(port + UART_DLL, 1); /* 115200 */
	outb(port + UART_DLM, 0);
	outb(port + UART_LCR, LCR_8N1);
	outb(port + UART_FCR, FCR_ON);
	outb(port + UART_MCR, MCR_DTR_RTS);
	/* IIR bits 7:6 = 11: the FIFO is there and on */
	s->burst = (inb(port + UART_IIR) & 0xc0) == 0xc0 ? 16 : 1;
}

void fw_serial_write(const struct fw_serial *s, const char *buf, size_t len)
{
	size_t i = 0;

	while (i < len) {
		for (unsigned spin = 0; spin < THRE_SPINS; spin++)
			if (inb(s->port + UART_LSR) & LSR_THRE)
				break;
		for (unsigned n = 0; n < s->burst && i < len; n++)
			outb(s->port + UART_THR, (uint8_t)buf[i++]);
	}
}
