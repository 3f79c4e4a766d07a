/* SPDX-License-Identifier: MIT */
/*
 * i8042.c - just enough of the PC keyboard controller (ports 0x60/0x64) for
 * its reset line: command 0xfe on port 0x64 pulses CPU reset, which ends
 * the VM as "rebooted". The few commands firmware and Linux send while
 * probing get plausible answers (command byte, self test 0x55, interface
 * test 0x00); there is no keyboard or mouse behind it. Commands: IBM PS/2
 * Hardware Interface Technical Reference, "Keyboard/Auxiliary Device
 * Controller".
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/vm/bus.h"
#include "vmm/dev/devices.h"
#include "vmm/vm/device.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"

#define I8042_DATA_PORT 0x60
#define I8042_CMD_PORT	0x64
#define I8042_STS_OBF	0x01
#define I8042_STS_SYS	0x04
#define I8042_STS_CMD	0x08

struct i8042 {
	struct vm *vm;
	struct bus *pio;
	pthread_mutex_t lock;
	uint8_t cmd_byte, out, pending_cmd;
	int have_out;
};

static void i8042_reply(struct i8042 *k, uint8_t v)
{
	k->out = v;
	k->have_out = 1;
}

static void i8042_command(struct i8042 *k, uint8_t cmd)
{
	switch (cmd) {
	case 0x20: /* read command byte */
		i8042_reply(k, k->cmd_byte);
		break;
	case 0x60: /* write command byte: next data byte */
	case 0xd1: /* write output port: next data byte */
		k->pending_cmd = cmd;
		break;
	case 0xaa: /* controller self test */
		i8042_reply(k, 0x55);
		break;
	case 0xab: /* keyboard interface test */
	case 0xa9: /* aux interface test */
		i8042_reply(k, 0x00);
		break;
	case 0xfe: /* pulse reset line */
		log_info("i8042: guest pulsed the reset line");
		device_request_exit(k->vm, VM_EXIT_REBOOT);
		break;
	default: /* enable/disable ports and the rest: nothing behind them */
		break;
	}
}

static void i8042_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct i8042 *k = dev;
	uint8_t v;

	pthread_mutex_lock(&k->lock);
	if (off == 0) { /* 0x60 */
		v = k->have_out ? k->out : 0;
		k->have_out = 0;
	} else if (off == 4) { /* 0x64 status */
		v = I8042_STS_SYS | (k->have_out ? I8042_STS_OBF : 0);
	} else {
		v = 0;
	}
	pthread_mutex_unlock(&k->lock);
	memset(data, 0xff, len);
	*(uint8_t *)data = v;
}

static void i8042_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct i8042 *k = dev;
	uint8_t v = *(const uint8_t *)data;

	(void)len;
	pthread_mutex_lock(&k->lock);
	if (off == 4) {
		k->pending_cmd = 0;
		i8042_command(k, v);
	} else if (k->pending_cmd == 0x60) {
		k->cmd_byte = v;
		k->pending_cmd = 0;
	} else if (k->pending_cmd == 0xd1) {
		k->pending_cmd = 0;
		if (!(v & 1)) { /* output port bit 0 low: system reset */
			log_info("i8042: guest cleared the reset bit");
			device_request_exit(k->vm, VM_EXIT_REBOOT);
		}
	}
	pthread_mutex_unlock(&k->lock);
}

static const struct io_ops i8042_ops = {
    .read = i8042_read,
    .write = i8042_write,
};

static void i8042_destroy(void *state)
{
	struct i8042 *k = state;

	bus_unregister(k->pio, I8042_DATA_PORT);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

static int i8042_create(const struct device_env *env, unsigned int index, void **state)
{
	struct i8042 *k;
	int ret;

	(void)index;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->vm = env->vm;
	k->pio = env->pio;
	k->cmd_byte = 0x30; /* both ports disabled, no interrupts */
	pthread_mutex_init(&k->lock, NULL);
	/* one window 0x60..0x64: 0x61 (PIT speaker) is in-kernel and never
	 * reaches us; 0x62/0x63 read as zero */
	ret = bus_register(env->pio, I8042_DATA_PORT, 5, &i8042_ops, k);
	if (ret) {
		pthread_mutex_destroy(&k->lock);
		free(k);
		return ret;
	}
	*state = k;
	return 0;
}

/* Snapshot: the command byte, the output buffer and a pending command. */
enum { I8042_SNAP_REGS = 1 };

static int i8042_save(void *state, struct snap_buf *b)
{
	struct i8042 *k = state;
	uint8_t r[4];

	pthread_mutex_lock(&k->lock);
	r[0] = k->cmd_byte;
	r[1] = k->out;
	r[2] = k->pending_cmd;
	r[3] = k->have_out != 0;
	pthread_mutex_unlock(&k->lock);
	snap_buf_item(b, I8042_SNAP_REGS, r, sizeof(r));
	return b->err;
}

static int i8042_load(void *state, struct snap_cur *c)
{
	struct i8042 *k = state;
	uint8_t r[4];

	if (snap_cur_want(c, I8042_SNAP_REGS, r, sizeof(r)) || r[3] > 1)
		return -EBADMSG;
	pthread_mutex_lock(&k->lock);
	k->cmd_byte = r[0];
	k->out = r[1];
	k->pending_cmd = r[2];
	k->have_out = r[3];
	pthread_mutex_unlock(&k->lock);
	return 0;
}

const struct device_type i8042_device = {
    .name = "i8042",
    .create = i8042_create,
    .destroy = i8042_destroy,
    .save = i8042_save,
    .load = i8042_load,
};
