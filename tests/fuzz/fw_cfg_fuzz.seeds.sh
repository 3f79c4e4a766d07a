#!/usr/bin/env bash
# Seeds for fw_cfg_fuzz (input format in fw_cfg_fuzz.c): what SeaBIOS does
# (signature and ID through the data port, the file directory and a file
# by DMA: SELECT|READ, SKIP then READ), a WRITE (refused), a read that
# runs past RAM and one that straddles the two RAM regions. $1: the seed
# directory.
set -eu
exec python3 - "$1" <<'PY'
import os, struct, sys

OUT = sys.argv[1]
ERR, READ, SKIP, SELECT, WRITE = 1, 2, 4, 8, 0x10

def desc(control, length, addr):
    return struct.pack(">IIQ", control, length, addr)

def seed(name, ram, ops):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(struct.pack("<H", len(ram)) + ram + ops)

sel = lambda key: b"\x00" + struct.pack("<H", key)
rd = lambda count, width: bytes([1 | ({1: 0, 2: 1, 4: 2}[width] << 3) | (count - 1) << 5])
dma = lambda gpa: b"\x02" + struct.pack("<H", gpa)

seed("ports", b"", sel(0) + rd(4, 1) + sel(1) + rd(1, 4) + sel(0x19) + rd(8, 4) + b"\x04\x04" + b"\x04\x08")
ram = bytearray(0x400)
ram[0x00:0x10] = desc(SELECT | READ | 0x19 << 16, 0x200, 0x100)   # the directory
ram[0x10:0x20] = desc(SELECT | SKIP | 0x20 << 16, 8, 0)           # skip into a file
ram[0x20:0x30] = desc(READ, 32, 0x300)                           # then read
ram[0x30:0x40] = desc(SELECT | WRITE | 0x20 << 16, 4, 0x300)      # refused
ram[0x40:0x50] = desc(SELECT | READ | 0x23 << 16, 0x3000, 0x100)  # past RAM
ram[0x50:0x60] = desc(SELECT | READ | 0x23 << 16, 0x200, 0x1f00)  # straddles
seed("dma", bytes(ram), dma(0) + dma(0x10) + dma(0x20) + dma(0x30) + dma(0x40) + dma(0x50) + dma(0x3ff8))
seed("dma-piecewise", bytes(ram), b"\x03\x04\0\x13\x08\0\0\0\x00" + rd(2, 1))
PY
