/* SPDX-License-Identifier: MIT */
/*
 * cpu.h - long-mode CPU setup shared by vmlet's guest images: the GDT and
 * the 4 GiB identity map (cpu.S, both static data, usable from the 32-bit
 * entry before any C runs), the TSS with its I/O bitmap, the IDT, and the
 * way between CPL0 and CPL3.
 *
 * CPL3 is where bulk work runs natively on our hosts (CPL0 is emulated,
 * ~1 us per instruction). Every page of the identity map is user
 * accessible (no SMEP/SMAP), so CPL3 code reads all memory. CPL3 gets back
 * to CPL0 with fw_kcall(): an int3 through a DPL3 gate (ud2 works too);
 * the CPL0 handler registered in fw_cpl_init() runs and its return value
 * comes back in rax. Any other exception calls the fatal handler.
 */
#ifndef FW_LIB_CPU_H
#define FW_LIB_CPU_H

#include "firmware/lib/fw.h"

/* GDT selectors (cpu.S) */
#define FW_SEL_CODE64  0x08
#define FW_SEL_DATA    0x10
#define FW_SEL_CODE32  0x18
#define FW_SEL_UDATA   0x20 /* DPL3; use with RPL 3 */
#define FW_SEL_UCODE64 0x28 /* DPL3 */
#define FW_SEL_TSS     0x30
#define FW_GDT_SIZE    0x40 /* bytes: 6 descriptors + the 16-byte TSS one */

/* kcall numbers of the lib (fw_cpl3_run); images use lower ones */
#define FW_KC_LIB   0xfffffff0
#define FW_KC_DONE  0xfffffff0
#define FW_KC_YIELD 0xfffffff1

/* I/O bitmap coverage: ports 0 .. FW_IOMAP_PORTS-1 can be granted. */
#define FW_IOMAP_PORTS 0x1000

#ifndef __ASSEMBLER__

/* Register frame of a trap (layout fixed by cpu.S). */
struct fw_regs {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};

/* CPL0 service for fw_kcall: nr and three arguments, returns rax. */
typedef uint64_t (*fw_kcall_fn)(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2);
/* CPL0: an unexpected exception; must not return. */
typedef void (*fw_fatal_fn)(const struct fw_regs *regs);

/*
 * CPL0, once per image on the BSP: fill the TSS (rsp0 = kernel stack for
 * traps from CPL3) and the GDT's TSS descriptor, build the IDT (vectors
 * 0-31; vector 3 with DPL3), load both.
 */
void fw_cpl_init(void *rsp0, fw_kcall_fn kcall, fw_fatal_fn fatal);
/*
 * The same in two halves, for images whose CPL0 time counts: the minimum at
 * CPL0 (TSS, the int3 gate, both loaded), then the other gates from
 * fw_cpl_fill_idt(), which only writes memory and so may run at CPL3
 * before anything there can fault.
 */
void fw_cpl_init_min(void *rsp0, fw_kcall_fn kcall, fw_fatal_fn fatal);
void fw_cpl_fill_idt(void);
/* APs: load the same GDT/IDT (no TSS: APs stay at CPL0). */
void fw_cpl_load_idt(void);

/* Grant CPL3 access to ports [port, port+n): from CPL0, or from the image's
 * own CPL3 code (the bitmap is ordinary memory the CPU reads at each I/O). */
void fw_cpl3_allow_io(uint16_t port, uint16_t n);

/* CPL0: continue at fn(arg) at CPL3 on stack user_sp (16-byte aligned top),
 * interrupts off. fn must not return. */
FW_NORETURN void fw_cpl3_enter(void (*fn)(void *), void *arg, void *user_sp);

/*
 * CPL3 as a coroutine of CPL0 code (after fw_cpl_init/fw_cpl_init_min):
 * fw_cpl3_run() runs fn(arg) at CPL3 on user_sp (16-byte aligned top),
 * interrupts off, until fn returns (false, *val = its return value) or
 * calls fw_cpl3_yield(v) (true, *val = v). fw_cpl3_resume(ret) continues
 * the CPL3 code that yielded, its fw_cpl3_yield() returning ret, with the
 * same results. Back at CPL0 the caller's rflags, callee-saved registers
 * and data segments are as they were. One CPL3 context at a time; the
 * kcall numbers FW_KC_LIB and up are the lib's (below).
 */
bool fw_cpl3_run(uint64_t (*fn)(void *), void *arg, void *user_sp, uint64_t *val);
bool fw_cpl3_resume(uint64_t ret, uint64_t *val);

/* CPL3 (or CPL0): call the CPL0 kcall handler. */
static inline uint64_t fw_kcall(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	uint64_t ret;

	__asm__ volatile("int3" : "=a"(ret) : "a"(nr), "D"(a0), "S"(a1), "d"(a2) : "memory");
	return ret;
}

/* CPL3 inside fw_cpl3_run(): hand val to the CPL0 code; returns what it
 * passes to fw_cpl3_resume(). */
static inline uint64_t fw_cpl3_yield(uint64_t val)
{
	return fw_kcall(FW_KC_YIELD, val, 0, 0);
}

/* Current privilege level (0 or 3). */
static inline unsigned fw_cpl(void)
{
	uint16_t cs;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	return cs & 3;
}

/* The image's C entry: entry.S's fw_pvh_entry calls it in long mode at
 * CPL0 with the PVH hvm_start_info address; it must not return. */
void fw_main(uint32_t start_info);

/* cpu.S symbols */
extern uint8_t fw_gdt[];
extern uint64_t fw_pml4[];
extern void (*const fw_trap_stubs[32])(void);

#endif /* __ASSEMBLER__ */
#endif /* FW_LIB_CPU_H */
