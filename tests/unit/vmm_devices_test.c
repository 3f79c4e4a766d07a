/* SPDX-License-Identifier: MIT */
/*
 * vmm_devices_test.c - device models and guest memory without /dev/kvm:
 * the device table on a VM that has buses but no KVM fds (interrupt
 * ioctls then fail harmlessly), driven through the PIO bus as a guest
 * would; guest_mem_init's layout and its hugepage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "firmware/abi.h"
#include "tests/lib/test.h"
#include "vmm/vm/bus.h"
#include "vmm/vm/device.h"
#include "vmm/vm/guest_mem.h"
#include "vmm/vm/vm.h"
#include "vmm/vm_config.h"

static enum vm_console_kind rig_console = VM_CONSOLE_CAPTURE;
/* applied to the rig's config before the devices are created */
static void (*rig_tweak)(struct vm_config *cfg);

struct rig {
	struct vm vm;
	struct vm_config cfg;
};

static int rig_init_acpi(struct rig *r, bool acpi)
{
	struct device_env env;

	memset(r, 0, sizeof(*r));
	vm_config_init(&r->cfg);
	r->cfg.acpi = acpi;
	if (rig_tweak)
		rig_tweak(&r->cfg);
	r->vm.cfg = &r->cfg;
	r->vm.kvm_fd = r->vm.vm_fd = -1;
	r->vm.opt.console.kind = rig_console;
	pthread_mutex_init(&r->vm.capture_lock, NULL);
	if (bus_init(&r->vm.pio, "pio") || bus_init(&r->vm.mmio, "mmio") ||
	    event_loop_init(&r->vm.loop))
		return -1;
	env = (struct device_env){
	    &r->vm,	&r->cfg,     &r->vm.pio,	 &r->vm.mmio,
	    &r->vm.mem, &r->vm.loop, &r->vm.opt.console, NULL /* no firmware files */,
	    NULL /* no channel sockets */};
	return device_create_all(&env, &r->vm.devs, &r->vm.n_devs);
}

static int rig_init(struct rig *r)
{
	return rig_init_acpi(r, true);
}

static void rig_release(struct rig *r)
{
	device_destroy_all(r->vm.devs, r->vm.n_devs);
	event_loop_release(&r->vm.loop);
	bus_release(&r->vm.pio);
	bus_release(&r->vm.mmio);
	pthread_mutex_destroy(&r->vm.capture_lock);
	free(r->vm.capture);
	vm_config_release(&r->cfg);
}

static uint8_t in8(struct rig *r, uint16_t port)
{
	uint8_t v = 0;

	bus_read(&r->vm.pio, port, &v, 1);
	return v;
}

static void out8(struct rig *r, uint16_t port, uint8_t v)
{
	bus_write(&r->vm.pio, port, &v, 1);
}

static void out16(struct rig *r, uint16_t port, uint16_t v)
{
	bus_write(&r->vm.pio, port, &v, 2);
}

static void test_serial8250(void)
{
	struct rig r;
	size_t len;

	CHECK(rig_init(&r) == 0);
	/* transmit: captured, LSR says empty */
	out8(&r, 0x3f8, 'h');
	out8(&r, 0x3f8, 'i');
	CHECK_STR(vm_console_captured(&r.vm, &len), "hi");
	CHECK_EQ_U64(in8(&r, 0x3fd) & 0x60, 0x60);
	/* no interrupt pending until THRE is enabled; IIR read acknowledges */
	CHECK_EQ_U64(in8(&r, 0x3fa) & 0x0f, 0x01);
	out8(&r, 0x3f9, 0x02);
	CHECK_EQ_U64(in8(&r, 0x3fa) & 0x0f, 0x02);
	CHECK_EQ_U64(in8(&r, 0x3fa) & 0x0f, 0x01);
	/* FIFO enabled: IIR bits 7:6 set (16550A) */
	out8(&r, 0x3fa, 0x01);
	CHECK_EQ_U64(in8(&r, 0x3fa) & 0xc0, 0xc0);
	/* divisor latch and scratch */
	out8(&r, 0x3fb, 0x80);
	out8(&r, 0x3f8, 0x01);
	out8(&r, 0x3f9, 0x02);
	CHECK_EQ_U64(in8(&r, 0x3f8), 0x01);
	CHECK_EQ_U64(in8(&r, 0x3f9), 0x02);
	out8(&r, 0x3fb, 0x03);
	CHECK_EQ_U64(in8(&r, 0x3f9), 0x02); /* IER again */
	out8(&r, 0x3ff, 0x5a);
	CHECK_EQ_U64(in8(&r, 0x3ff), 0x5a);
	/* loopback: MCR outputs appear on MSR inputs, THR comes back on RBR */
	out8(&r, 0x3fc, 0x10 | 0x0a);
	CHECK_EQ_U64(in8(&r, 0x3fe) & 0xf0, 0x90);
	out8(&r, 0x3f8, 'x');
	CHECK_EQ_U64(in8(&r, 0x3fd) & 0x01, 0x01);
	CHECK_EQ_U64(in8(&r, 0x3f8), 'x');
	CHECK_EQ_U64(in8(&r, 0x3fd) & 0x01, 0x00);
	CHECK_STR(vm_console_captured(&r.vm, &len), "hi"); /* loopback not output */
	rig_release(&r);
}

/* Clearing the receive FIFO drops what is in it; host input that did
 * not fit yet comes in behind it (it did not before: the guest saw no
 * data until the host typed again, and with the 4 KiB input buffer full
 * never again, as stdin is not read while it is full). */
static void test_serial8250_fifo_clear(void)
{
	static const char in[] = "0123456789abcdefXYZ";
	struct rig r;

	CHECK(rig_init(&r) == 0);
	vm_console_input(&r.vm, in, sizeof(in) - 1); /* 16 in the FIFO, 3 wait */
	out8(&r, 0x3fa, 0x03);			     /* FIFO enable | clear receive FIFO */
	CHECK_EQ_U64(in8(&r, 0x3fd) & 0x01, 0x01);
	CHECK_EQ_U64(in8(&r, 0x3f8), 'X');
	CHECK_EQ_U64(in8(&r, 0x3f8), 'Y');
	CHECK_EQ_U64(in8(&r, 0x3f8), 'Z');
	CHECK_EQ_U64(in8(&r, 0x3fd) & 0x01, 0x00);
	rig_release(&r);
}

static void test_pm_and_i8042(void)
{
	struct rig r;
	uint16_t v = 0;

	CHECK(rig_init(&r) == 0);
	/* SCI_EN reads as set: always in ACPI mode */
	bus_read(&r.vm.pio, 0x604, &v, 2);
	CHECK(v & 1);
	/* the power button sets PWRBTN_STS; write 1 clears it */
	vm_power_button(&r.vm);
	bus_read(&r.vm.pio, 0x600, &v, 2);
	CHECK(v & 0x100);
	out16(&r, 0x600, 0x100);
	bus_read(&r.vm.pio, 0x600, &v, 2);
	CHECK(!(v & 0x100));
	/* a sleep type other than S5 does not end the VM; S5 does */
	out16(&r, 0x604, (1 << 10) | (1 << 13));
	CHECK(vm_exit_reason(&r.vm) == VM_EXIT_NONE);
	out16(&r, 0x604, (5 << 10) | (1 << 13));
	CHECK(vm_exit_reason(&r.vm) == VM_EXIT_POWEROFF);
	rig_release(&r);

	CHECK(rig_init(&r) == 0);
	out8(&r, 0x64, 0xaa); /* self test answers 0x55 */
	CHECK(in8(&r, 0x64) & 1);
	CHECK_EQ_U64(in8(&r, 0x60), 0x55);
	CHECK(vm_exit_reason(&r.vm) == VM_EXIT_NONE);
	out8(&r, 0x64, 0xfe);
	CHECK(vm_exit_reason(&r.vm) == VM_EXIT_REBOOT);
	rig_release(&r);

	/* no ACPI: no PM device, the power button does nothing */
	CHECK(rig_init_acpi(&r, false) == 0);
	vm_power_button(&r.vm);
	CHECK(bus_read(&r.vm.pio, 0x600, &v, 2) == -ENOENT);
	rig_release(&r);
}

static void test_rtc_and_legacy(void)
{
	struct rig r;
	uint8_t sec;

	CHECK(rig_init(&r) == 0);
	out8(&r, 0x70, 0x0a);
	CHECK(!(in8(&r, 0x71) & 0x80)); /* no update in progress */
	out8(&r, 0x70, 0x80 | 0x00);	/* NMI mask bit is not part of the index */
	sec = in8(&r, 0x71);
	CHECK((sec & 0x0f) < 10 && (sec >> 4) < 6); /* BCD seconds */
	out8(&r, 0x70, 0x40);
	out8(&r, 0x71, 0xab);
	CHECK_EQ_U64(in8(&r, 0x71), 0xab);
	out8(&r, 0x80, 0x12); /* POST code: swallowed */
	CHECK(vm_exit_reason(&r.vm) == VM_EXIT_NONE);
	/* COM2-COM4 (Linux probes them at boot): absent, all ones, claimed so
	 * that the bus's one warning for unclaimed ports is not spent */
	for (uint16_t p = 0; p < 8; p++) {
		CHECK_EQ_U64(in8(&r, 0x2f8 + p), 0xff);
		CHECK_EQ_U64(in8(&r, 0x3e8 + p), 0xff);
		CHECK_EQ_U64(in8(&r, 0x2e8 + p), 0xff);
		out8(&r, 0x2f8 + p, 0x55);
	}
	CHECK_EQ_U64(in8(&r, 0x2fb), 0xff); /* the write did not stick */
	CHECK(!r.vm.pio.warned_read && !r.vm.pio.warned_write);
	CHECK(bus_read(&r.vm.pio, 0x2f0, &sec, 1) == -ENOENT); /* not a wider window */
	CHECK(r.vm.pio.warned_read);
	out8(&r, 0xf4, 0x10); /* debug exit */
	CHECK(vm_exit_reason(&r.vm) == VM_EXIT_POWEROFF);
	rig_release(&r);
}

static void rtc_minus_5h(struct vm_config *cfg)
{
	cfg->rtc_offset_seconds = -5 * 3600 - 30 * 60;
	cfg->autoattach_serial_console = false;
}

static void rtc_zone(struct vm_config *cfg)
{
	cfg->rtc_timezone = strdup("Etc/GMT-3"); /* POSIX sign: UTC+3 */
}

static void rtc_bad_zone(struct vm_config *cfg)
{
	cfg->rtc_timezone = strdup("Mars/Olympus_Mons");
}

static uint8_t bcd(int v)
{
	return (uint8_t)(((v / 10) << 4) | (v % 10));
}

/* The RTC's hour and minute equal UTC + offset (read between two looks at
 * the clock, so a minute turning over in between still passes). */
static bool rtc_shows(struct rig *r, long offset)
{
	time_t t0 = time(NULL) + offset, t1;
	uint8_t h, m;
	struct tm a, b;

	out8(r, 0x70, 0x04);
	h = in8(r, 0x71);
	out8(r, 0x70, 0x02);
	m = in8(r, 0x71);
	t1 = time(NULL) + offset;
	gmtime_r(&t0, &a);
	gmtime_r(&t1, &b);
	return (h == bcd(a.tm_hour) && m == bcd(a.tm_min)) ||
	       (h == bcd(b.tm_hour) && m == bcd(b.tm_min));
}

/* clock.utc.offsetSeconds and clock.timezone move the RTC; no COM1 when
 * autoattachSerialConsole is false */
static void test_rtc_clock_and_no_serial(void)
{
	struct rig r;
	uint8_t v;

	CHECK(rig_init(&r) == 0);
	CHECK(rtc_shows(&r, 0));
	CHECK(bus_read(&r.vm.pio, 0x3f8 + 5, &v, 1) == 0); /* COM1 LSR */
	rig_release(&r);
	rig_tweak = rtc_minus_5h;
	CHECK(rig_init(&r) == 0);
	CHECK(rtc_shows(&r, -5 * 3600 - 30 * 60));
	CHECK(bus_read(&r.vm.pio, 0x3f8 + 5, &v, 1) == -ENOENT);
	rig_release(&r);
	rig_tweak = rtc_bad_zone;
	CHECK(rig_init(&r) == -EINVAL);
	rig_release(&r);
	rig_tweak = rtc_zone;
	if (access("/usr/share/zoneinfo/Etc/GMT-3", R_OK) == 0) {
		CHECK(rig_init(&r) == 0);
		CHECK(rtc_shows(&r, 3 * 3600));
		rig_release(&r);
	}
	rig_tweak = NULL;
}

static void test_report_port(void)
{
	static const char text[] = "VMLET-PROBE-BEGIN v1\nvcpus=0\nVMLET-PROBE-END\n";
	struct fw_abi_report_desc desc = {FW_ABI_REPORT_MAGIC, sizeof(text) - 1, 0x200000};
	uint32_t v = 0, gpa = 0x100000;
	struct rig r;
	size_t len;

	CHECK(rig_init(&r) == 0);
	CHECK(guest_mem_init(&r.vm.mem, 64ull << 20, 0) == 0);
	bus_read(&r.vm.pio, FW_ABI_REPORT_PORT, &v, 4);
	CHECK_EQ_U64(v, FW_ABI_REPORT_MAGIC);
	memcpy(guest_mem_ptr(&r.vm.mem, desc.addr, sizeof(text)), text, sizeof(text));
	memcpy(guest_mem_ptr(&r.vm.mem, gpa, sizeof(desc)), &desc, sizeof(desc));
	bus_write(&r.vm.pio, FW_ABI_REPORT_PORT, &gpa, 4);
	CHECK_STR(vm_console_captured(&r.vm, &len), text);
	/* untrusted: misaligned, outside RAM, too long, bad magic -> dropped */
	gpa = 0x100004;
	bus_write(&r.vm.pio, FW_ABI_REPORT_PORT, &gpa, 4);
	gpa = 0xfffffff8;
	bus_write(&r.vm.pio, FW_ABI_REPORT_PORT, &gpa, 4);
	gpa = 0x100000;
	desc.addr = (64ull << 20) - 4;
	memcpy(guest_mem_ptr(&r.vm.mem, gpa, sizeof(desc)), &desc, sizeof(desc));
	bus_write(&r.vm.pio, FW_ABI_REPORT_PORT, &gpa, 4);
	desc = (struct fw_abi_report_desc){0, 4, 0x200000};
	memcpy(guest_mem_ptr(&r.vm.mem, gpa, sizeof(desc)), &desc, sizeof(desc));
	bus_write(&r.vm.pio, FW_ABI_REPORT_PORT, &gpa, 4);
	CHECK(len == sizeof(text) - 1);
	vm_console_captured(&r.vm, &len);
	CHECK(len == sizeof(text) - 1);
	guest_mem_release(&r.vm.mem);
	rig_release(&r);

	/* a console the user sees is never diverted: the port is absent (all
	 * ones, writes ignored; legacy.c), and the probe's read of it at every
	 * boot is not an unclaimed access (the bus's one warning) */
	rig_console = VM_CONSOLE_NONE;
	CHECK(rig_init(&r) == 0);
	CHECK(guest_mem_init(&r.vm.mem, 64ull << 20, 0) == 0);
	CHECK(bus_read(&r.vm.pio, FW_ABI_REPORT_PORT, &v, 4) == 0);
	CHECK_EQ_U64(v, 0xffffffffu);
	CHECK_EQ_U64(r.vm.pio.warned_read, 0);
	desc = (struct fw_abi_report_desc){FW_ABI_REPORT_MAGIC, sizeof(text) - 1, 0x200000};
	memcpy(guest_mem_ptr(&r.vm.mem, desc.addr, sizeof(text)), text, sizeof(text));
	memcpy(guest_mem_ptr(&r.vm.mem, gpa, sizeof(desc)), &desc, sizeof(desc));
	CHECK(bus_write(&r.vm.pio, FW_ABI_REPORT_PORT, &gpa, 4) == 0);
	CHECK_EQ_U64(r.vm.pio.warned_write, 0);
	vm_console_captured(&r.vm, &len);
	CHECK_EQ_U64(len, 0);
	guest_mem_release(&r.vm.mem);
	rig_release(&r);
	rig_console = VM_CONSOLE_CAPTURE;
}

static void test_guest_mem(void)
{
	struct guest_mem m;

	CHECK(guest_mem_init(&m, 5ull << 30, 0) == 0); /* reserved, not touched */
	CHECK(m.n == 2);
	CHECK(m.r[0].gpa == 0 && m.r[1].gpa == ARCH_HIGH_RAM_START);
	CHECK(m.total == 5ull << 30);
	CHECK(guest_mem_ptr(&m, ARCH_MMIO_HOLE_START, 1) == NULL);
	CHECK(guest_mem_ptr(&m, ARCH_HIGH_RAM_START, 1) == m.r[1].host);
	m.r[1].host[(2ull << 30) - 1] = 1; /* the last byte is writable */
	guest_mem_release(&m);
	CHECK(m.n == 0);
	/* every region starts 2 MiB-aligned (THP, and KVM's 2 MiB mappings),
	 * also for a size Linux does not align itself (not a multiple of 2 MiB:
	 * KubeVirt's "1G" is 10^9 bytes), in a fresh mapping each time */
	for (int i = 0; i < 4; i++) {
		CHECK(guest_mem_init(&m, (1000000000ull & ~4095ull) + (uint64_t)i * 4096, 0) == 0);
		CHECK(m.n == 1 && ((uintptr_t)m.r[0].host & ((2u << 20) - 1)) == 0);
		m.r[0].host[m.r[0].size - 1] = 1;
		guest_mem_release(&m);
	}
	CHECK(guest_mem_init(&m, 5ull << 30, 0) == 0);
	CHECK(((uintptr_t)m.r[0].host & ((2u << 20) - 1)) == 0 &&
	      ((uintptr_t)m.r[1].host & ((2u << 20) - 1)) == 0);
	guest_mem_release(&m);

	CHECK(guest_mem_init(&m, 0, 0) == -EINVAL);
	CHECK(guest_mem_init(&m, 64ull << 20, 4096) == -EINVAL);
	/* 1 TiB of 1 GiB pages: no host has that many reserved */
	CHECK(guest_mem_init(&m, 1ull << 40, 1ull << 30) == -ENOMEM);
}

static unsigned int rig_disks;

static void tweak_balloon(struct vm_config *cfg)
{
	char name[16];

	cfg->rng = cfg->mem_balloon = cfg->free_page_reporting = true;
	cfg->disks = calloc(rig_disks + 1, sizeof(*cfg->disks));
	for (unsigned int i = 0; cfg->disks && i < rig_disks; i++) {
		snprintf(name, sizeof(name), "d%u", i);
		cfg->disks[i].name = strdup(name);
		cfg->disks[i].source = VM_DISK_EMPTYDISK;
		cfg->disks[i].capacity = 1 << 20;
		cfg->n_disks++;
	}
}

/* The memory balloon takes the slot after virtio-rng; when the disks
 * have filled the bus the VM is still made, without it. */
static void test_balloon_slot(void)
{
	struct rig r;

	rig_tweak = tweak_balloon;
	rig_disks = 0;
	CHECK(rig_init(&r) == 0);
	CHECK_EQ_U64(device_pci_slots(&r.vm), 0x7); /* bridge, rng, balloon */
	rig_release(&r);
	rig_disks = 30; /* slots 1-30, rng at 31 */
	CHECK(rig_init(&r) == 0);
	CHECK_EQ_U64(device_pci_slots(&r.vm), 0xffffffffu);
	rig_release(&r);
	rig_tweak = NULL;
}

int main(void)
{
	TEST_RUN(test_serial8250);
	TEST_RUN(test_serial8250_fifo_clear);
	TEST_RUN(test_pm_and_i8042);
	TEST_RUN(test_rtc_and_legacy);
	TEST_RUN(test_rtc_clock_and_no_serial);
	TEST_RUN(test_report_port);
	TEST_RUN(test_guest_mem);
	TEST_RUN(test_balloon_slot);
	return test_summary();
}
