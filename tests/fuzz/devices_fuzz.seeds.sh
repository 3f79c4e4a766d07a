#!/usr/bin/env bash
# Seeds for devices_fuzz (input format in devices_fuzz.c): Linux's 16550
# set-up, loopback test and console input; a PCI walk through 0xcf8 and
# ECAM, BAR sizing and a virtio-pci driver's start on virtio-rng (features,
# queue registers with queue_select in and out of range, MSI-X enable and
# table, notify, ISR, the PCI_CFG window) and on a four-queue virtio-blk
# (device config); the EFI port's requests (boot order, variables saved,
# loaded again after a reboot, PCI slots, console) and bad ones (past RAM,
# straddling RAM, bad magic, misaligned); an OVMF VM's q35 registers, PM
# timer and CFI flash (query, program, erase, status); virtio-console's
# MULTIPORT handshake with good and bad control messages; PM1, the power
# button and S5, RTC/CMOS, i8042, the legacy ports and the report port;
# an AHCI driver's start on the SATA disks (HBA reset, port 0's command
# list and FIS area, COMRESET, ST) and its commands: IDENTIFY, READ DMA
# EXT, a write to the read-only disk, NCQ, TRIM, a PRD past RAM; the same
# controller with a CD-ROM drive (with a medium and empty) and the ATAPI
# commands of SeaBIOS and Linux's sr, good and bad.
# $1: the seed directory.
set -eu
exec python3 - "$1" <<'PY'
import os, struct, sys

OUT = sys.argv[1]
Q35, ACPI, RNG, EFI, NOCAP, NOCOM1, DISKS, MQ, BALLOON, REPORTING, CONSOLE, SATA, CDROM, \
    EMPTY = (1 << i for i in range(14))
PIO = [0x00, 0x60, 0x64, 0x70, 0x80, 0x92, 0xc0, 0xe9, 0xf4, 0x2f8, 0x3e8, 0x3f8,
       0x402, 0x600, 0x604, 0x608, 0xcf8, 0xcf9, 0xcfc, 0x510, 0xf10, 0xf18]
ECAM, Q35ECAM, BAR1, BAR2, BAR3, MMIO32, MMIO32HI, VARS, CODE, ABAR1, ABAR2 = range(11)
WC = {1: 0, 2: 1, 4: 2, 8: 3}

def pio_addr(port):
    best = max((i for i, b in enumerate(PIO) if 0 <= port - b <= 127), key=lambda i: PIO[i],
               default=None)
    if best is None:
        return bytes([len(PIO) + (port >> 8), port & 0xff])
    return bytes([best, port - PIO[best]])

def op(kind, width=1, count=1):
    return bytes([kind | WC[width] << 3 | (count - 1) << 5])

def outp(port, val, width=1, count=1):
    return op(1, width, count) + pio_addr(port) + val.to_bytes(width, "little")

def inp(port, width=1, count=1):
    return op(0, width, count) + pio_addr(port)

def wr(win, off, val, width=4, count=1):
    return op(3, width, count) + bytes([win]) + off.to_bytes(3, "little") + \
        val.to_bytes(width, "little")

def rd(win, off, width=4, count=1):
    return op(2, width, count) + bytes([win]) + off.to_bytes(3, "little")

def ram(off, data):
    return op(4) + struct.pack("<HB", off, len(data)) + data

def typed(text):
    return op(5) + bytes([len(text)]) + text

POWER, REBOOT = op(6), bytes([6 | 8])
serve = lambda worker, q: bytes([6 | 2 << 3, worker | q << 4])  # an I/O thread drains q
tick = lambda worker: bytes([6 | 3 << 3, worker])
efi = lambda gpa: bytes([7]) + struct.pack("<H", gpa)
report = lambda gpa: bytes([7 | 8]) + struct.pack("<H", gpa)
cfg = lambda slot, reg: (slot << 15) | reg

def seed(name, setup, ops, mem=b""):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(struct.pack("<HH", setup, len(mem)) + mem + ops)

# 16550: what Linux's 8250 driver does at boot, output, loopback, input
com = 0x3f8
s = outp(com + 3, 0x80) + outp(com, 0x01) + outp(com + 1, 0) + outp(com + 3, 0x03)
s += outp(com + 2, 0xc7) + outp(com + 4, 0x0b) + outp(com + 1, 0x05) + inp(com + 2)
s += b"".join(outp(com, c) for c in b"login: ") + inp(com + 5) + inp(com + 2)
s += outp(com + 4, 0x1a) + inp(com + 6) + outp(com, 0x55) + inp(com + 5) + inp(com)
s += outp(com + 4, 0x0b) + typed(b"root\n" * 4) + inp(com + 5) + inp(com, 1, 8)
s += outp(com + 2, 0x03) + inp(com + 5) + inp(com, 1, 8) + outp(com + 7, 0x5a) + inp(com + 7)
seed("uart", ACPI, s)
seed("uart-no-capture", ACPI | NOCAP, s)

# PCI: mechanism #1 walk, ECAM header reads, BAR 0 sizing of slot 1
s = b"".join(outp(0xcf8, 0x80000000 | d << 11, 4) + inp(0xcfc, 4) for d in range(0, 32, 3))
s += outp(0xcf8, 0x80000800 | 0x0c, 4) + inp(0xcfe, 2) + inp(0xcff, 1)
s += rd(ECAM, cfg(0, 0)) + rd(ECAM, cfg(1, 0), 8) + rd(ECAM, cfg(1, 0x34), 1)
s += wr(ECAM, cfg(1, 0x10), 0xffffffff) + rd(ECAM, cfg(1, 0x10))
s += wr(ECAM, cfg(1, 0x10), 0xc0000000) + wr(ECAM, cfg(1, 4), 0x0006, 2)
# virtio (slot 1 with rng alone): reset, ACK|DRIVER, features, FEATURES_OK, queues, DRIVER_OK
v = wr(BAR1, 0x14, 0, 1) + wr(BAR1, 0x14, 3, 1)
v += wr(BAR1, 0x00, 0) + rd(BAR1, 0x04) + wr(BAR1, 0x00, 1) + rd(BAR1, 0x04)
v += wr(BAR1, 0x08, 1) + wr(BAR1, 0x0c, 1) + wr(BAR1, 0x08, 0) + wr(BAR1, 0x0c, 0x30000000)
v += wr(BAR1, 0x14, 0x0b, 1) + rd(BAR1, 0x14, 1)
v += wr(BAR1, 0x16, 0, 2) + rd(BAR1, 0x18, 2) + wr(BAR1, 0x18, 16, 2) + wr(BAR1, 0x1a, 1, 2)
v += wr(BAR1, 0x20, 0x1000, 8) + wr(BAR1, 0x28, 0x1100) + wr(BAR1, 0x30, 0x1200)
v += wr(BAR1, 0x1c, 1, 2) + wr(BAR1, 0x10, 0, 2)
v += wr(BAR1, 0x16, 7, 2) + wr(BAR1, 0x18, 64, 2) + rd(BAR1, 0x1e, 2) + wr(BAR1, 0x1c, 1, 2)
v += wr(BAR1, 0x16, 0xffff, 2) + rd(BAR1, 0x20, 8) + wr(BAR1, 0x1a, 0, 2)
# MSI-X: enable through the capability (0x74), entries 0 and 1, unmask
v += wr(ECAM, cfg(1, 0x76), 0xc000, 2) + wr(BAR1, 0x4000, 0xfee00000) + wr(BAR1, 0x4008, 0x41)
v += wr(BAR1, 0x4010, 0xfee00000, 8) + wr(BAR1, 0x4018, 0x42) + wr(BAR1, 0x401c, 0)
v += wr(BAR1, 0x400c, 0) + wr(ECAM, cfg(1, 0x76), 0x8000, 2) + rd(BAR1, 0x5000, 8)
v += wr(BAR1, 0x14, 0x0f, 1) + wr(BAR1, 0x3000, 0, 2) + wr(BAR1, 0x3004, 0, 2) + rd(BAR1, 0x1000, 1)
# the PCI_CFG capability (0x80): read status through config space
v += wr(ECAM, cfg(1, 0x84), 0, 1) + wr(ECAM, cfg(1, 0x88), 0x14) + wr(ECAM, cfg(1, 0x8c), 1)
v += rd(ECAM, cfg(1, 0x90)) + wr(ECAM, cfg(1, 0x90), 0)
v += wr(ECAM, cfg(1, 0x76), 0x0000, 2) + wr(BAR1, 0x14, 0, 1) + rd(BAR1, 0x1000, 1)
seed("pci-virtio", ACPI | RNG, s + v)
seed("pci-virtio-q35", Q35 | ACPI | RNG, s + v + rd(Q35ECAM, cfg(1, 0x10)))
# virtio-blk in slot 1 (four queues), rng in slot 3: device config, MSI-X
b = s + wr(ECAM, cfg(3, 4), 0x0006, 2) + b"".join(rd(BAR1, 0x2000 + o, 4) for o in range(0, 0x40, 4))
b += rd(BAR1, 0x2000, 8) + rd(BAR1, 0x203c, 8) + rd(BAR1, 0x2fff, 1) + wr(BAR1, 0x2014, 1)
b += rd(BAR1, 0x12, 2) + wr(BAR1, 0x16, 3, 2) + rd(BAR1, 0x18, 2) + wr(BAR1, 0x16, 4, 2) + rd(BAR1, 0x18, 2)
b += wr(BAR1, 0x3000 + 4 * 3, 0, 2) + wr(BAR1, 0x3000 + 4 * 4, 0, 2) + rd(BAR3, 0x14, 1)
b += rd(ECAM, cfg(1, 0x80), 4) + rd(ECAM, cfg(3, 0x80), 4) + wr(ECAM, cfg(3, 0x76), 0x8000, 2)
b += wr(BAR3, 0x4000, 0xfee00000) + wr(BAR3, 0x400c, 0) + rd(BAR3, 0x5000)
seed("pci-virtio-blk", ACPI | RNG | DISKS | MQ, b + v)

# EFI port: descriptors at 0x100.., buffers at 0x800..
MAGIC = 0x56454C56
d = lambda o, length, cap, addr, magic=MAGIC: struct.pack("<IIIIIIQ", magic, o, 0, length, cap, 0, addr)
mem = bytearray(0x900)
descs = [d(1, 0, 64, 0x800), d(3, 200, 0, 0x800), d(2, 0, 0x400, 0x400), d(5, 0, 4, 0x7f0),
         d(4, 17, 0, 0x880), d(3, 0x100, 0, 0x1f80), d(2, 0, 0x1000, 0x2f00), d(4, 0x40, 0, 0x2ff0),
         d(9, 0, 0, 0), d(4, 4, 0, 0x880, 0x1234)]
for i, x in enumerate(descs):
    mem[0x100 + 32 * i:0x120 + 32 * i] = x
mem[0x800:0x8c8] = bytes(range(200))
mem[0x880:0x891] = b"BdsDxe: loading\r\n"
ops = inp(0xf18, 4) + b"".join(efi(0x100 + 32 * i) for i in range(len(descs))) + efi(0x104) + efi(0x2fe0)
ops += REBOOT + efi(0x140) + inp(0xf18, 4)
seed("efi", ACPI | RNG | EFI, ops, bytes(mem))
seed("efi-no-store", ACPI | NOCOM1, ops, bytes(mem))
seed("efi-disks", ACPI | RNG | EFI | DISKS, ops, bytes(mem))

# OVMF VM: q35, PM timer, CFI flash
s = rd(ECAM, cfg(0, 0)) + wr(ECAM, cfg(0, 0x60), 0xb0000001, 8) + wr(ECAM, cfg(0, 0x90), 0x33, 1)
s += wr(ECAM, cfg(31, 0x40), 0x601, 4) + wr(ECAM, cfg(31, 0x44), 0x80, 1) + wr(ECAM, cfg(31, 0x40), 0xb001)
s += rd(Q35ECAM, cfg(31, 0)) + rd(Q35ECAM, (1 << 20) | 0) + inp(0x608, 4, 3) + inp(0x60a, 2)
s += outp(0xcf9, 0x06) + wr(VARS, 0, 0x50, 1) + wr(VARS, 0, 0x70, 1) + rd(VARS, 0, 1)
s += wr(VARS, 0x55, 0x98, 1) + rd(VARS, 0x10, 4) + rd(VARS, 0x27, 1) + rd(VARS, 0x2c, 8)
s += wr(VARS, 0, 0xff, 1) + wr(VARS, 0x1000, 0x40, 1) + wr(VARS, 0x1000, 0x5a, 1) + rd(VARS, 0x1000, 1)
s += wr(VARS, 0, 0xff, 1) + rd(VARS, 0x1000, 4) + wr(VARS, 0x1000, 0x10, 1) + wr(VARS, 0x1004, 0x12345678)
s += wr(VARS, 0x2000, 0x20, 1) + wr(VARS, 0x2fff, 0xd0, 1) + rd(VARS, 0x2000, 1)
s += wr(VARS, 0x3000, 0x20, 1) + wr(VARS, 0x3000, 0x00, 1) + rd(VARS, 0, 1) + wr(VARS, 0, 0x90, 1)
s += rd(VARS, 0, 2) + wr(VARS, 0xfffe, 0x40, 1) + wr(VARS, 0xfffe, 0xbeef, 4) + wr(CODE, 0, 1, 1)
seed("q35-flash", Q35 | ACPI | RNG | EFI, s)

# PM1, power button, S5; RTC/CMOS; i8042; legacy ports; report port
s = inp(0x604, 2) + outp(0x602, 0x100, 2) + POWER + inp(0x600, 2) + outp(0x600, 0x100, 2)
s += outp(0x604, (1 << 10) | (1 << 13), 2) + outp(0x600, 0x01000100, 4)
s += b"".join(outp(0x70, r) + inp(0x71) for r in (0, 2, 4, 6, 7, 8, 9, 0x0a, 0x0b, 0x0d, 0x32, 0x8f))
s += outp(0x70, 0x40) + outp(0x71, 0xab) + inp(0x71) + outp(0x70, 0x7f) + outp(0x71, 1)
s += outp(0x64, 0xaa) + inp(0x64) + inp(0x60) + outp(0x64, 0x60) + outp(0x60, 0x47)
s += outp(0x64, 0x20) + inp(0x60) + outp(0x64, 0xd1) + outp(0x60, 0x03)
s += b"".join(outp(0xe9, c) for c in b"debug line\n") + b"".join(outp(0x402, c) for c in b"x" * 130)
s += inp(0x402) + inp(0x92) + outp(0x92, 0x02) + outp(0x80, 0x12) + inp(0x2f8 + 5) + outp(0x3e8, 1)
s += outp(0x00, 0, 1, 8) + inp(0xc0, 2)
mem = bytearray(0x200)
mem[0x100:0x110] = struct.pack("<IIQ", 0x544C4D56, 32, 0x180)
mem[0x180:0x1a0] = b"VMLET-PROBE-BEGIN v1\nvcpus=1\n\n\n\n"
s += inp(0xf10, 4) + report(0x100) + report(0x104) + outp(0x604, (5 << 10) | (1 << 13), 2)
s += outp(0xf4, 0x10, 4) + outp(0x64, 0xfe) + outp(0x92, 0x01) + inp(0x3f8 + 5)
seed("platform", ACPI, s, bytes(mem))

# virtio-balloon in slot 2 (after rng): features, five queues of 4
# entries in RAM, PFNs to inflate and deflate, statistics, a free page
# report of one whole page (0x2000) and one that is not; the I/O thread
# (the second one started, after rng's) serves them
mem = bytearray(0x2000)
ring = lambda q: (0x1000 + 0x100 * q, 0x1040 + 0x100 * q, 0x1080 + 0x100 * q)
def chain(q, segs):  # one chain of (gpa, len, flags) at the head of queue q
    desc, avail, _ = ring(q)
    for k, (gpa, length, flags) in enumerate(segs):
        nxt = 1 if k + 1 < len(segs) else 0
        mem[desc + 16 * k:desc + 16 * k + 16] = struct.pack("<QIHH", gpa, length, flags | nxt, k + 1 if nxt else 0)
    mem[avail:avail + 6] = struct.pack("<HHH", 0, 1, 0)
mem[0x1800:0x1810] = struct.pack("<IIII", 0, 1, 2, 0x100000)
mem[0x1900:0x1914] = struct.pack("<HQHQ", 4, 1 << 30, 99, 7)
chain(0, [(0x1800, 16, 0)])
chain(1, [(0x1804, 8, 0)])
chain(2, [(0x1900, 20, 0)])
chain(3, [(0x2000, 0x1000, 2)])
chain(4, [(0x1a00, 0x80, 2)])
b = wr(ECAM, cfg(2, 4), 0x0006, 2) + wr(BAR2, 0x14, 0, 1) + wr(BAR2, 0x14, 3, 1)
b += rd(BAR2, 0x2000, 4, 4) + wr(BAR2, 0x2004, 5) + wr(BAR2, 0x200c, 0xaa, 1) + rd(BAR2, 0x2000, 8)
b += wr(BAR2, 0x08, 0) + wr(BAR2, 0x0c, 1 << 1 | 1 << 4 | 1 << 5) + wr(BAR2, 0x08, 1) + wr(BAR2, 0x0c, 1)
b += wr(BAR2, 0x14, 0x0b, 1)
for q in range(5):
    desc, avail, used = ring(q)
    b += wr(BAR2, 0x16, q, 2) + wr(BAR2, 0x18, 4, 2) + wr(BAR2, 0x20, desc, 8)
    b += wr(BAR2, 0x28, avail, 8) + wr(BAR2, 0x30, used, 8) + wr(BAR2, 0x1c, 1, 2)
b += wr(BAR2, 0x14, 0x0f, 1) + b"".join(serve(1, q) for q in range(5)) + tick(1) + rd(BAR2, 0x14, 1)
b += wr(BAR2, 0x3008, 0, 2) + wr(BAR2, 0x14, 0, 1) + serve(1, 3)
seed("balloon", ACPI | RNG | BALLOON | REPORTING, b, bytes(mem))
seed("balloon-no-reporting", ACPI | RNG | BALLOON, b, bytes(mem))

# virtio-console in slot 2 (after rng), two ports, eight queues of 4: the
# driver's control messages (DEVICE_READY, PORT_READY, PORT_OPEN, one for
# a port that is not there, a short one), control buffers for the
# device's answers (one past RAM), a transmit and a receive buffer of
# port 1; its I/O thread (the second started) serves every queue
mem = bytearray(0x2000)
def chains(q, bufs):  # one single-segment chain per (gpa, len, flags)
    desc, avail, _ = ring(q)
    for k, (gpa, length, flags) in enumerate(bufs):
        mem[desc + 16 * k:desc + 16 * k + 16] = struct.pack("<QIHH", gpa, length, flags, 0)
        mem[avail + 4 + 2 * k:avail + 6 + 2 * k] = struct.pack("<H", k)
    mem[avail:avail + 4] = struct.pack("<HH", 0, len(bufs))
ctl = lambda i, ev, val: struct.pack("<IHH", i, ev, val)
mem[0x1800:0x1820] = ctl(0, 0, 1) + ctl(1, 3, 1) + ctl(1, 6, 1) + ctl(0xffffffff, 3, 1)
chains(3, [(0x1800, 8, 0), (0x1808, 8, 0), (0x1810, 8, 0), (0x1818, 4, 0)])
chains(2, [(0x1900, 0x40, 2), (0x1940, 0x40, 2), (0x2ff0, 0x40, 2), (0x1980, 0x40, 2)])
mem[0x1a00:0x1a05] = b"hello"
chains(5, [(0x1a00, 5, 0)])
chains(4, [(0x1b00, 0x40, 2)])
b = wr(ECAM, cfg(2, 4), 0x0006, 2) + wr(BAR2, 0x14, 0, 1) + wr(BAR2, 0x14, 3, 1)
b += rd(BAR2, 0x2000, 4, 3) + wr(BAR2, 0x2004, 5)
b += wr(BAR2, 0x08, 0) + wr(BAR2, 0x0c, 1 << 1) + wr(BAR2, 0x08, 1) + wr(BAR2, 0x0c, 1)
b += wr(BAR2, 0x14, 0x0b, 1)
for q in range(8):
    desc, avail, used = ring(q)
    b += wr(BAR2, 0x16, q, 2) + wr(BAR2, 0x18, 4, 2) + wr(BAR2, 0x20, desc, 8)
    b += wr(BAR2, 0x28, avail, 8) + wr(BAR2, 0x30, used, 8) + wr(BAR2, 0x1c, 1, 2)
b += wr(BAR2, 0x14, 0x0f, 1) + serve(1, 3) + serve(1, 2) + b"".join(serve(1, q) for q in range(8))
b += rd(BAR2, 0x14, 1) + wr(BAR2, 0x14, 0, 1) + serve(1, 3)
seed("console", ACPI | RNG | CONSOLE, b, bytes(mem))

# AHCI (slot 1, two read-only SATA disks): command list at 0, FIS area at
# 0x400, command tables at 0x800 + slot * 0x100, data at 0x1000
mem = bytearray(0x1400)
def ahci_cmd(slot, fis, write=False, prd=(0x1000, 512)):
    struct.pack_into("<IIII", mem, slot * 32, 5 | write << 6 | (1 << 16 if prd else 0), 0,
                     0x800 + slot * 0x100, 0)
    mem[0x800 + slot * 0x100:0x800 + slot * 0x100 + len(fis)] = fis
    if prd:
        struct.pack_into("<IIII", mem, 0x880 + slot * 0x100, prd[0], 0, 0, prd[1] - 1)
h2d = lambda cmd, lba=0, count=1, feat=0: bytes([0x27, 0x80, cmd, feat, lba & 0xff, lba >> 8 & 0xff,
                                                 lba >> 16 & 0xff, 0x40, 0, 0, 0, 0, count, 0, 0, 0])
ahci_cmd(0, h2d(0xec, count=0))
ahci_cmd(1, h2d(0x25, 2))
ahci_cmd(2, h2d(0x35, 2), write=True)
ahci_cmd(3, h2d(0x60, 0, 3 << 3, 1))
ahci_cmd(4, h2d(0x06, 0, 1, 1), write=True)
ahci_cmd(5, h2d(0x25, 0), prd=(0x2f00, 512))
ahci_cmd(6, bytes([0x39]) + h2d(0x25)[1:])
P = 0x100
b = wr(ECAM, cfg(1, 4), 0x0006, 2) + rd(ABAR1, 0) + rd(ABAR1, 0x0c) + rd(ABAR1, 0x10)
b += wr(ABAR1, 4, 1) + wr(ABAR1, 4, 0x80000002) + wr(ECAM, cfg(1, 0x42), 0x8000, 2)
b += wr(ABAR1, 0x1800, 0xfee00000) + wr(ABAR1, 0x180c, 0)
b += wr(ABAR1, P, 0) + wr(ABAR1, P + 8, 0x400) + wr(ABAR1, P + 0x18, 0x10)
b += wr(ABAR1, P + 0x2c, 1) + wr(ABAR1, P + 0x2c, 0) + rd(ABAR1, P + 0x28) + rd(ABAR1, P + 0x24)
b += wr(ABAR1, P + 0x10, 0xffffffff) + wr(ABAR1, P + 0x14, 0xffffffff) + wr(ABAR1, P + 0x18, 0x11)
for slot in range(7):
    if slot == 3:
        b += wr(ABAR1, P + 0x34, 1 << 3)
    b += wr(ABAR1, P + 0x38, 1 << slot) + serve(0, 0) + rd(ABAR1, P + 0x10) + rd(ABAR1, P + 0x20)
    b += rd(ABAR1, P + 0x38) + wr(ABAR1, P + 0x10, 0xffffffff) + rd(ABAR1, 8) + wr(ABAR1, 8, 1)
    b += wr(ABAR1, P + 0x18, 0x10) + rd(ABAR1, P + 0x18) + wr(ABAR1, P + 0x18, 0x11)
b += wr(ABAR1, 0x180 + 0x38, 1) + serve(1, 0) + wr(ABAR1, 4, 1)
seed("ahci", ACPI | DISKS | SATA, b, bytes(mem))
seed("ahci-q35", Q35 | ACPI | DISKS | SATA, b, bytes(mem))

# ATAPI (port 0 a CD-ROM drive on the 64 KiB image, 32 blocks): IDENTIFY
# DEVICE (aborted) and PACKET DEVICE, then PACKETs (header bit A, the CDB at
# 0x40 of the command table): TEST UNIT READY (the unit attention),
# REQUEST SENSE, INQUIRY, READ CAPACITY, READ(10), READ TOC (MSF),
# GET CONFIGURATION, GET EVENT STATUS NOTIFICATION, MODE SENSE(10),
# READ(12) past the end, an eject, a READ(10) into a PRD past RAM, WRITE(10)
# (command tables at 0x500 + slot * 0x100, data at 0x1400)
mem = bytearray(0x1c00)
def atapi_cmd(slot, cdb, prd=(0x1400, 512), ata=None):
    fis = h2d(ata if ata is not None else 0xa0, 0, 0, 0 if ata is not None else 1)
    struct.pack_into("<IIII", mem, slot * 32, 5 | (0 if ata is not None else 1 << 5) |
                     (1 << 16 if prd else 0), 0, 0x500 + slot * 0x100, 0)
    t = 0x500 + slot * 0x100
    mem[t:t + len(fis)] = fis
    mem[t + 0x40:t + 0x40 + len(cdb)] = cdb
    if prd:
        struct.pack_into("<IIII", mem, t + 0x80, prd[0], 0, 0, prd[1] - 1)
cdb = lambda *b: bytes(b) + bytes(12 - len(b))
atapi_cmd(0, b"", ata=0xec)
atapi_cmd(1, b"", ata=0xa1)
atapi_cmd(2, cdb(0x00), prd=None)
atapi_cmd(3, cdb(0x03, 0, 0, 0, 18))
atapi_cmd(4, cdb(0x12, 0, 0, 0, 96))
atapi_cmd(5, cdb(0x25), prd=(0x1400, 8))
atapi_cmd(6, cdb(0x28, 0, 0, 0, 0, 1, 0, 0, 1), prd=(0x1400, 2048))
atapi_cmd(7, cdb(0x43, 2, 0, 0, 0, 0, 0, 0, 100))
atapi_cmd(8, cdb(0x46, 0, 0, 0, 0, 0, 0, 0, 255))
atapi_cmd(9, cdb(0x4a, 1, 0, 0, 0x10, 0, 0, 0, 8))
atapi_cmd(10, cdb(0x5a, 0, 0x3f, 0, 0, 0, 0, 0, 64))
atapi_cmd(11, cdb(0xa8, 0, 0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0x20), prd=(0x1400, 2048))
atapi_cmd(12, cdb(0x1b, 0, 0, 0, 2), prd=None)
atapi_cmd(13, cdb(0x28, 0, 0, 0, 0, 2, 0, 0, 1), prd=(0x1f00, 2048))
atapi_cmd(14, cdb(0x2a, 0, 0, 0, 0, 0, 0, 0, 1), prd=(0x1400, 2048))
b = wr(ECAM, cfg(1, 4), 0x0006, 2) + wr(ABAR1, 4, 0x80000002)
b += wr(ABAR1, P, 0) + wr(ABAR1, P + 8, 0x400) + wr(ABAR1, P + 0x18, 0x10 | 1 << 24)
b += wr(ABAR1, P + 0x2c, 1) + wr(ABAR1, P + 0x2c, 0) + rd(ABAR1, P + 0x24)
b += wr(ABAR1, P + 0x10, 0xffffffff) + wr(ABAR1, P + 0x18, 0x11 | 1 << 24)
for slot in range(15):
    b += wr(ABAR1, P + 0x38, 1 << slot) + serve(0, 0) + rd(ABAR1, P + 0x10) + rd(ABAR1, P + 0x20)
    b += wr(ABAR1, P + 0x10, 0xffffffff) + wr(ABAR1, P + 0x18, 0x10 | 1 << 24)
    b += rd(ABAR1, P + 0x18) + wr(ABAR1, P + 0x18, 0x11 | 1 << 24)
seed("atapi", ACPI | DISKS | SATA | CDROM, b, bytes(mem))
seed("atapi-empty", ACPI | DISKS | SATA | CDROM | EMPTY, b, bytes(mem))
PY
