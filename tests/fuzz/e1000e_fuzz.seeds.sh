#!/usr/bin/env bash
# Seeds for e1000e_fuzz (input format in e1000e_fuzz.c): a guest that sends
# a frame on a legacy descriptor, a checksummed UDP frame and a TSO TCP
# packet on extended descriptors, and a network that sends frames into
# legacy and extended receive descriptors. $1: the seed directory.
set -eu
exec python3 - "$1" <<'PY'
import os, struct, sys

OUT = sys.argv[1]
RAM = 0x10000
MAC = bytes([2, 0, 0, 0, 0, 0])

def ipv4(proto, payload_len, tot=True):
    h = bytearray(20)
    h[0] = 0x45
    struct.pack_into(">H", h, 2, 20 + payload_len if tot else 0)
    h[8], h[9] = 64, proto
    h[12:20] = bytes([10, 0, 2, 2, 10, 0, 2, 1])
    return h

def eth(payload, dst=b"\x02\xaa\xbb\xcc\xdd\xee"):
    return dst + MAC + b"\x08\x00" + payload

def udp_frame(n):
    u = struct.pack(">HHHH", 1234, 5678, 8 + n, 0) + bytes(i & 0xff for i in range(n))
    return eth(bytes(ipv4(17, len(u))) + u)

def tcp_packet(n):
    t = bytearray(20)
    struct.pack_into(">HHI", t, 0, 40000, 80, 1000)
    t[12], t[13] = 5 << 4, 0x19
    return eth(bytes(ipv4(6, 0, tot=False)) + bytes(t) + bytes((i * 13) & 0xff for i in range(n)))

def legacy_tx(addr, n, cmd=0x0b, cso=0, css=0):
    return struct.pack("<QHBBBBH", addr, n, cso, cmd, 0, css, 0)

def ctx(ipcss, ipcso, ipcse, tucss, tucso, tucse, paylen, tucmd, hdr, mss):
    return struct.pack("<BBHBBHIBBH", ipcss, ipcso, ipcse, tucss, tucso, tucse,
                       paylen | (0 << 20) | ((tucmd | 0x20) << 24), 0, hdr, mss)

def data(addr, n, dcmd, popts):
    return struct.pack("<QIBBH", addr, n | (1 << 20) | ((dcmd | 0x20) << 24), 0, popts, 0)

def seed(name, setup, ram, events):
    buf = bytearray(RAM if len(ram) > RAM else len(ram))
    buf[:] = ram[:len(buf)]
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes([setup]) + struct.pack("<H", len(buf)) + bytes(buf) + events)

def w(reg, val):
    return b"w" + struct.pack("<HI", reg // 4, val)

def ram_with(parts):
    r = bytearray(0x8000)
    for off, b in parts:
        r[off:off + len(b)] = b
    return r

# RX descriptors at 0x400: buffers at 0x4000 + 2048 * i
rxd = b"".join(struct.pack("<QQ", 0x4000 + 2048 * i, 0) for i in range(4))

f = udp_frame(100)
seed("legacy-tx", 0, ram_with([(0, legacy_tx(0x1000, len(f))), (0x400, rxd), (0x1000, f)]),
     w(0x3818, 1) + b"t")
seed("legacy-tx-csum", 2, ram_with([(0, legacy_tx(0x1000, len(f), 0x0f, 40, 34)), (0x1000, f)]),
     w(0x3818, 1) + b"t")
seed("ext-tx-csum", 6, ram_with([(0, ctx(14, 24, 33, 34, 40, 0, 0, 0x00, 0, 0)),
                                 (16, data(0x1000, 30, 0x00, 3)),
                                 (32, data(0x1000 + 30, len(f) - 30, 0x09, 3)),
                                 (0x1000, f)]),
     w(0x3818, 3) + b"t")
p = tcp_packet(3000)
seed("tso", 7, ram_with([(0, ctx(14, 24, 33, 34, 50, 0, 3000, 0x07, 54, 1000)),
                         (16, data(0x1000, 54, 0x04, 3)),
                         (32, data(0x1000 + 54, 3000, 0x0d, 3)),
                         (0x1000, p)]),
     w(0x3818, 3) + b"t")
rx = bytes(12) + eth(udp_frame(64)[14:], dst=MAC)
seed("rx-ext", 7, ram_with([(0x400, rxd)]), b"f" + struct.pack("<H", len(rx)) + rx + b"t")
psd = b"".join(struct.pack("<QQQQ", 0x4000 + 0x3000 * i, 0x5000 + 0x3000 * i, 0x6000 + 0x3000 * i, 0) for i in range(2))
seed("rx-packet-split", 15, ram_with([(0x400, psd)]), b"f" + struct.pack("<H", len(rx)) + rx + b"t")
seed("rx-legacy", 0, ram_with([(0x400, rxd)]),
     b"f" + struct.pack("<H", len(rx)) + rx + b"f" + struct.pack("<H", 20) + rx[:20] + b"t" +
     w(0x0c8, 0x4) + b"r" + struct.pack("<H", 0xc0 // 4))
PY
