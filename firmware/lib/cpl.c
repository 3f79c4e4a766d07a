/* SPDX-License-Identifier: MIT */
/* cpl.c - TSS with I/O bitmap, IDT, trap dispatch (CPL0). */
#include "firmware/lib/cpu.h"

struct fw_tss {
	uint32_t res0;
	uint64_t rsp[3];
	uint64_t res1;
	uint64_t ist[7];
	uint64_t res2;
	uint16_t res3;
	uint16_t iomap_base;
	uint8_t iomap[FW_IOMAP_PORTS / 8 + 1]; /* + the all-ones end byte */
} FW_PACKED;

struct fw_idt_gate {
	uint16_t off_lo, sel;
	uint8_t ist, type;
	uint16_t off_mid;
	uint32_t off_hi, res;
} FW_PACKED;

static struct fw_tss tss FW_ALIGNED(64) = {
    .iomap_base = __builtin_offsetof(struct fw_tss, iomap),
    .iomap = {[0 ... FW_IOMAP_PORTS / 8] = 0xff},
};
static struct fw_idt_gate idt[32] FW_ALIGNED(16);
static fw_kcall_fn kcall_fn;
static fw_fatal_fn fatal_fn;

#define GATE_INTR_DPL0 0x8e
#define GATE_INTR_DPL3 0xee

static void load_idt(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} FW_PACKED ptr = {sizeof(idt) - 1, (uintptr_t)idt};

	__asm__ volatile("lidt %0" : : "m"(ptr));
}

void fw_cpl_load_idt(void)
{
	load_idt();
}

static void set_gate(unsigned int v)
{
	uint64_t off = (uintptr_t)fw_trap_stubs[v];

	idt[v] = (struct fw_idt_gate){
	    .off_lo = (uint16_t)off,
	    .sel = FW_SEL_CODE64,
	    .type = v == 3 ? GATE_INTR_DPL3 : GATE_INTR_DPL0,
	    .off_mid = (uint16_t)(off >> 16),
	    .off_hi = (uint32_t)(off >> 32),
	};
}

void fw_cpl_init_min(void *rsp0, fw_kcall_fn kcall, fw_fatal_fn fatal)
{
	uint64_t base = (uintptr_t)&tss, limit = sizeof(tss) - 1;
	uint64_t *desc = (uint64_t *)(fw_gdt + FW_SEL_TSS);

	kcall_fn = kcall;
	fatal_fn = fatal;
	tss.rsp[0] = (uintptr_t)rsp0;
	desc[0] = (limit & 0xffff) | (base & 0xffffff) << 16 | 0x89ull << 40 |
		  (limit >> 16 & 0xf) << 48 | (base >> 24 & 0xff) << 56;
	desc[1] = base >> 32;
	set_gate(3);
	load_idt();
	__asm__ volatile("ltr %w0" : : "r"(FW_SEL_TSS));
}

void fw_cpl_fill_idt(void)
{
	for (unsigned int v = 0; v < FW_ARRAY_SIZE(idt); v++)
		if (v != 3)
			set_gate(v);
}

void fw_cpl_init(void *rsp0, fw_kcall_fn kcall, fw_fatal_fn fatal)
{
	fw_cpl_init_min(rsp0, kcall, fatal);
	fw_cpl_fill_idt();
}

void fw_cpl3_allow_io(uint16_t port, uint16_t n)
{
	for (uint32_t p = port; p < (uint32_t)port + n && p < FW_IOMAP_PORTS; p++)
		tss.iomap[p / 8] &= (uint8_t) ~(1u << (p % 8));
}

/* fw_cpl3_run/resume (cpu.S): the CPL3 frame of the last yield, and
 * whether a CPL3 context runs for them (set there). */
extern struct fw_regs fw_cpl3_frame;
extern bool fw_cpl3_running;
struct fw_regs fw_cpl3_frame;
bool fw_cpl3_running;
FW_NORETURN void fw_cpl0_back(bool yielded, uint64_t val);

/* Called by fw_trap_common with the saved frame. */
void fw_trap(struct fw_regs *r);
void fw_trap(struct fw_regs *r)
{
	bool from_user = (r->cs & 3) == 3;

	if (from_user && r->vector == 3 && fw_cpl3_running &&
	    (r->rax == FW_KC_DONE || r->rax == FW_KC_YIELD)) {
		fw_cpl3_running = false;
		if (r->rax == FW_KC_YIELD)
			fw_cpl3_frame = *r;
		fw_cpl0_back(r->rax == FW_KC_YIELD, r->rdi);
	}

	if (r->vector == 6 && from_user) {
		const uint8_t *ip = (const uint8_t *)r->rip;

		if (ip[0] == 0x0f && ip[1] == 0x0b) { /* ud2: a kcall too */
			r->rip += 2;
			r->vector = 3;
		}
	}
	if (r->vector == 3 && kcall_fn) {
		r->rax = kcall_fn(r->rax, r->rdi, r->rsi, r->rdx);
		return;
	}
	if (fatal_fn)
		fatal_fn(r);
	for (;;)
		__asm__ volatile("cli; hlt");
}
