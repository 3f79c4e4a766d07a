#!/usr/bin/env bash
# Seeds for virtio_blk_fuzz (input format in virtio_blk_fuzz.c): a guest
# that writes, reads back, flushes, asks for the serial, discards and
# writes zeroes, through direct, chained and indirect descriptors, on one
# or two queues; and requests that must be refused (past the end, not a
# multiple of 512, two ranges, a write to a read-only disk). $1: the seed
# directory.
set -eu
PYTHONPATH=$(dirname "$0") exec python3 - "$1" <<'PY'
import struct, sys
from virtio_guest import Guest, W

OUT = sys.argv[1]
IN, OUT_, FLUSH, GET_ID, DISCARD, ZEROES = 0, 1, 4, 8, 11, 13

class BlkGuest(Guest):
    def req(self, q, typ, sector, out=b"", inlen=0, indirect=False):
        segs = [(self.put(struct.pack("<IIQ", typ, 0, sector)), 16, 0)]
        if out:
            segs.append((self.put(out), len(out), 0))
        if inlen:
            segs.append((self.buf(inlen), inlen, W))
        segs.append((self.buf(1), 1, W))
        (self.indirect if indirect else self.chain)(q, segs)

rng = lambda sector, n, flags=0: struct.pack("<QII", sector, n, flags)
pat = bytes((i * 7) & 0xff for i in range(4096))

g = BlkGuest(0x00, qlog=4)
g.req(0, OUT_, 8, pat)
g.req(0, IN, 8, inlen=4096)
g.req(0, FLUSH, 0)
g.req(0, GET_ID, 0, inlen=20)
g.seed(OUT, "rw", b"k\x00")

g = BlkGuest(0x06 | 0x08, qlog=3)  # EVENT_IDX, INDIRECT, two queues
g.req(0, OUT_, 0, pat[:1024], indirect=True)
g.req(1, IN, 0, inlen=1024, indirect=True)
g.req(1, DISCARD, 0, rng(0, 8))
g.req(0, ZEROES, 16, rng(16, 16, 1))
g.seed(OUT, "two-queues", b"k\x00k\x01")

g = BlkGuest(0x00, qlog=4)
g.req(0, IN, 511, inlen=1024)        # runs past the end (256 KiB = 512 sectors)
g.req(0, IN, 0, inlen=100)           # not whole sectors
g.req(0, DISCARD, 0, rng(0, 1) + rng(8, 1))  # two ranges
g.req(0, ZEROES, 0, rng(0, 1, 2))    # unknown flag
g.req(0, 99, 0, inlen=8)             # unknown type
g.seed(OUT, "refused", b"k\x00")

g = BlkGuest(0x01 | 0x10, qlog=4)  # read-only, 4 KiB blocks
g.req(0, OUT_, 0, pat[:512])
g.req(0, IN, 0, inlen=4096)
g.seed(OUT, "read-only", b"k\x00")

g = BlkGuest(0x00, qlog=4)
g.req(0, OUT_, 4, pat[:512])
g.seed(OUT, "post-then-kick", b"w" + struct.pack("<H", 2) + b"\x02\x02\x00k\x00")
PY
