#!/usr/bin/env bash
# Seeds for virtio_net_fuzz (input format in virtio_net_fuzz.c): a guest
# that posts receive buffers, sends frames (plain, a DHCP DISCOVER, an ARP
# request for the gateway, through an indirect table), sends control
# commands (MAC, MQ), and a network that sends frames that fit, frames that
# do not, and fails. $1: the seed directory.
set -eu
PYTHONPATH=$(dirname "$0") exec python3 - "$1" <<'PY'
import os, struct, sys
from net_frames import arp_gw, dhcp, plain

OUT = sys.argv[1]
W, N, I = 2, 1, 4
HDR = bytes(12)

def avail(q): return 0x90 * q
def used(q): return 0x300 + 0x210 * q
def desc(q): return 0xd80 + 0x400 * q

class Guest:
    def __init__(self, setup, qlog=2):
        self.setup, self.qsize = setup, 2 << qlog
        self.qlog = qlog
        self.ram = bytearray(0x10000)
        self.nd = {}
        self.na = {}
        self.data = 0x2200
        self.bufs = 0x8000  # receive buffers: zeroes, past the image

    def buf(self, size):
        g = self.bufs
        self.bufs += (size + 63) & ~63
        return g

    def put(self, b):
        g = self.data
        self.ram[g:g + len(b)] = b
        self.data += (len(b) + 63) & ~63
        return g

    def chain(self, q, segs):
        """segs: [(gpa, len, flags)]; links them in q's table, posts the head."""
        i0 = self.nd.get(q, 0)
        for k, (a, l, f) in enumerate(segs):
            nx = i0 + k + 1 if k + 1 < len(segs) else 0
            struct.pack_into("<QIHH", self.ram, desc(q) + 16 * (i0 + k), a, l,
                             f | (N if k + 1 < len(segs) else 0), nx)
        self.nd[q] = i0 + len(segs)
        na = self.na.get(q, 0)
        struct.pack_into("<H", self.ram, avail(q) + 4 + 2 * na, i0)
        self.na[q] = na + 1
        struct.pack_into("<H", self.ram, avail(q) + 2, na + 1)

    def rx(self, q, n, size):
        for _ in range(n):
            self.chain(q, [(self.buf(size), size, W)])

    def tx(self, q, frame):
        b = HDR + frame
        self.chain(q, [(self.put(b[:12]), 12, 0), (self.put(b[12:]), len(b) - 12, 0)])

    def ctrl(self, q, cmd):
        self.chain(q, [(self.put(cmd), len(cmd), 0), (self.buf(1), 1, W)])

    def seed(self, name, events=b""):
        end = max(i for i, v in enumerate(self.ram) if v) + 1
        head = bytes([self.setup, self.qlog]) + struct.pack("<H", end)
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(head + bytes(self.ram[:end]) + events)

def frame_ev(pair, f):
    b = HDR + f
    return b"f" + bytes([pair]) + struct.pack("<H", len(b)) + b

g = Guest(0x11)  # MRG_RXBUF, a vnet-header backend
g.rx(0, 4, 1536)
g.tx(1, plain(60))
g.seed("basic", frame_ev(0, plain(100)) + frame_ev(0, plain(1400, 7)) + b"k\x00k\x01t")

g = Guest(0x81)  # DHCP and the gateway's ARP answered by vmlet
g.rx(0, 4, 1536)
g.tx(1, dhcp(1))
g.tx(1, arp_gw())
g.tx(1, dhcp(3))
g.seed("dhcp-arp", b"k\x01tk\x00t")

g = Guest(0x40 | 0x01, qlog=2)  # two queue pairs, MQ
for q in (0, 2):
    g.rx(q, 2, 2048)
g.tx(3, plain(200))
g.ctrl(4, bytes([4, 0, 2, 0]))  # MQ VQ_PAIRS_SET 2
g.ctrl(4, bytes([1, 1]) + bytes.fromhex("020000000077"))  # MAC ADDR_SET
g.ctrl(4, bytes([0, 0, 1]))  # RX promisc
g.seed("mq-ctrl", b"k\x04tk\x03" + frame_ev(1, plain(300)) + b"k\x02t")

g = Guest(0x00)  # no MRG: one buffer per frame; a frame too big for it
g.rx(0, 3, 256)
g.seed("small-buffers", frame_ev(0, plain(1000)) + frame_ev(0, plain(100)) + b"k\x00t")

g = Guest(0x1f | 0x20, qlog=3)  # TSO, EVENT_IDX, INDIRECT, MTU 9000
g.rx(0, 6, 4096)
tab = g.data
f = HDR + plain(2000)
a = g.put(f[:12]); b = g.put(f[12:1000]); c = g.put(f[1000:])
t = g.put(struct.pack("<QIHHQIHHQIHH", a, 12, N, 1, b, 988, N, 2, c, len(f) - 1000, 0, 0))
g.chain(1, [(t, 48, I)])
g.seed("indirect-tso", frame_ev(0, plain(5000, 3)) + b"k\x01k\x00t")

g = Guest(0x01)  # the backend fails: link down
g.rx(0, 2, 1536)
g.seed("backend-fails", b"e\x00\x00k\x00t" + frame_ev(0, plain(64)) + b"k\x00t")
PY
