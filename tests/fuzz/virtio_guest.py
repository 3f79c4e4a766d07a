# SPDX-License-Identifier: MIT
"""A guest's RAM for the virtio device fuzzers' seed scripts, in the layout
of tests/fuzz/virtio_fuzz.h: every queue's rings at fixed places (avail
rings, then used rings, then descriptor tables), data after them, buffers
the device fills higher up (zeroes: past the image the seed carries).
A seed is: setup byte, queue-size byte, le16 image length, the image,
then the target's events."""
import os
import struct

W, N, I = 2, 1, 4  # descriptor flags: WRITE, NEXT, INDIRECT


def avail(q): return 0x90 * q
def used(q): return 0x300 + 0x210 * q
def desc(q): return 0xd80 + 0x400 * q


class Guest:
    def __init__(self, setup, qlog=2):
        self.setup, self.qlog = setup, qlog  # queue size 2 << qlog
        self.ram = bytearray(0x10000)
        self.nd, self.na = {}, {}
        self.data = 0x2200
        self.bufs = 0x8000

    def buf(self, size):
        """Room for the device to write (stays zero)."""
        g = self.bufs
        self.bufs += (size + 63) & ~63
        return g

    def put(self, b):
        """Bytes for the device to read."""
        g = self.data
        self.ram[g:g + len(b)] = b
        self.data += (len(b) + 63) & ~63
        return g

    def chain(self, q, segs):
        """segs: [(gpa, len, flags)]; links them in q's table, posts the head."""
        i0 = self.nd.get(q, 0)
        for k, (a, l, f) in enumerate(segs):
            last = k + 1 == len(segs)
            struct.pack_into("<QIHH", self.ram, desc(q) + 16 * (i0 + k), a, l,
                             f | (0 if last else N), 0 if last else i0 + k + 1)
        self.nd[q] = i0 + len(segs)
        na = self.na.get(q, 0)
        struct.pack_into("<H", self.ram, avail(q) + 4 + 2 * na, i0)
        self.na[q] = na + 1
        struct.pack_into("<H", self.ram, avail(q) + 2, na + 1)

    def indirect(self, q, segs):
        """One descriptor pointing at a table holding segs."""
        t = b"".join(struct.pack("<QIHH", a, l, f | (0 if k + 1 == len(segs) else N),
                                 0 if k + 1 == len(segs) else k + 1)
                     for k, (a, l, f) in enumerate(segs))
        self.chain(q, [(self.put(t), len(t), I)])

    def seed(self, out, name, events=b""):
        end = max(i for i, v in enumerate(self.ram) if v) + 1
        head = bytes([self.setup, self.qlog]) + struct.pack("<H", end)
        with open(os.path.join(out, name), "wb") as f:
            f.write(head + bytes(self.ram[:end]) + events)
