/* SPDX-License-Identifier: MIT */
/*
 * pm.c - the ACPI fixed-hardware PM1a event and control blocks the FADT
 * points at (ARCH_PM1A_EVT_PORT, ARCH_PM1A_CNT_PORT): the power button and
 * soft-off. ACPI 6.5 §4.8.3 "PM1 Event Grouping" and "PM1 Control
 * Grouping".
 *
 *   PM1_STS (evt+0, 16 bit): status bits, write 1 to clear
 *   PM1_EN  (evt+2, 16 bit): enables; STS & EN raises the SCI (level)
 *   PM1_CNT (cnt+0, 16 bit): SCI_EN (reads as 1: there is no SMI_CMD, the
 *                            machine is always in ACPI mode), SLP_TYP,
 *                            SLP_EN; SLP_EN with \_S5's SLP_TYP = power off
 *
 * Pressing the power button (vm_power_button, from SIGTERM) sets PWRBTN_STS
 * and raises the SCI when the guest enabled PWRBTN_EN.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/layout.h"
#include "vmm/vm/bus.h"
#include "vmm/dev/devices.h"
#include "vmm/vm/device.h"
#include "vmm/vm/irq.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/vm_config.h"

/* Byte layout of our window: STS(2) EN(2) CNT(2), contiguous by layout.h */
#define PM_WINDOW_LEN (ARCH_PM1A_CNT_PORT + 2 - ARCH_PM1A_EVT_PORT)
_Static_assert(ARCH_PM1A_CNT_PORT == ARCH_PM1A_EVT_PORT + 4,
	       "pm.c assumes PM1a_CNT follows the 4-byte PM1a_EVT block");

struct acpi_pm {
	struct vm *vm;
	struct bus *pio;
	pthread_mutex_t lock;
	uint16_t sts, en, cnt;
	int sci_level;
};

/* Lock held. */
static void pm_update_sci(struct acpi_pm *p)
{
	int level = (p->sts & p->en) != 0;

	if (level != p->sci_level) {
		p->sci_level = level;
		irq_line(p->vm, ARCH_SCI_IRQ, level);
	}
}

static uint16_t *pm_reg(struct acpi_pm *p, uint64_t off)
{
	return off < 2 ? &p->sts : off < 4 ? &p->en : &p->cnt;
}

static void pm_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct acpi_pm *p = dev;
	uint8_t bytes[PM_WINDOW_LEN + 8];
	uint16_t cnt;

	pthread_mutex_lock(&p->lock);
	cnt = p->cnt | PM1_CNT_SCI_EN;
	memset(bytes, 0xff, sizeof(bytes));
	memcpy(&bytes[0], &p->sts, 2);
	memcpy(&bytes[2], &p->en, 2);
	memcpy(&bytes[4], &cnt, 2);
	pthread_mutex_unlock(&p->lock);
	memcpy(data, &bytes[off], len); /* off + len <= window: the bus checked */
}

static void pm_write_cnt(struct acpi_pm *p, uint16_t v)
{
	p->cnt = v & ~PM1_CNT_SLP_EN; /* SLP_EN is write-only */
	if (!(v & PM1_CNT_SLP_EN))
		return;
	if (PM1_CNT_SLP_TYP(v) == ARCH_PM_S5_SLP_TYP) {
		log_info("acpi: guest entered S5 (soft off)");
		device_request_exit(p->vm, VM_EXIT_POWEROFF);
	} else {
		log_warn_once("acpi: guest asked for sleep type %u, which vmlet does not offer",
			      PM1_CNT_SLP_TYP(v));
	}
}

static void pm_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct acpi_pm *p = dev;
	const uint8_t *b = data;
	uint32_t i;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < len; i++) {
		uint64_t o = off + i;
		uint16_t *r = pm_reg(p, o), mask = (uint16_t)(0xffu << (8 * (o & 1)));
		uint16_t v = (uint16_t)((uint16_t)b[i] << (8 * (o & 1)));

		if (r == &p->sts)
			*r &= ~(v & mask); /* write 1 to clear */
		else if (r == &p->en)
			*r = (*r & ~mask) | v;
	}
	/* PM1_CNT acts once per access, on the whole new value */
	if (off + len > 4) {
		uint16_t v = p->cnt;

		for (i = 0; i < len; i++)
			if (off + i >= 4) {
				unsigned int sh = 8 * ((off + i) & 1);

				v = (uint16_t)((v & ~(0xffu << sh)) | ((uint16_t)b[i] << sh));
			}
		pm_write_cnt(p, v);
	}
	pm_update_sci(p);
	pthread_mutex_unlock(&p->lock);
}

static const struct io_ops pm_ops = {
    .read = pm_read,
    .write = pm_write,
};

static void pm_power_button(void *opaque)
{
	struct acpi_pm *p = opaque;

	pthread_mutex_lock(&p->lock);
	p->sts |= PM1_STS_PWRBTN;
	if (!(p->en & PM1_STS_PWRBTN))
		log_info("acpi: power button pressed, but the guest has not enabled its event");
	pm_update_sci(p);
	pthread_mutex_unlock(&p->lock);
}

static void pm_destroy(void *state)
{
	struct acpi_pm *p = state;

	bus_unregister(p->pio, ARCH_PM1A_EVT_PORT);
	device_set_power_button(p->vm, NULL, NULL);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static int pm_create(const struct device_env *env, unsigned int index, void **state)
{
	struct acpi_pm *p;
	int ret;

	(void)index;
	if (!env->cfg->acpi)
		return 0; /* no ACPI tables, no ACPI hardware */
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->vm = env->vm;
	p->pio = env->pio;
	pthread_mutex_init(&p->lock, NULL);
	ret = bus_register(env->pio, ARCH_PM1A_EVT_PORT, PM_WINDOW_LEN, &pm_ops, p);
	if (ret) {
		pthread_mutex_destroy(&p->lock);
		free(p);
		return ret;
	}
	device_set_power_button(env->vm, pm_power_button, p);
	*state = p;
	return 0;
}

/* Snapshot: PM1 status, enable and control, and the SCI line's level
 * (the in-kernel irqchip's copy of it is restored with the VM). */
enum { PM_SNAP_REGS = 1 };

static int pm_save(void *state, struct snap_buf *b)
{
	struct acpi_pm *p = state;
	uint16_t r[4];

	pthread_mutex_lock(&p->lock);
	r[0] = p->sts;
	r[1] = p->en;
	r[2] = p->cnt;
	r[3] = p->sci_level != 0;
	pthread_mutex_unlock(&p->lock);
	snap_buf_item(b, PM_SNAP_REGS, r, sizeof(r));
	return b->err;
}

static int pm_load(void *state, struct snap_cur *c)
{
	struct acpi_pm *p = state;
	uint16_t r[4];

	if (snap_cur_want(c, PM_SNAP_REGS, r, sizeof(r)) || r[3] > 1)
		return -EBADMSG;
	pthread_mutex_lock(&p->lock);
	p->sts = r[0];
	p->en = r[1];
	p->cnt = r[2];
	p->sci_level = r[3];
	pthread_mutex_unlock(&p->lock);
	return 0;
}

const struct device_type acpi_pm_device = {
    .name = "acpi-pm",
    .create = pm_create,
    .destroy = pm_destroy,
    .save = pm_save,
    .load = pm_load,
};
