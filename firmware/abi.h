/* SPDX-License-Identifier: MIT */
/*
 * abi.h - the contract between vmlet (host) and its own guest firmware
 * (the probe, later the EFI firmware). Dual use: plain C99, no includes, no
 * types beyond the builtin ones; the host defines FW_ABI_HOST before
 * including it (nothing differs today, the macro is reserved for host-only
 * helpers).
 *
 * ---- Ports ---------------------------------------------------------------
 * The probe prints on COM1 (FW_ABI_COM1_PORT), a polled 16550: it waits for
 * LSR.THRE, then writes up to FW_ABI_UART_FIFO bytes (FIFO enabled). The
 * same text therefore comes out of QEMU's serial port and vmlet's UART.
 * Debug bytes (progress characters, never the report) may go to
 * FW_ABI_DEBUG_PORT (QEMU's isa-debugcon / Bochs port 0xe9 convention);
 * a VMM that has no device there simply ignores them.
 *
 * ---- Power-off -------------------------------------------------------------
 * 1. ACPI: write SLP_TYP(\_S5) << 10 | SLP_EN (1 << 13) to the FADT's
 *    PM1a_CNT_BLK (and PM1b when present); SLP_TYP is the first element of
 *    the \_S5_ package found by scanning the DSDT AML. A VMM ends the VM
 *    with exit status 0.
 * 2. QEMU's isa-debug-exit at FW_ABI_DEBUG_EXIT_PORT: a 32-bit write of
 *    FW_ABI_DEBUG_EXIT_OK (QEMU exits with status (v << 1) | 1).
 * 3. cli; hlt forever.
 *
 * ---- Fast report path (optional) ----------------------------------------
 * Every byte on COM1 is a VM exit (~10 us on our hosts: ~4 ms for a small
 * report). A VMM may offer FW_ABI_REPORT_PORT instead: a 32-bit read
 * returns FW_ABI_REPORT_MAGIC when it is there (an absent port reads
 * anything else, QEMU 0xffffffff). The probe then writes, with one 32-bit
 * write to the same port, the guest-physical address (below 4 GiB, 8-byte
 * aligned) of a struct fw_abi_report_desc and does not print the report on
 * COM1. The VMM reads desc.len bytes (at most FW_ABI_REPORT_MAX) at
 * desc.addr: the same text the probe would have printed.
 *
 * ---- EFI platform port (vmlet's UEFI firmware) ----------------------------
 * At FW_ABI_EFI_PORT a 32-bit read returns FW_ABI_EFI_MAGIC when the VMM
 * offers it (vmlet does for EFI VMs; an absent port reads anything else).
 * A 32-bit write gives the guest-physical address (below 4 GiB, 8-byte
 * aligned) of a struct fw_abi_efi_desc; the VMM carries out desc.op and
 * writes desc.status (and desc.len) back before the write returns:
 *   FW_ABI_EFI_BOOT_ORDER  16-bit disk indexes in boot order (the disks
 *       with a bootOrder, lowest first, then the others in disk order)
 *       are written at addr, at most cap bytes; len = bytes written. Disk
 *       n is the n-th virtio-blk function in PCI order when all disks are
 *       virtio-blk (else use FW_ABI_EFI_BOOT_LOCS).
 *   FW_ABI_EFI_BOOT_LOCS   the same disks in the same order, each as a
 *       16-bit location: bits 7:0 its PCI device << 3 | function on bus
 *       0, bits 15:8 its AHCI port + 1 on that function (0: the function
 *       is the disk, virtio-blk); FW_ABI_EFI_LOC_NONE: a disk without one.
 *       UNSUPPORTED from a VMM that predates it.
 *   FW_ABI_EFI_VARS_LOAD   the stored variable blob (the last one saved) is
 *       copied to addr; len = its size (0: none yet). Status UNSUPPORTED
 *       when the VM does not persist variables, TOO_BIG when cap is short.
 *   FW_ABI_EFI_VARS_SAVE   the len bytes at addr (at most
 *       FW_ABI_EFI_VARS_MAX) become the stored blob: kept across restarts
 *       (vmlet: a crash-safe file next to the VM). The blob is the
 *       firmware's own format; the VMM does not interpret it.
 *   FW_ABI_EFI_CONSOLE     the len bytes at addr (at most
 *       FW_ABI_EFI_CONSOLE_MAX) are console output, as if written to COM1
 *       one byte at a time (one exit instead of one per byte). Status
 *       UNSUPPORTED when the VMM cannot take it: the firmware then writes
 *       COM1 itself.
 *   FW_ABI_EFI_PCI_SLOTS   a 32-bit mask of the device numbers on PCI bus 0
 *       that have a function (bit n: device n) is written at addr (cap >=
 *       4); len = 4. The firmware reads the configuration space of those
 *       slots only (every ECAM read is an exit). UNSUPPORTED when the VMM
 *       does not know: the firmware then probes all 32.
 *
 * ---- The probe report (FW_ABI_VERSION 1) ---------------------------------
 * Lines end with "\n" (a "\r" before it is tolerated by parsers). Between
 *     VMLET-PROBE-BEGIN v1
 *     ...
 *     VMLET-PROBE-END
 * every line is key=value; values are decimal unless said otherwise; lists
 * are separated by one space. Unknown keys must be ignored by a parser (a
 * newer probe may add keys); a changed meaning bumps FW_ABI_VERSION.
 *
 *   vendor=<12 chars>        CPUID leaf 0 vendor string of the BSP
 *   tscDeadline=0|1          CPUID.1:ECX[24] (TSC-deadline timer) of the BSP
 *   brand=<text>|-           the BSP's brand string (0x8000_0002..4) without
 *                            leading/trailing spaces, bytes outside ' '..'~'
 *                            as '_'; "-" when empty
 *   topoSource=<word>        which leaves the BSP's ids come from, Linux's
 *                            order: intel-1f | intel-80000026 | intel-b |
 *                            intel-legacy | amd-1f | amd-80000026 | amd-b |
 *                            amd-80000008 | amd-none
 *   smtShift=N  pkgShift=N   the BSP's APIC-ID field widths (cumulative)
 *   vcpus=N                  number of vcpu lines that follow (BSP first,
 *                            then APs in MADT order)
 *   vcpu=<apicId> <package> <core> <thread> <lapicId>
 *                            one per vCPU that ran the probe; apicId is the
 *                            initial APIC ID Linux would use (0xB/0x1F EDX,
 *                            0x8000001E EAX or leaf 1 EBX[31:24]), ids
 *                            derived from that vCPU's own CPUID at CPL0;
 *                            lapicId is its local APIC ID register
 *   vcpuMissing=<apicId>     a MADT entry whose CPU did not answer in time
 *   sockets=N coresPerSocket=N threadsPerCore=N
 *                            distinct packages; max distinct cores in a
 *                            package; max threads in a core
 *   memoryBytes=N            sum of the RAM (type 1) entries of the memory
 *                            map (PVH start_info memmap), reserved/ACPI
 *                            entries and holes excluded
 *   memmapEntries=N
 *   acpiTables=<SIG> ...     every table reached from the RSDP (RSDP, XSDT
 *                            or RSDT, their entries, then the FADT's DSDT
 *                            and FACS) whose checksum is correct (FACS has
 *                            none), in discovery order
 *   tpm=crb|tis <startupRc> <getRandomRc> <bytes>
 *                            only with a TPM2 table (start method CRB, or 6:
 *                            the FIFO at 0xFED40000): the response codes
 *                            (hex) of TPM2_Startup(CLEAR) and
 *                            TPM2_GetRandom(8) sent through it at CPL3,
 *                            and how many random bytes came back;
 *                            tpm=error <step> when the interface failed
 *   acpiBadChecksum=<SIG> ...  tables whose checksum is wrong (omitted when
 *                            none)
 *   madtApicIds=<id> ...     enabled processor-local (x2)APIC entries of the
 *                            MADT, in table order
 *   s5SlpTyp=N               \_S5 SLP_TYPa found in the DSDT (-1: none)
 *   acpiPowerOff=<how>       pm1a-io 0x<port> | sleep-control-io 0x<port> |
 *                            sleep-control-mem 0x<addr> | none
 *   tscAps=N                 TSC ticks starting the APs took (INIT-SIPI-SIPI
 *                            to the last AP's answer or the timeout)
 *   tscProbe=N               TSC ticks from the first 64-bit instruction to
 *                            the finished report (serial output excluded)
 *   pciFunctions=N           functions found on PCI bus 0 through the ECAM
 *                            of the MCFG table (omitted without MCFG)
 *   pci=<bb:dd.f> <vendor>:<device> <class>
 *                            one per function, hex (class 6 digits)
 *   disk=<bb:dd.f> <capacityBytes> <readOnly 0|1> <sha256First1MiB> <serial>
 *                            one per virtio-blk function, driven at CPL3:
 *                            SHA-256 (hex) of the first MiB (or the whole
 *                            disk when smaller, "-" when a read failed);
 *                            serial from GET_ID, "-" when empty, bytes
 *                            outside '!'..'~' shown as '_'
 *   hostile=<bb:dd.f> ok|<step>
 *                            only with "vmlet.hostile" on the command line:
 *                            each virtio-blk is sent malformed chains and
 *                            rings first; ok when it kept serving good
 *                            requests (firmware/lib/virtio.c)
 *   rng=<bb:dd.f> <bytes> ok|bad
 *                            one per virtio-rng function: bytes received
 *                            for two 64-byte requests; ok when both
 *                            arrived and differ
 *   nic=<bb:dd.f> <mac> <linkUp 0|1> <mtu> <address/prefix|-> <router|->
 *       <arp ok|-> <ping ok|-> <rxOk> <txOk> <echoed>
 *                            one per virtio-net function, driven at CPL3
 *                            (firmware/probe/virtio_net.c): MAC, STATUS link
 *                            bit and MTU from the device (0 when not
 *                            offered); the IPv4 address and router a DHCP
 *                            exchange (DISCOVER, OFFER, REQUEST, ACK) gave;
 *                            whether the router answered an ARP request and
 *                            an ICMP echo; frames received and transmitted;
 *                            ICMP echo requests to the address answered
 *                            ("vmlet.netecho=N": wait for N of them);
 *                            "vmlet.netping=A.B.C.D" pings that address
 *                            through the router instead of the router
 *   nic6=<bb:dd.f> <link-local> <ping6 ok|-> <peer|->
 *                            after each nic= line: the NIC's IPv6 link-local
 *                            address (EUI-64 of its MAC), whether an ICMPv6
 *                            echo request to ff02::1 was answered (the probe
 *                            answers neighbor solicitations for its address)
 *                            and by whom; addresses as 8 hex groups
 *   hostileNic=<bb:dd.f> ok|<step>
 *                            only with "vmlet.hostile": each virtio-net is
 *                            sent malformed transmit chains first (outside
 *                            RAM, huge, device-writable, empty, oversized,
 *                            a loop); ok when each was completed or reported
 *                            with NEEDS_RESET and a good frame went out
 *                            after it (firmware/probe/virtio_net_hostile.c)
 *   netBench=<bb:dd.f> <mode> <frames> <bytes> <ticks> <missing>
 *                            only with "vmlet.netbench=MODE": timed traffic
 *                            on the first virtio-net (firmware/probe/
 *                            netbench.c), for scripts/bench-net
 *   efiVendor=<text> efiRevision=0x<8 hex> efiSpec=<major>.<minor>
 *   efiTables=<name|GUID> ...
 *                            only when the probe ran as the payload of a
 *                            UEFI firmware ("vmlet.efi=0x<system table>" on
 *                            its command line): the system table's vendor
 *                            (non-printable as '_'), firmware revision,
 *                            UEFI revision and configuration tables in
 *                            order (ACPI20, ACPI, SMBIOS3, SMBIOS, else the
 *                            GUID in its text form)
 *   biosVendor=<text>        the BIOS vendor of the SMBIOS type 0 structure
 *                            (through the "_SM3_" or "_SM_" entry point in
 *                            0xF0000-0xFFFFF; non-printable as '_', "-" when
 *                            empty; omitted without SMBIOS): "vmlet" for
 *                            vmlet's own tables, "SeaBIOS" through SeaBIOS
 *   systemUuid=<uuid>        the UUID of the first SMBIOS type 1 structure
 *                            (same entry point), lower-case text, the first
 *                            three fields read little-endian (SMBIOS 2.6+,
 *                            as dmidecode shows it); omitted without one
 *   msixRouted=<functions> <vectors>
 *                            only with "vmlet.msix": every MSI-X vector of
 *                            every PCI function was routed and unmasked
 *                            (to APIC 0), as a Linux guest leaves them,
 *                            before the probe ends (firmware/probe/end.c)
 *   error=<text>             something the probe could not do (repeatable)
 *
 * After the report the probe powers off, or with "vmlet.end=MODE": reboot
 * (i8042 reset line), crash (triple fault), hold (halts for good), button
 * (waits for the ACPI power button, then powers off). "vmlet.netquick":
 * the NICs' own facts only (no DHCP, ARP, ping).
 *
 * Parsers must bound everything: the guest is untrusted.
 */
#ifndef VMLET_FIRMWARE_ABI_H
#define VMLET_FIRMWARE_ABI_H

#define FW_ABI_VERSION 1

#define FW_ABI_COM1_PORT       0x3f8
#define FW_ABI_UART_FIFO       16
#define FW_ABI_DEBUG_PORT      0xe9
#define FW_ABI_DEBUG_EXIT_PORT 0xf4
#define FW_ABI_DEBUG_EXIT_OK   0x10 /* QEMU exit status 0x21 = 33 */

#define FW_ABI_PROBE_BEGIN "VMLET-PROBE-BEGIN v"
#define FW_ABI_PROBE_END   "VMLET-PROBE-END"

/* Limits both sides agree on; a report beyond them is malformed. */
#define FW_ABI_MAX_VCPUS       1024
#define FW_ABI_MAX_ACPI_TABLES 32
#define FW_ABI_MAX_LINE	       8192 /* longest line (madtApicIds, acpiTables) */

#define FW_ABI_REPORT_PORT  0x0f10	/* 4 bytes */
#define FW_ABI_REPORT_MAGIC 0x544c4d56u /* "VMLT" */
#define FW_ABI_REPORT_MAX   (64 * 1024)

/* 16 bytes, little endian, no padding (x86_64 host and guest). */
struct fw_abi_report_desc {
	unsigned int magic;	 /* FW_ABI_REPORT_MAGIC */
	unsigned int len;	 /* bytes of text */
	unsigned long long addr; /* guest-physical address of the text */
};

#define FW_ABI_EFI_PORT	       0x0f18	   /* 4 bytes */
#define FW_ABI_EFI_MAGIC       0x56454c56u /* "VLEV" */
#define FW_ABI_EFI_VARS_MAX    (64 * 1024)
#define FW_ABI_EFI_BOOT_ORDER  1
#define FW_ABI_EFI_VARS_LOAD   2
#define FW_ABI_EFI_VARS_SAVE   3
#define FW_ABI_EFI_CONSOLE     4
#define FW_ABI_EFI_CONSOLE_MAX 4096
#define FW_ABI_EFI_PCI_SLOTS   5
#define FW_ABI_EFI_BOOT_LOCS   6
#define FW_ABI_EFI_LOC_NONE    0xffffu
#define FW_ABI_EFI_OK	       0
#define FW_ABI_EFI_UNSUPPORTED 1
#define FW_ABI_EFI_TOO_BIG     2
#define FW_ABI_EFI_BAD	       3 /* malformed request */

/* 32 bytes, little endian, no padding. */
struct fw_abi_efi_desc {
	unsigned int magic;  /* FW_ABI_EFI_MAGIC */
	unsigned int op;     /* FW_ABI_EFI_BOOT_ORDER ... */
	unsigned int status; /* written by the VMM */
	unsigned int len;    /* bytes (in or out, per op) */
	unsigned int cap;    /* room at addr */
	unsigned int reserved;
	unsigned long long addr; /* guest-physical buffer */
};

/* ACPI power-off: PM1_CNT bits. */
#define FW_ABI_PM1_SLP_EN	 (1u << 13)
#define FW_ABI_PM1_SLP_TYP_SHIFT 10

/* The brand= value for the 48 bytes of CPUID 0x8000_0002..4 (NUL-padded):
 * without leading and trailing spaces, bytes outside ' '..'~' as '_', "-"
 * when nothing is left. out has room for 49 bytes. */
static inline void fw_abi_brand(char *out, const char *brand)
{
	unsigned int b = 0, e, k = 0;

	while (b < 48 && brand[b] == ' ')
		b++;
	for (e = b; e < 48 && brand[e];)
		e++;
	while (e > b && brand[e - 1] == ' ')
		e--;
	for (; b < e; b++)
		out[k++] = brand[b] >= ' ' && brand[b] < 0x7f ? brand[b] : '_';
	if (!k)
		out[k++] = '-';
	out[k] = 0;
}

#endif /* VMLET_FIRMWARE_ABI_H */
