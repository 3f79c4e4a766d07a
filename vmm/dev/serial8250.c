/* SPDX-License-Identifier: MIT */
/*
 * serial8250.c - a 16550A UART on COM1 (0x3f8, IRQ 4): the guest console.
 *
 * Transmit is immediate (the transmitter is always empty), so LSR always
 * shows THRE|TEMT and a THRE interrupt is pending after each THR write and
 * when the guest enables it. Transmitted bytes go to a bounded ring that
 * the event loop drains to the console (dev/console_out.h): a console
 * nobody reads drops output, it never stops the vCPU. Receive has a 16-byte FIFO like the chip's,
 * fed from a 4 KiB buffer of host input as the guest empties it (a line
 * piped or pasted at once arrives whole, however slowly the guest reads);
 * while that buffer is full, stdin is not read (polled again every 20 ms);
 * input from a control-socket client that does not fit is dropped with
 * the overrun bit set. Loopback (MCR bit 4) routes THR to the receiver and MCR outputs to
 * MSR inputs, which Linux's autoconfig checks. Register map: PC16550D data
 * sheet, "Register descriptions".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <termios.h>
#include <unistd.h>

#include "arch/x86_64/layout.h"
#include "vmm/vm/bus.h"
#include "vmm/dev/console_out.h"
#include "vmm/dev/devices.h"
#include "vmm/vm/device.h"
#include "vmm/util/event.h"
#include "vmm/vm/irq.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/vm_config.h"

#define UART_IER_RDI   0x01
#define UART_IER_THRI  0x02
#define UART_IIR_NONE  0x01
#define UART_IIR_THRI  0x02
#define UART_IIR_RDI   0x04
#define UART_IIR_FIFO  0xc0
#define UART_FCR_FIFO  0x01
#define UART_FCR_CLRRX 0x02
#define UART_LCR_DLAB  0x80
#define UART_MCR_LOOP  0x10
#define UART_LSR_DR    0x01
#define UART_LSR_OE    0x02
#define UART_LSR_THRE  0x20
#define UART_LSR_TEMT  0x40
#define UART_MSR_CTS   0x10
#define UART_MSR_DSR   0x20
#define UART_MSR_DCD   0x80
#define UART_RX_FIFO   16
#define UART_IN_BUF    4096 /* host input waiting for room in the FIFO */
#define UART_IN_RETRY  20   /* ms between looks at a full input buffer */

struct serial8250 {
	struct vm *vm;
	struct event_loop *loop;
	struct bus *pio;
	bool registered;
	pthread_mutex_t lock;
	enum vm_console_kind kind;
	struct console_out *out;
	int in_fd;
	bool in_watched, tty_raw;
	struct termios saved_tty;

	uint8_t ier, lcr, mcr, lsr_err, scr, dll, dlm, fcr;
	bool thr_pending;
	uint8_t rx[UART_RX_FIFO];
	unsigned int rx_head, rx_count;
	int irq_level;

	uint8_t in_buf[UART_IN_BUF];
	unsigned int in_head, in_count;
	struct event_timer *in_timer; /* re-watches stdin after a pause */
};

static uint8_t serial_iir(const struct serial8250 *s)
{
	uint8_t fifo = (s->fcr & UART_FCR_FIFO) ? UART_IIR_FIFO : 0;

	if ((s->ier & UART_IER_RDI) && s->rx_count)
		return fifo | UART_IIR_RDI;
	if ((s->ier & UART_IER_THRI) && s->thr_pending)
		return fifo | UART_IIR_THRI;
	return fifo | UART_IIR_NONE;
}

/* Lock held. ISA interrupts are edges: the line stays high while an
 * interrupt is pending and drops when it is gone. */
static void serial_update_irq(struct serial8250 *s)
{
	int level = !(serial_iir(s) & UART_IIR_NONE);

	if (level != s->irq_level) {
		s->irq_level = level;
		irq_line(s->vm, ARCH_COM1_IRQ, level);
	}
}

static void serial_rx_push(struct serial8250 *s, uint8_t b)
{
	if (s->rx_count == UART_RX_FIFO) {
		s->lsr_err |= UART_LSR_OE;
		return;
	}
	s->rx[(s->rx_head + s->rx_count++) % UART_RX_FIFO] = b;
}

/* Lock held: waiting host input into the receive FIFO, as room allows. */
static void serial_rx_fill(struct serial8250 *s)
{
	while (s->in_count && s->rx_count < UART_RX_FIFO) {
		serial_rx_push(s, s->in_buf[s->in_head]);
		s->in_head = (s->in_head + 1) % UART_IN_BUF;
		s->in_count--;
	}
}

static uint8_t serial_rx_pop(struct serial8250 *s)
{
	uint8_t b;

	if (!s->rx_count)
		return 0;
	b = s->rx[s->rx_head];
	s->rx_head = (s->rx_head + 1) % UART_RX_FIFO;
	s->rx_count--;
	serial_rx_fill(s);
	return b;
}

/* Lock held. Never blocks: the output ring drops what does not fit. */
static void serial_tx_buf(struct serial8250 *s, const uint8_t *buf, size_t n)
{
	if (s->mcr & UART_MCR_LOOP) {
		for (size_t i = 0; i < n; i++)
			serial_rx_push(s, buf[i]);
		return;
	}
	if (s->kind == VM_CONSOLE_CAPTURE)
		device_console_capture(s->vm, buf, n);
	/* the console, and a client of `vmlet ctl console` */
	console_out_write(s->out, buf, n);
}

static void serial_tx(struct serial8250 *s, uint8_t b)
{
	serial_tx_buf(s, &b, 1);
}

/* Output the firmware hands over in one piece (the EFI port's console op):
 * the same path as THR writes, any thread. */
static void serial_output(void *opaque, const void *buf, size_t n)
{
	struct serial8250 *s = opaque;

	pthread_mutex_lock(&s->lock);
	serial_tx_buf(s, buf, n);
	if (s->mcr & UART_MCR_LOOP)
		serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

static uint8_t serial_msr(const struct serial8250 *s)
{
	if (s->mcr & UART_MCR_LOOP) /* DTR->DSR, RTS->CTS, OUT1->RI, OUT2->DCD */
		return (uint8_t)(((s->mcr & 0x01) << 5) | ((s->mcr & 0x02) << 3) |
				 ((s->mcr & 0x04) << 4) | ((s->mcr & 0x08) << 4));
	return UART_MSR_DCD | UART_MSR_DSR | UART_MSR_CTS;
}

static uint8_t serial_read_reg(struct serial8250 *s, unsigned int reg)
{
	bool dlab = s->lcr & UART_LCR_DLAB;
	uint8_t v;

	switch (reg) {
	case 0:
		return dlab ? s->dll : serial_rx_pop(s);
	case 1:
		return dlab ? s->dlm : s->ier;
	case 2:
		v = serial_iir(s);
		if ((v & 0x0f) == UART_IIR_THRI)
			s->thr_pending = false; /* reading IIR acknowledges THRE */
		return v;
	case 3:
		return s->lcr;
	case 4:
		return s->mcr;
	case 5:
		v = UART_LSR_THRE | UART_LSR_TEMT | s->lsr_err | (s->rx_count ? UART_LSR_DR : 0);
		s->lsr_err = 0;
		return v;
	case 6:
		return serial_msr(s);
	default:
		return s->scr;
	}
}

static void serial_write_reg(struct serial8250 *s, unsigned int reg, uint8_t v)
{
	bool dlab = s->lcr & UART_LCR_DLAB;

	switch (reg) {
	case 0:
		if (dlab) {
			s->dll = v;
			break;
		}
		serial_tx(s, v);
		s->thr_pending = true;
		break;
	case 1:
		if (dlab) {
			s->dlm = v;
			break;
		}
		if ((v & UART_IER_THRI) && !(s->ier & UART_IER_THRI))
			s->thr_pending = true; /* the transmitter is empty */
		s->ier = v & 0x0f;
		break;
	case 2:
		s->fcr = v & 0xc9;
		if (v & UART_FCR_CLRRX) {
			/* host input still waiting is not on the chip yet: it
			 * arrives after the clear, or it waits for a next push */
			s->rx_count = 0;
			serial_rx_fill(s);
		}
		break;
	case 3:
		/* leaving the divisor latch: the guest finished configuring */
		if ((s->lcr & UART_LCR_DLAB) && !(v & UART_LCR_DLAB))
			log_debug("serial: guest set COM1 to %u baud, %u data bits",
				  115200u / (s->dll | s->dlm << 8 ? s->dll | s->dlm << 8 : 1),
				  5u + (v & 3u));
		s->lcr = v;
		break;
	case 4:
		s->mcr = v & 0x1f;
		break;
	case 7:
		s->scr = v;
		break;
	default: /* LSR and MSR are read-only */
		break;
	}
}

static void serial_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct serial8250 *s = dev;
	uint8_t *p = data;

	pthread_mutex_lock(&s->lock);
	p[0] = serial_read_reg(s, (unsigned int)off);
	if (len > 1)
		memset(p + 1, 0xff, len - 1);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

static void serial_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct serial8250 *s = dev;

	(void)len;
	pthread_mutex_lock(&s->lock);
	serial_write_reg(s, (unsigned int)off, *(const uint8_t *)data);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

static const struct io_ops serial_ops = {
    .read = serial_read,
    .write = serial_write,
};

/* Console input from stdin or an attached client (main thread). */
static void serial_push_input(void *opaque, const void *data, size_t n)
{
	struct serial8250 *s = opaque;
	const uint8_t *buf = data;
	size_t i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < n; i++) {
		if (s->in_count == UART_IN_BUF) {
			s->lsr_err |= UART_LSR_OE;
			break;
		}
		s->in_buf[(s->in_head + s->in_count++) % UART_IN_BUF] = buf[i];
	}
	serial_rx_fill(s);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

static unsigned int serial_in_room(struct serial8250 *s)
{
	unsigned int room;

	pthread_mutex_lock(&s->lock);
	room = UART_IN_BUF - s->in_count;
	pthread_mutex_unlock(&s->lock);
	return room;
}

/* Timer: stdin was left unread while the input buffer was full. */
static void serial_in_resume(void *opaque, uint32_t events)
{
	struct serial8250 *s = opaque;

	(void)events;
	if (!s->in_watched)
		return;
	if (serial_in_room(s))
		event_mod(s->loop, s->in_fd, EPOLLIN);
	else
		event_timer_arm(s->in_timer, UART_IN_RETRY);
}

static void serial_input(void *opaque, uint32_t events)
{
	struct serial8250 *s = opaque;
	unsigned int room = serial_in_room(s);
	uint8_t buf[256];
	ssize_t n;

	(void)events;
	if (!room) { /* the guest is behind: leave the rest in the pipe */
		if (!s->in_timer || event_mod(s->loop, s->in_fd, 0) ||
		    event_timer_arm(s->in_timer, UART_IN_RETRY))
			log_warn("serial: cannot pause console input: it may be lost");
		else
			return;
		room = sizeof(buf); /* read anyway: overrun, not a busy loop */
	}
	n = read(s->in_fd, buf, room < sizeof(buf) ? room : sizeof(buf));
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		event_del(s->loop, s->in_fd); /* EOF: no more input */
		s->in_watched = false;
		return;
	}
	serial_push_input(s, buf, (size_t)n);
}

static void serial_setup_tty(struct serial8250 *s)
{
	struct termios t;

	if (!isatty(s->in_fd) || tcgetattr(s->in_fd, &s->saved_tty))
		return;
	t = s->saved_tty;
	/* raw, but keep ISIG: Ctrl-C still reaches vmlet as SIGINT */
	t.c_iflag &= ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
	t.c_lflag &= ~(ECHO | ECHONL | ICANON | IEXTEN);
	t.c_cflag &= ~(CSIZE | PARENB);
	t.c_cflag |= CS8;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (!tcsetattr(s->in_fd, TCSANOW, &t))
		s->tty_raw = true;
}

static int serial_open_console(struct serial8250 *s, const struct device_env *env)
{
	const struct vm_console *c = env->console;
	int ret;

	s->kind = c->kind;
	s->in_fd = -1;
	ret = console_out_create(env, &s->out);
	if (ret)
		return ret;
	if (c->kind == VM_CONSOLE_STDIO) {
		s->in_fd = STDIN_FILENO;
		/* stdin may be a file or /dev/null, which epoll refuses: no input */
		if (!event_add(s->loop, s->in_fd, EPOLLIN, serial_input, s)) {
			s->in_watched = true;
			serial_setup_tty(s);
			if (event_timer_create(s->loop, serial_in_resume, s, &s->in_timer))
				s->in_timer = NULL; /* then input beyond the buffer is lost */
		}
	}
	return 0;
}

/* The console's totals for metrics and the end-of-run summary. */
static void serial_counters(void *opaque, struct device_counters *c)
{
	struct serial8250 *s = opaque;

	c->tx_bytes = console_out_written(s->out);
	c->tx_dropped = console_out_dropped(s->out);
}

static void serial_destroy(void *state)
{
	struct serial8250 *s = state;

	if (s->registered) {
		bus_unregister(s->pio, ARCH_COM1_PORT);
		device_set_console_input(s->vm, NULL, NULL);
	}
	if (s->in_watched)
		event_del(s->loop, s->in_fd);
	if (s->in_timer)
		event_timer_destroy(s->in_timer);
	if (s->tty_raw)
		tcsetattr(s->in_fd, TCSANOW, &s->saved_tty);
	console_out_destroy(s->out);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static int serial_create(const struct device_env *env, unsigned int index, void **state)
{
	struct serial8250 *s;
	int ret;

	(void)index;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->vm = env->vm;
	s->loop = env->loop;
	s->pio = env->pio;
	s->mcr = 0x08; /* OUT2 */
	pthread_mutex_init(&s->lock, NULL);
	ret = serial_open_console(s, env);
	if (!ret)
		ret = bus_register(env->pio, ARCH_COM1_PORT, 8, &serial_ops, s);
	s->registered = !ret;
	if (!ret) {
		device_set_console_input(env->vm, serial_push_input, s);
		device_set_console_output(env->vm, serial_output, s);
		ret = device_add_counters(env->vm, "console", "serial0", serial_counters, s);
	}
	if (ret) {
		serial_destroy(s);
		return ret;
	}
	*state = s;
	return 0;
}

/* Snapshot: the UART's registers, its receive FIFO (in order) and the
 * interrupt line's level; the host side (console file, terminal) is the
 * restoring vmlet's own. */
enum { SERIAL_SNAP_REGS = 1, SERIAL_SNAP_RX };

static int serial_save(void *state, struct snap_buf *b)
{
	struct serial8250 *s = state;
	uint8_t r[10], rx[UART_RX_FIFO];
	unsigned int i, n;

	pthread_mutex_lock(&s->lock);
	r[0] = s->ier, r[1] = s->lcr, r[2] = s->mcr, r[3] = s->lsr_err, r[4] = s->scr;
	r[5] = s->dll, r[6] = s->dlm, r[7] = s->fcr, r[8] = s->thr_pending;
	r[9] = s->irq_level != 0;
	n = s->rx_count;
	for (i = 0; i < n; i++)
		rx[i] = s->rx[(s->rx_head + i) % UART_RX_FIFO];
	pthread_mutex_unlock(&s->lock);
	snap_buf_item(b, SERIAL_SNAP_REGS, r, sizeof(r));
	snap_buf_item(b, SERIAL_SNAP_RX, rx, n);
	return b->err;
}

static int serial_load(void *state, struct snap_cur *c)
{
	struct serial8250 *s = state;
	struct snap_cur rx;
	uint8_t r[10];

	if (snap_cur_want(c, SERIAL_SNAP_REGS, r, sizeof(r)) || r[8] > 1 || r[9] > 1 ||
	    snap_cur_want_any(c, SERIAL_SNAP_RX, &rx) || rx.left > UART_RX_FIFO)
		return -EBADMSG;
	pthread_mutex_lock(&s->lock);
	s->ier = r[0], s->lcr = r[1], s->mcr = r[2], s->lsr_err = r[3], s->scr = r[4];
	s->dll = r[5], s->dlm = r[6], s->fcr = r[7], s->thr_pending = r[8];
	s->irq_level = r[9];
	s->rx_head = 0;
	s->rx_count = (unsigned int)rx.left;
	memcpy(s->rx, rx.p, rx.left);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* autoattachSerialConsole: false: no COM1 at all (nor its ACPI entry) */
static unsigned int serial_count(const struct vm_config *cfg)
{
	return cfg->autoattach_serial_console ? 1 : 0;
}

const struct device_type serial8250_device = {
    .name = "serial8250",
    .count = serial_count,
    .create = serial_create,
    .destroy = serial_destroy,
    .save = serial_save,
    .load = serial_load,
};
