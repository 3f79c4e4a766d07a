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
from virtio_guest import Guest, W

OUT = sys.argv[1]
HDR = bytes(12)

class NetGuest(Guest):
    def rx(self, q, n, size):
        for _ in range(n):
            self.chain(q, [(self.buf(size), size, W)])

    def tx(self, q, frame):
        b = HDR + frame
        self.chain(q, [(self.put(b[:12]), 12, 0), (self.put(b[12:]), len(b) - 12, 0)])

    def ctrl(self, q, cmd):
        self.chain(q, [(self.put(cmd), len(cmd), 0), (self.buf(1), 1, W)])

def frame_ev(pair, f):
    b = HDR + f
    return b"f" + bytes([pair]) + struct.pack("<H", len(b)) + b

g = NetGuest(0x11)  # MRG_RXBUF, a vnet-header backend
g.rx(0, 4, 1536)
g.tx(1, plain(60))
g.seed(OUT, "basic", frame_ev(0, plain(100)) + frame_ev(0, plain(1400, 7)) + b"k\x00k\x01t")

g = NetGuest(0x81)  # DHCP and the gateway's ARP answered by vmlet
g.rx(0, 4, 1536)
g.tx(1, dhcp(1))
g.tx(1, arp_gw())
g.tx(1, dhcp(3))
g.seed(OUT, "dhcp-arp", b"k\x01tk\x00t")

g = NetGuest(0x40 | 0x01, qlog=2)  # two queue pairs, MQ
for q in (0, 2):
    g.rx(q, 2, 2048)
g.tx(3, plain(200))
g.ctrl(4, bytes([4, 0, 2, 0]))  # MQ VQ_PAIRS_SET 2
g.ctrl(4, bytes([1, 1]) + bytes.fromhex("020000000077"))  # MAC ADDR_SET
g.ctrl(4, bytes([0, 0, 1]))  # RX promisc
g.seed(OUT, "mq-ctrl", b"k\x04tk\x03" + frame_ev(1, plain(300)) + b"k\x02t")

g = NetGuest(0x00)  # no MRG: one buffer per frame; a frame too big for it
g.rx(0, 3, 256)
g.seed(OUT, "small-buffers", frame_ev(0, plain(1000)) + frame_ev(0, plain(100)) + b"k\x00t")

g = NetGuest(0x1f | 0x20, qlog=3)  # TSO, EVENT_IDX, INDIRECT, MTU 9000
g.rx(0, 6, 4096)
f = HDR + plain(2000)
a = g.put(f[:12]); b = g.put(f[12:1000]); c = g.put(f[1000:])
g.indirect(1, [(a, 12, 0), (b, 988, 0), (c, len(f) - 1000, 0)])
g.seed(OUT, "indirect-tso", frame_ev(0, plain(5000, 3)) + b"k\x01k\x00t")

g = NetGuest(0x01)  # the backend fails: link down
g.rx(0, 2, 1536)
g.seed(OUT, "backend-fails", b"e\x00\x00k\x00t" + frame_ev(0, plain(64)) + b"k\x00t")
PY
