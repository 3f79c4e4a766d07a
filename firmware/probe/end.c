// SPDX-License-Identifier: MIT
/*
 * end.c - how the probe ends, for the VMM's teardown tests (probe.h):
 * first, optionally, every MSI-X vector of every PCI function routed the
 * way a Linux guest leaves them, then power-off or another ending.
 */
#include "firmware/lib/cpu.h"
#include "firmware/lib/io.h"
#include "firmware/lib/pci.h"
#include "firmware/probe/probe.h"

#define MSIX_ENABLE    0x8000
#define MSIX_MASKALL   0x4000
#define MSIX_ADDR      0xfee00000u /* to APIC ID 0, fixed delivery */
#define MSIX_VECTOR0   0x40
#define PM1_PWRBTN_STS 0x100

/* The MSI-X capability's offset in f's configuration space, or 0. */
static uint32_t msix_cap(const struct fw_pci_fn *f)
{
	uint32_t cap;
	int hops = 0;

	if (!(fw_pci_read16(f, FW_PCI_STATUS) & FW_PCI_STATUS_CAP_LIST))
		return 0;
	for (cap = fw_pci_read8(f, FW_PCI_CAPABILITY_LIST) & 0xfc; cap >= 0x40 && hops < 48;
	     hops++) {
		if (fw_pci_read8(f, cap) == FW_PCI_CAP_ID_MSIX)
			return cap;
		cap = fw_pci_read8(f, cap + 1) & 0xfc;
	}
	return 0;
}

/* Route and unmask every vector of f's MSI-X table; returns how many. */
static unsigned int msix_route(const struct fw_pci_fn *f, uint64_t *next)
{
	uint32_t cap = msix_cap(f), tbl;
	volatile uint32_t *t;
	uint16_t ctl;
	uint64_t base;
	unsigned int n;

	if (!cap)
		return 0;
	ctl = fw_pci_read16(f, cap + 2);
	tbl = fw_pci_read32(f, cap + 4);
	base = fw_pci_bar(f, (int)(tbl & 7), next);
	if (!base)
		return 0;
	fw_pci_write16(f, FW_PCI_COMMAND, fw_pci_read16(f, FW_PCI_COMMAND) | FW_PCI_COMMAND_MEMORY);
	fw_pci_write16(f, cap + 2, ctl | MSIX_ENABLE | MSIX_MASKALL);
	t = (volatile uint32_t *)(uintptr_t)(base + (tbl & ~7u));
	n = (ctl & 0x7ffu) + 1;
	for (unsigned int i = 0; i < n; i++) {
		t[4 * i] = MSIX_ADDR;
		t[4 * i + 1] = 0;
		t[4 * i + 2] = MSIX_VECTOR0 + i;
		t[4 * i + 3] = 0; /* unmasked */
	}
	fw_pci_write16(f, cap + 2, (uint16_t)((ctl | MSIX_ENABLE) & ~MSIX_MASKALL));
	return n;
}

void probe_msix_route(struct fw_buf *out, uint64_t ecam)
{
	static struct fw_pci_fn fns[FW_PCI_MAX_FNS];
	uint64_t next = 0xe0000000ull; /* BARs the report left unassigned */
	unsigned int vectors = 0;
	int n = ecam ? fw_pci_scan(ecam, fns, FW_PCI_MAX_FNS) : 0, fns_routed = 0;

	for (int i = 0; i < n; i++) {
		unsigned int v = msix_route(&fns[i], &next);

		vectors += v;
		fns_routed += v > 0;
	}
	fw_buf_printf(out, "msixRouted=%d %u\n", fns_routed, vectors);
}

int probe_end_mode(const char *name)
{
	static const char *const names[] = {"poweroff", "reboot", "crash", "hold", "button"};

	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcmp(name, names[i]))
			return i;
	return PROBE_END_POWEROFF;
}

void probe_end(int mode)
{
	/* at CPL3 (native): poll the power button's status bit */
	if (mode == PROBE_END_BUTTON && probe_power.pm1a_evt) {
		fw_kcall(PROBE_KC_ALLOW_IO, probe_power.pm1a_evt, 2, 0);
		while (!(inw(probe_power.pm1a_evt) & PM1_PWRBTN_STS))
			for (uint64_t t0 = rdtsc(); rdtsc() - t0 < (1u << 22);)
				fw_pause();
	}
	fw_kcall(PROBE_KC_END, mode == PROBE_END_BUTTON ? PROBE_END_POWEROFF : (uint64_t)mode, 0,
		 0);
	for (;;)
		;
}
