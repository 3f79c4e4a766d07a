#!/usr/bin/env bash
# Seeds for vsock_fuzz (input format in vsock_fuzz.c): a guest (CID 42)
# with receive buffers that opens a stream (held by the fuzzer's host side),
# writes to it, asks for credit, shuts it down; a host client's CONNECT line
# answered by the guest's RESPONSE and bytes both ways; requests the device
# refuses; and a host that stalls and then leaves. $1: the seed directory.
set -eu
PYTHONPATH=$(dirname "$0") exec python3 - "$1" <<'PY'
import struct, sys
from virtio_guest import Guest, W

OUT = sys.argv[1]
REQ, RESP, RST, SHUT, RW, CUPD, CREQ = 1, 2, 3, 4, 5, 6, 7

def hdr(src, dst, op, n=0, flags=0, buf=65536, fwd=0, scid=42, dcid=2, typ=1):
    return struct.pack("<QQIIIHHIII", scid, dcid, src, dst, n, typ, op, flags, buf, fwd)

class VsGuest(Guest):
    def rx(self, n, size=300):
        for _ in range(n):
            self.chain(0, [(self.buf(size), size, W)])
    def pkt(self, src, dst, op, data=b"", **kw):
        self.chain(1, [(self.put(hdr(src, dst, op, len(data), **kw) + data), 44 + len(data), 0)])

k = lambda q: b"k" + bytes([q])
host = lambda i, b: b"h" + bytes([i, len(b)]) + b

# a stream the guest opened: host ports 1000+5, guest 2000+7
g = VsGuest(0x00, qlog=4)
g.rx(12)
g.pkt(2007, 1005, RW, b"hello host")
g.pkt(2007, 1005, CREQ)
g.pkt(2007, 1005, CUPD, buf=1 << 16, fwd=0)
g.pkt(2007, 1005, SHUT, flags=2)
g.seed(OUT, "stream", b"c\x05\x07\x40" + k(0) + k(1) + host(0, b"hello guest") + k(0) + b"d\x00" + b"x\x00" + k(0))

# a host client: CONNECT 80, the guest accepts (host port 2^30) and talks
g = VsGuest(0x01, qlog=4)
g.rx(10)
g.pkt(80, 1 << 30, RESP)
g.pkt(80, 1 << 30, RW, b"from guest")
g.seed(OUT, "connect", b"l" + host(0, b"CONNECT 80\n") + k(0) + k(1) + host(0, b"from host") + k(0) + b"d\x00" + k(0))

# refused and hostile: a request (no host socket), wrong CIDs, a length past
# the buffer, an unknown type and op, a packet for no connection
g = VsGuest(0x02, qlog=4)
g.rx(10)
g.pkt(3000, 9, REQ)
g.pkt(3000, 9, REQ, scid=7)
g.pkt(3000, 9, REQ, dcid=1)
g.chain(1, [(g.put(hdr(3000, 9, RW, 500)), 44, 0)])
g.pkt(3000, 9, REQ, typ=2)
g.pkt(3001, 9, 42)
g.pkt(3002, 9, RW, b"x")
g.seed(OUT, "hostile", k(1) + k(0))

# beyond the credit while the host does not read
g = VsGuest(0x00, qlog=5)
g.rx(4)
for _ in range(12):
    g.pkt(2001, 1001, RW, bytes(range(256)) * 6)
g.seed(OUT, "stall", b"c\x01\x01\x01" + k(1) + k(0) + b"d\x00" + k(0))
PY
