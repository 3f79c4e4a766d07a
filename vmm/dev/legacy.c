/* SPDX-License-Identifier: MIT */
/*
 * legacy.c - ports a PC guest writes to that need no model, only quiet:
 *
 *   0x00-0x0f   the 8237 DMA controllers, their page registers (0x81-0x8f)
 *   0xc0-0xdf   and 0xc0-0xdf: no ISA DMA here; ignored, read as ones (a
 *               BIOS initialises them)
 *   0x80        POST code / I/O delay port: ignored
 *   0xe9        debug console (Bochs / QEMU isa-debugcon): bytes logged at
 *               debug level, one line at a time
 *   0x402       the same for SeaBIOS's debug output (QEMU's port for it);
 *               reads 0xe9, which is how SeaBIOS tells the port is there
 *   0x92        system control port A: A20 always on (reads 0x02, writes to
 *               bit 1 ignored); bit 0 set is the fast reset: a reboot
 *   0xf4        debug exit (QEMU isa-debug-exit): any write ends the VM as
 *               powered off; the probe uses it when it finds no ACPI
 *   0x2f8, 0x3e8, 0x2e8 (8 ports each)
 *               COM2, COM3, COM4, which a PC guest probes (Linux's 8250
 *               driver at every boot): absent, as on a machine without
 *               them, reads all ones and writes are ignored; the first
 *               access to each is logged at debug level, so that the bus's
 *               one warning for unclaimed ports stays for real surprises
 *   0xf10 (4)   the probe's fast report port (firmware/abi.h) when it is not
 *               offered (a console not captured: report_port.c has it
 *               otherwise): the same absent port, since the probe guest
 *               reads it at every boot to learn whether it is there
 *
 * (The 8259 PICs, PIT and port 0x61 are in the kernel.)
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "firmware/abi.h"
#include "vmm/vm/bus.h"
#include "vmm/dev/devices.h"
#include "vmm/vm/device.h"
#include "vmm/util/log.h"

#define POST_PORT	0x80
#define DMA1_PORT	0x00 /* 16 ports */
#define DMA_PAGE_PORT	0x81 /* 15 ports */
#define DMA2_PORT	0xc0 /* 32 ports */
#define DEBUGCON_PORT	0xe9
#define BIOS_DEBUG_PORT 0x402
#define PORT_A		0x92
#define DEBUG_EXIT_PORT 0xf4

/* Legacy devices this machine does not have (absent_ops); not_captured:
 * only when the console is not captured. */
static const struct {
	uint16_t port, len;
	const char *name;
	bool not_captured;
} absent[] = {
    {0x2f8, 8, "COM2", false},
    {0x3e8, 8, "COM3", false},
    {0x2e8, 8, "COM4", false},
    {FW_ABI_REPORT_PORT, 4, "probe report port", true},
};
#define N_ABSENT (sizeof(absent) / sizeof(absent[0]))

struct legacy_ports;

struct absent_dev {
	struct legacy_ports *l; /* NULL: not registered */
	unsigned int i;
	int logged;
};

struct legacy_ports {
	struct vm *vm;
	struct bus *pio;
	pthread_mutex_t lock;
	char line[128];
	size_t len;
	struct absent_dev absent[N_ABSENT];
};

static void sink_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	(void)dev;
	(void)off;
	memset(data, 0xff, len);
}

static void sink_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	(void)dev;
	(void)off;
	(void)data;
	(void)len;
}

static const struct io_ops post_ops = {.read = sink_read, .write = sink_write};

static void absent_note(struct absent_dev *a, uint64_t off, const char *what)
{
	if (!__atomic_exchange_n(&a->logged, 1, __ATOMIC_RELAXED))
		log_debug("pio: guest %s 0x%llx: no %s here (reads as all ones)", what,
			  (unsigned long long)(absent[a->i].port + off), absent[a->i].name);
}

static void absent_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	absent_note(dev, off, "reads");
	memset(data, 0xff, len);
}

static void absent_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	(void)data;
	(void)len;
	absent_note(dev, off, "writes");
}

static const struct io_ops absent_ops = {.read = absent_read, .write = absent_write};

static void debugcon_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct legacy_ports *l = dev;
	char c = *(const char *)data;

	(void)off;
	(void)len;
	pthread_mutex_lock(&l->lock);
	if (c != '\n' && l->len < sizeof(l->line) - 1)
		l->line[l->len++] = (c >= 0x20 && c < 0x7f) ? c : '.';
	if (c == '\n' || l->len == sizeof(l->line) - 1) {
		l->line[l->len] = 0;
		log_debug("debugcon: %s", l->line);
		l->len = 0;
	}
	pthread_mutex_unlock(&l->lock);
}

static const struct io_ops debugcon_ops = {.read = sink_read, .write = debugcon_write};

static void bios_debug_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	(void)dev;
	(void)off;
	memset(data, 0xe9, len); /* QEMU's isa-debugcon readback value */
}

static const struct io_ops bios_debug_ops = {.read = bios_debug_read, .write = debugcon_write};

static void debug_exit_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct legacy_ports *l = dev;
	uint32_t v = 0;

	(void)off;
	memcpy(&v, data, len > 4 ? 4 : len);
	log_info("debug-exit: guest wrote 0x%x: powering off", v);
	device_request_exit(l->vm, VM_EXIT_POWEROFF);
}

static void port_a_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	(void)dev;
	(void)off;
	memset(data, 0, len);
	*(uint8_t *)data = 0x02; /* A20 enabled */
}

static void port_a_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct legacy_ports *l = dev;

	(void)off;
	(void)len;
	if (*(const uint8_t *)data & 1) {
		log_info("port 0x92: guest asked for a fast reset: rebooting");
		device_request_exit(l->vm, VM_EXIT_REBOOT);
	}
}

static const struct io_ops port_a_ops = {.read = port_a_read, .write = port_a_write};

static const struct io_ops debug_exit_ops = {.read = sink_read, .write = debug_exit_write};

/* The fixed windows (the ones the header lists), all with l as device. */
static const struct {
	uint16_t port, len;
	const struct io_ops *ops;
} windows[] = {
    {POST_PORT, 1, &post_ops},	       {DMA1_PORT, 16, &post_ops},
    {DMA_PAGE_PORT, 15, &post_ops},    {DMA2_PORT, 32, &post_ops},
    {DEBUGCON_PORT, 1, &debugcon_ops}, {BIOS_DEBUG_PORT, 1, &bios_debug_ops},
    {PORT_A, 1, &port_a_ops},	       {DEBUG_EXIT_PORT, 4, &debug_exit_ops},
};
#define N_WINDOWS (sizeof(windows) / sizeof(windows[0]))

static void legacy_destroy(void *state)
{
	struct legacy_ports *l = state;

	for (size_t i = 0; i < N_WINDOWS; i++)
		bus_unregister(l->pio, windows[i].port);
	for (size_t i = 0; i < N_ABSENT; i++)
		if (l->absent[i].l)
			bus_unregister(l->pio, absent[i].port);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

static int legacy_create(const struct device_env *env, unsigned int index, void **state)
{
	struct legacy_ports *l;
	int ret;

	(void)index;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->vm = env->vm;
	l->pio = env->pio;
	pthread_mutex_init(&l->lock, NULL);
	ret = 0;
	for (size_t i = 0; !ret && i < N_WINDOWS; i++)
		ret = bus_register(env->pio, windows[i].port, windows[i].len, windows[i].ops, l);
	for (unsigned int i = 0; !ret && i < N_ABSENT; i++) {
		if (absent[i].not_captured && env->console->kind == VM_CONSOLE_CAPTURE)
			continue;
		l->absent[i] = (struct absent_dev){l, i, 0};
		ret = bus_register(env->pio, absent[i].port, absent[i].len, &absent_ops,
				   &l->absent[i]);
		if (ret)
			l->absent[i].l = NULL; /* not ours to unregister */
	}
	if (ret) {
		legacy_destroy(l); /* unregistering what was not registered is harmless */
		return ret;
	}
	*state = l;
	return 0;
}

/* Snapshot: nothing the guest can see (the debug console's unfinished
 * line is the host's log). */
static int legacy_save(void *state, struct snap_buf *b)
{
	(void)state;
	(void)b;
	return 0;
}

static int legacy_load(void *state, struct snap_cur *c)
{
	(void)state;
	(void)c;
	return 0;
}

const struct device_type legacy_ports_device = {
    .name = "legacy-ports",
    .create = legacy_create,
    .destroy = legacy_destroy,
    .save = legacy_save,
    .load = legacy_load,
};
