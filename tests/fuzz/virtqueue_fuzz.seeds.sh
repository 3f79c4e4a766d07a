#!/usr/bin/env bash
# Seeds for virtqueue_fuzz (layout in virtqueue_fuzz.c): well-formed rings
# with direct, chained and indirect descriptors, a buffer in the second RAM
# region, and a few classic mistakes (a loop, a buffer straddling the two
# regions, an avail index too far ahead). $1: the seed directory.
set -eu
exec python3 - "$1" <<'PY'
import struct, sys, os
AVAIL, USED, DESC = 0x0, 0x210, 0xa20
W, N, I = 2, 1, 4

def seed(name, qlog, flags, chains, extra=(), avail_delta=0):
    """chains: list of descriptor lists [(addr, len, flags, next)], one per
    head placed at consecutive descriptor indices; extra: (gpa, bytes)."""
    q = 1 << qlog
    ram = bytearray(0x4000)
    idx, heads = 0, []
    for c in chains:
        heads.append(idx)
        for (a, l, f, nx) in c:
            struct.pack_into("<QIHH", ram, DESC + 16 * idx, a, l, f, idx + 1 if nx is None else nx)
            idx += 1
    for i, h in enumerate(heads):
        struct.pack_into("<H", ram, AVAIL + 4 + 2 * (i % q), h)
    struct.pack_into("<H", ram, AVAIL + 2, len(heads) + avail_delta)
    for gpa, b in extra:
        ram[gpa:gpa + len(b)] = b
    end = max(i for i, v in enumerate(ram) if v) + 1
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        f.write(bytes([qlog, flags]) + bytes(ram[:end]))

ind = struct.pack("<QIHHQIHHQIHH", 0x2000, 64, N, 1, 0x2100, 64, N | W, 2, 0x2200, 8, W, 0)
seed("direct-chain", 3, 0x00, [[(0x1b00, 16, N, None), (0x1c00, 512, W, 0)],
                               [(0x3000, 0x800, W, 0)]])
seed("indirect", 3, 0x02, [[(0x1e00, len(ind), I, 0)], [(0x1b00, 1, 0, 0)]],
     extra=[(0x1e00, ind)])
seed("event-idx-batch", 2, 0x81 | 0x3c, [[(0x1b00, 8, 0, 0)]] * 4)
seed("straddle", 2, 0x00, [[(0x2f00, 0x200, W, 0)]])
seed("loop", 2, 0x00, [[(0x1b00, 8, N, 1), (0x1c00, 8, N, 0)]])
seed("ahead", 1, 0x00, [[(0x1b00, 8, 0, 0)]], avail_delta=7)
PY
