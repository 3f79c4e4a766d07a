/* SPDX-License-Identifier: MIT */
/*
 * rtc.c - a minimal MC146818 CMOS RTC at ports 0x70 (index) / 0x71 (data).
 *
 * Reads of the time registers give the host's UTC time, moved by the VM's
 * clock (clock.utc.offsetSeconds, or clock.timezone's UTC offset when the
 * VM starts, as libvirt's timezone clock gives QEMU), in BCD, 24-hour
 * mode; status A shows no update in progress, so a guest reading the clock
 * at boot (Linux does) gets an answer at once instead of polling UIP on an
 * all-ones port. The guest cannot set the clock (writes to the time
 * registers are ignored) and there is no periodic or alarm interrupt. The
 * other CMOS bytes are plain storage. Register map: MC146818A data sheet.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "vmm/vm/bus.h"
#include "vmm/dev/devices.h"
#include "vmm/vm/device.h"
#include "vmm/vm/guest_mem.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/vm_config.h"

#define RTC_PORT    0x70
#define RTC_REG_A   0x0a
#define RTC_REG_B   0x0b
#define RTC_REG_C   0x0c
#define RTC_REG_D   0x0d
#define RTC_CENTURY 0x32

struct rtc {
	struct bus *pio;
	int64_t offset; /* seconds added to the host's UTC time */
	pthread_mutex_t lock;
	uint8_t index;
	uint8_t cmos[128];
};

static uint8_t bcd(int v)
{
	return (uint8_t)(((v / 10) << 4) | (v % 10));
}

static uint8_t rtc_time_reg(const struct rtc *r, uint8_t reg)
{
	struct tm tm;
	time_t now = time(NULL) + (time_t)r->offset;

	gmtime_r(&now, &tm);
	switch (reg) {
	case 0x00:
		return bcd(tm.tm_sec);
	case 0x02:
		return bcd(tm.tm_min);
	case 0x04:
		return bcd(tm.tm_hour);
	case 0x06:
		return bcd(tm.tm_wday + 1);
	case 0x07:
		return bcd(tm.tm_mday);
	case 0x08:
		return bcd(tm.tm_mon + 1);
	case 0x09:
		return bcd(tm.tm_year % 100);
	default:
		return bcd((tm.tm_year + 1900) / 100); /* RTC_CENTURY */
	}
}

static uint8_t rtc_get(struct rtc *r, uint8_t reg)
{
	switch (reg) {
	case 0x00:
	case 0x02:
	case 0x04:
	case 0x06:
	case 0x07:
	case 0x08:
	case 0x09:
	case RTC_CENTURY:
		return rtc_time_reg(r, reg);
	case RTC_REG_A:
		return 0x26; /* 32.768 kHz base, 1024 Hz rate, UIP clear */
	case RTC_REG_B:
		return 0x02; /* 24-hour, BCD, no interrupts */
	case RTC_REG_C:
		return 0x00; /* no interrupt flags */
	case RTC_REG_D:
		return 0x80; /* valid RAM and time */
	default:
		return r->cmos[reg];
	}
}

static void rtc_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct rtc *r = dev;
	uint8_t v;

	pthread_mutex_lock(&r->lock);
	v = off == 1 ? rtc_get(r, r->index) : 0xff;
	pthread_mutex_unlock(&r->lock);
	memset(data, 0xff, len);
	*(uint8_t *)data = v;
}

static void rtc_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct rtc *r = dev;
	uint8_t v = *(const uint8_t *)data;

	(void)len;
	pthread_mutex_lock(&r->lock);
	if (off == 0)
		r->index = v & 0x7f; /* bit 7 is the NMI mask */
	else if (r->index > RTC_REG_D && r->index != RTC_CENTURY)
		r->cmos[r->index] = v;
	pthread_mutex_unlock(&r->lock);
}

static const struct io_ops rtc_ops = {
    .read = rtc_read,
    .write = rtc_write,
};

static void rtc_destroy(void *state)
{
	struct rtc *r = state;

	bus_unregister(r->pio, RTC_PORT);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* The UTC offset of an IANA time zone now, e.g. 3600 for Europe/Berlin in
 * winter. Only the main thread runs while devices are created, so TZ can
 * be switched and restored. */
static int rtc_zone_offset(const char *zone, int64_t *out)
{
	const char *dir = getenv("TZDIR") ? getenv("TZDIR") : "/usr/share/zoneinfo";
	char path[512], *saved = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
	time_t now = time(NULL);
	struct tm tm;

	snprintf(path, sizeof(path), "%s/%s", dir, zone);
	if (!*zone || zone[0] == '/' || strstr(zone, "..") || access(path, R_OK)) {
		free(saved);
		return error("spec.template.spec.domain.clock.timezone: unknown time zone \"%s\" "
			     "(no %s)",
			     zone, path);
	}
	setenv("TZ", zone, 1);
	tzset();
	localtime_r(&now, &tm);
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
	free(saved);
	*out = tm.tm_gmtoff;
	return 0;
}

static int rtc_create(const struct device_env *env, unsigned int index, void **state)
{
	struct rtc *r;
	int ret;

	(void)index;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->pio = env->pio;
	r->offset = env->cfg->rtc_offset_seconds;
	if (env->cfg->rtc_timezone && rtc_zone_offset(env->cfg->rtc_timezone, &r->offset)) {
		free(r);
		return -EINVAL;
	}
	if (env->mem && env->mem->n) /* the memory size, as a PC BIOS leaves it */
		arch_cmos_memory(env->mem->r[0].size, env->mem->total - env->mem->r[0].size,
				 r->cmos);
	pthread_mutex_init(&r->lock, NULL);
	ret = bus_register(env->pio, RTC_PORT, 2, &rtc_ops, r);
	if (ret) {
		pthread_mutex_destroy(&r->lock);
		free(r);
		return ret;
	}
	*state = r;
	return 0;
}

/* Snapshot: the guest's offset from host time, the index and CMOS bytes.
 * Restored, the clock reads host time plus the same offset: the guest's
 * wall clock moved on while the snapshot waited, as a real RTC would. */
enum { RTC_SNAP_OFFSET = 1, RTC_SNAP_INDEX, RTC_SNAP_CMOS };

static int rtc_save(void *state, struct snap_buf *b)
{
	struct rtc *r = state;

	pthread_mutex_lock(&r->lock);
	snap_buf_item(b, RTC_SNAP_OFFSET, &r->offset, sizeof(r->offset));
	snap_buf_item(b, RTC_SNAP_INDEX, &r->index, sizeof(r->index));
	snap_buf_item(b, RTC_SNAP_CMOS, r->cmos, sizeof(r->cmos));
	pthread_mutex_unlock(&r->lock);
	return b->err;
}

static int rtc_load(void *state, struct snap_cur *c)
{
	struct rtc *r = state;
	uint8_t cmos[sizeof(r->cmos)], index;
	int64_t offset;

	if (snap_cur_want(c, RTC_SNAP_OFFSET, &offset, sizeof(offset)) ||
	    snap_cur_want(c, RTC_SNAP_INDEX, &index, sizeof(index)) ||
	    snap_cur_want(c, RTC_SNAP_CMOS, cmos, sizeof(cmos)))
		return -EBADMSG;
	pthread_mutex_lock(&r->lock);
	r->offset = offset;
	r->index = index & 0x7f;
	memcpy(r->cmos, cmos, sizeof(cmos));
	pthread_mutex_unlock(&r->lock);
	return 0;
}

const struct device_type rtc_device = {
    .name = "rtc",
    .create = rtc_create,
    .destroy = rtc_destroy,
    .save = rtc_save,
    .load = rtc_load,
};
