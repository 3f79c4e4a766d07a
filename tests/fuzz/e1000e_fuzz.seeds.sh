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

# A snapshot (tests 's'): the device's own state round-trips, then an
# e1000e state as e1000e_snap.c writes it (registers, PHY, state items)
# with the rings of setup() and a TX packet half gathered is loaded.
def item(tag, b):
    return struct.pack("<II", tag, len(b)) + b + bytes(-len(b) % 4)

phy = [[0] * 32 for _ in range(4)]
for r, v in {0: 0x1140, 1: 0x7949 | 0x24, 2: 0x0141, 3: 0x0cb1, 4: 0x0de1, 5: 0x7e0, 6: 4,
             7: 0x2001, 9: 0x0f00, 10: 0x3c00, 15: 0x3000, 16: 0x3360, 17: 0xa808 | 0x400}.items():
    phy[0][r] = v
phy[2][16], phy[2][21], phy[3][18] = 0x0088, 0x1046, 0x4005
regs = {0x0: 0x00140249, 0x8: 0x80283, 0x10: 0x300, 0x14: 2, 0xc4: 500, 0xd0: 0x01ffffff,
        0x100: 0x04008002, 0x400: 2, 0x102c: 2, 0x2800: 0x400, 0x2808: 1024, 0x2818: 63,
        0x3808: 1024, 0x3810: 2, 0x3818: 2, 0x5400: 2, 0x5404: 0x80000000}
state = [1, 0x80, 0, 1, 14, 24, 33, 34, 40, 0, 0, 42, 1, 1400]
blob = (item(1, b"".join(struct.pack("<II", k, v) for k, v in sorted(regs.items()))) +
        item(2, b"".join(struct.pack("<32H", *pg) for pg in phy)) +
        item(3, struct.pack("<14I", *state)))
seed("snapshot", 6, ram_with([(0, ctx(14, 24, 33, 34, 40, 0, 0, 0x00, 0, 0)),
                              (16, data(0x1000, 30, 0x00, 3)),
                              (32, data(0x1000 + 30, len(f) - 30, 0x09, 3)),
                              (0x400, rxd), (0x1000, f)]),
     w(0x3818, 2) + b"t" + b"s" + struct.pack("<H", len(blob)) + blob + w(0x3818, 3) + b"t" +
     b"s" + struct.pack("<H", 8) + blob[:8] + b"t")
PY
