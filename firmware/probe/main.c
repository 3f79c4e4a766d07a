/* SPDX-License-Identifier: MIT */
/*
 * main.c - the probe's CPL0 half: set up, read this CPU's CPUID and APIC
 * ID, drop to CPL3, and serve its kcalls (start APs, write the serial
 * port, power off). Every instruction here is emulated on our hosts
 * (~1 us each): loops are avoided or bounded by the CPU count.
 */
#include "firmware/lib/cpu.h"
#include "firmware/lib/io.h"
#include "firmware/lib/serial.h"
#include "firmware/lib/smp.h"
#include "firmware/probe/probe.h"

/* TSC ticks to wait for APs: ~4-16 s at 1-4 GHz. On bare metal they need
 * < 1 ms; where CPL0 is emulated, starting 260 took 0.14-0.2 s on a 2-core
 * host at load 6, and more under heavier load. The wait ends when the last
 * one is in: only a missing AP costs the whole of it. */
#define AP_TIMEOUT_TSC (1ull << 34)

struct probe_cpu probe_cpus[PROBE_MAX_CPUS];
struct fw_acpi_power probe_power = {.slp_typ = -1};
uint64_t probe_tsc0;
char probe_brand[49];

static struct fw_serial com1;
static struct fw_lapic lapic;
static uint32_t n_done;
static uint8_t kstack[8192] FW_ALIGNED(16);
static uint8_t ustack[65536] FW_ALIGNED(16);

static void cpuid_into(struct topo_leaf *l, uint32_t leaf, uint32_t sub)
{
	__asm__ volatile("cpuid"
			 : "=a"(l->a), "=b"(l->b), "=c"(l->c), "=d"(l->d)
			 : "a"(leaf), "c"(sub));
}

/* Subleaves of 0xB/0x1F up to the first invalid one (as topo.c stops). */
static void ext_leaf(struct topo_leaf *sub, uint32_t leaf, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		cpuid_into(&sub[i], leaf, i);
		if (!(sub[i].b & 0xffff) || !(sub[i].c & 0xff00))
			break;
	}
}

/* This CPU's view: only the leaves topo_derive() reads. */
static void collect(struct probe_cpu *c, const struct fw_lapic *l)
{
	struct topo_cpuid *id = &c->id;
	uint32_t max, emax;

	cpuid_into(&id->l0, 0, 0);
	cpuid_into(&id->l1, 1, 0);
	max = id->l0.a;
	if (max >= 4)
		cpuid_into(&id->l4, 4, 0);
	if (max >= 0xb)
		ext_leaf(id->lb, 0xb, TOPO_LEAF_B_SUBS);
	if (max >= 0x1f)
		ext_leaf(id->l1f, 0x1f, TOPO_LEAF_1F_SUBS);
	cpuid_into(&id->e0, 0x80000000, 0);
	emax = (id->e0.a & 0xffff0000u) == 0x80000000u ? id->e0.a : 0;
	if (emax >= 0x80000001)
		cpuid_into(&id->e1, 0x80000001, 0);
	if (emax >= 0x80000008)
		cpuid_into(&id->e8, 0x80000008, 0);
	if (emax >= 0x8000001e)
		cpuid_into(&id->e1e, 0x8000001e, 0);
	if (emax >= 0x80000026)
		ext_leaf(id->e26, 0x80000026, TOPO_LEAF_26_SUBS);
	c->lapic_id = fw_lapic_id(l);
}

static void ap_main(uint32_t index)
{
	struct fw_lapic l = lapic;
	struct probe_cpu *c;

	if (index + 1 >= PROBE_MAX_CPUS)
		return;
	c = &probe_cpus[index + 1];
	fw_cpl_load_idt();
	if (lapic.x2apic)
		fw_lapic_enable_x2apic(&l);
	collect(c, &l);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&n_done, 1, __ATOMIC_RELEASE);
}

static uint64_t start_aps(const uint32_t *ids, uint32_t n, bool need_x2apic)
{
	uint32_t sent = 0;
	uint64_t t0;

	if (need_x2apic && !lapic.x2apic) {
		if (!(probe_cpus[0].id.l1.c & (1u << 21)))
			return (uint64_t)-1;
		fw_lapic_enable_x2apic(&lapic);
	}
	fw_smp_prepare(PROBE_TRAMPOLINE, ap_main);
	for (uint32_t i = 0; i < n && i < PROBE_MAX_CPUS; i++)
		if (ids[i] != probe_cpus[0].lapic_id &&
		    !fw_smp_wake(&lapic, ids[i], PROBE_TRAMPOLINE))
			sent++;
	t0 = rdtsc();
	while (__atomic_load_n(&n_done, __ATOMIC_ACQUIRE) < sent && rdtsc() - t0 < AP_TIMEOUT_TSC)
		fw_pause();
	return __atomic_load_n(&n_done, __ATOMIC_ACQUIRE);
}

/* The report: through the VMM's fast port when it has one, else COM1. */
static void write_report(const char *text, size_t len)
{
	static struct fw_abi_report_desc desc FW_ALIGNED(8);

	if (len <= FW_ABI_REPORT_MAX && inl(FW_ABI_REPORT_PORT) == FW_ABI_REPORT_MAGIC) {
		desc = (struct fw_abi_report_desc){FW_ABI_REPORT_MAGIC, (unsigned int)len,
						   (uintptr_t)text};
		outl(FW_ABI_REPORT_PORT, (uint32_t)(uintptr_t)&desc);
		return;
	}
	fw_serial_write(&com1, text, len);
}

/* CPL0 endings other than power-off (probe.h: enum probe_end_mode). */
static FW_NORETURN void end_now(int mode)
{
	static const struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) no_idt;

	if (mode == PROBE_END_REBOOT)
		outb(0x64, 0xfe);    /* i8042: pulse the reset line */
	if (mode == PROBE_END_CRASH) /* no IDT: #BP, #GP, #DF, triple fault */
		__asm__ volatile("lidt %0; int3" : : "m"(no_idt));
	if (mode != PROBE_END_POWEROFF)
		fw_halt_forever(); /* hold (and a reset that did not happen) */
	fw_poweroff(&probe_power);
}

static uint64_t kcall(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	switch (nr) {
	case PROBE_KC_WRITE:
		write_report((const char *)(uintptr_t)a0, (size_t)a1);
		return 0;
	case PROBE_KC_START_APS:
		return start_aps((const uint32_t *)(uintptr_t)a0, (uint32_t)a1, a2 != 0);
	case PROBE_KC_POWEROFF:
		fw_poweroff(&probe_power);
	case PROBE_KC_ALLOW_IO:
		fw_cpl3_allow_io((uint16_t)a0, (uint16_t)a1);
		return 0;
	case PROBE_KC_END:
		end_now((int)a0);
	}
	return (uint64_t)-1;
}

static void put_hex(char *p, uint64_t v)
{
	for (int i = 15; i >= 0; i--, v >>= 4)
		p[i] = "0123456789abcdef"[v & 0xf];
}

/* An unexpected exception: a minimal report the host can parse. */
static void fatal(const struct fw_regs *r)
{
	static char msg[] = FW_ABI_PROBE_BEGIN "1\nerror=exception vv at rip "
					       "0123456789abcdef cpl x\n" FW_ABI_PROBE_END "\n";
	char *p = msg + sizeof(FW_ABI_PROBE_BEGIN "1\nerror=exception ") - 1;

	p[0] = "0123456789abcdef"[r->vector >> 4 & 0xf];
	p[1] = "0123456789abcdef"[r->vector & 0xf];
	put_hex(p + 10, r->rip);
	p[31] = (char)('0' + (r->cs & 3));
	fw_serial_write(&com1, msg, sizeof(msg) - 1);
	fw_poweroff(&probe_power);
}

void fw_main(uint32_t start_info)
{
	probe_tsc0 = rdtsc();
	fw_serial_init(&com1, FW_ABI_COM1_PORT);
	fw_cpl_init(kstack + sizeof(kstack), kcall, fatal);
	fw_cpl3_allow_io(FW_ABI_DEBUG_PORT, 1);
	fw_cpl3_allow_io(0xcf8, 8); /* PCI mechanism #1: cross-checked with ECAM */
	fw_cpl3_allow_io(0x70, 2);  /* CMOS RTC: virtio_net.c's DHCP waits */
	fw_lapic_detect(&lapic);
	collect(&probe_cpus[0], &lapic);
	if (probe_cpus[0].id.e0.a >= 0x80000004 && probe_cpus[0].id.e0.a < 0x80010000)
		for (uint32_t i = 0; i < 3; i++) {
			struct topo_leaf l;

			cpuid_into(&l, 0x80000002 + i, 0);
			memcpy(probe_brand + 16 * i, &l, 16);
		}
	probe_cpus[0].done = 1;
	fw_cpl3_enter(probe_user_main, (void *)(uintptr_t)start_info, ustack + sizeof(ustack));
}
