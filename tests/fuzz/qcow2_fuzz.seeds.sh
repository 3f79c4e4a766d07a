#!/usr/bin/env bash
# Seeds for qcow2_fuzz: 8 script bytes (see qcow2_fuzz.c) + an image.
# Hand-made qcow2 images (v2 and v3, 512 B and 4 KiB clusters, data, zero
# and unallocated clusters, a backing file "base" with and without the
# backing-format extension, what must be refused: compressed clusters,
# dirty, 32-bit refcounts for writing) and a raw one; plus, when qemu-img
# and qemu-io are there, a few images QEMU made. $1: the seed directory.
set -eu
dir=$1
python3 - "$dir" <<'PY'
import os, struct, sys

OUT = sys.argv[1]
COPIED, ZERO, COMPRESSED = 1 << 63, 1, 1 << 62

def qcow2(cb=9, size=256 << 10, version=3, backing=None, backing_fmt=None,
          data=(0, 3), zero=(1,), compressed=(), incompat=0, refcount_order=4):
    """Clusters: 0 header, 1 refcount table, 2 refcount block, 3 L1,
    4 the first L2 table, then one data cluster per index in data."""
    C = 1 << cb
    l2_cover = C * (C // 8)
    l1_size = max(1, -(-size // l2_cover))
    nclusters = 5 + len(data)
    img = bytearray(C * nclusters)
    hl = 104 if version == 3 else 72
    hdr = struct.pack(">4sIQIIQIIQQIIQ", b"QFI\xfb", version, 0, 0, cb, size, 0,
                      l1_size, 3 * C, 1 * C, 1, 0, 0)
    if version == 3:
        hdr += struct.pack(">QQQII", incompat, 0, 0, refcount_order, hl)
    img[0:len(hdr)] = hdr
    off = hl
    if backing_fmt:
        f = backing_fmt.encode()
        img[off:off + 8] = struct.pack(">II", 0xE2792ACA, len(f))
        img[off + 8:off + 8 + len(f)] = f
        off += 8 + ((len(f) + 7) & ~7)
    if version == 3:
        img[off:off + 8] = bytes(8)  # end of extensions
        off += 8
    if backing:
        name = backing.encode()
        img[off:off + len(name)] = name
        struct.pack_into(">QI", img, 8, off, len(name))
    struct.pack_into(">Q", img, 1 * C, 2 * C)  # refcount table -> block
    width = 1 << refcount_order
    for c in range(nclusters):  # every cluster used once
        if width == 16:
            struct.pack_into(">H", img, 2 * C + 2 * c, 1)
        elif width == 32:
            struct.pack_into(">I", img, 2 * C + 4 * c, 1)
    struct.pack_into(">Q", img, 3 * C, (4 * C) | COPIED)  # L1[0]
    for i, g in enumerate(data):
        host = (5 + i) * C
        flags = COMPRESSED if g in compressed else COPIED
        struct.pack_into(">Q", img, 4 * C + 8 * g, host | flags)
        img[host:host + C] = bytes([(g * 37 + 1) & 0xff]) * C
    for g in zero:
        struct.pack_into(">Q", img, 4 * C + 8 * g, ZERO)
    return bytes(img)

def seed(name, script, image):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes(script).ljust(8, b"\0") + image)

# script: flags (1 read-only, 2 writethrough), then 3 x (op, arg); op bits
# 0-1 read/write/zeroes/discard, 2-4 eighth of the disk, 5-7 length class
rw = [0, 0x00, 0, 0x01, 1, 0x22, 0]
seed("v3-512", rw, qcow2())
seed("v3-512-read", [1, 0x60, 0, 0x64, 2, 0x80, 3], qcow2())
seed("v2-4k", [2, 0x21, 0, 0x05, 3, 0x02, 0], qcow2(cb=12, size=1 << 20, version=2))
seed("v3-4k-cross", [0, 0x81, 7, 0x80, 7, 0xe1, 0], qcow2(cb=12, size=2 << 20, data=(0, 1, 2)))
seed("backing-raw", rw, qcow2(size=128 << 10, backing="base", backing_fmt="raw"))
seed("backing-probe", [0, 0x1c, 0, 0x1d, 9, 0x60, 1], qcow2(size=128 << 10, backing="base"))
seed("backing-self", [1, 0, 0, 0, 0, 0, 0], qcow2(backing="img"))
seed("compressed", [1, 0, 0], qcow2(compressed=(3,)))
seed("dirty", [1, 0, 0], qcow2(incompat=1))
seed("refcount32", [0, 0x01, 0, 0, 0], qcow2(refcount_order=5))
seed("raw", [0, 0x01, 0, 0x62, 1, 0x1e, 0], bytes(range(256)) * 16)
PY

# Images QEMU wrote (optional: qemu-utils)
command -v qemu-img >/dev/null && command -v qemu-io >/dev/null || exit 0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mk() { # NAME CLUSTER SIZE [qemu-io command...]
	local name=$1 cs=$2 sz=$3
	shift 3
	qemu-img create -q -f qcow2 -o cluster_size="$cs" "$t/i" "$sz" >/dev/null 2>&1 || return 0
	for c in "$@"; do qemu-io -f qcow2 -c "$c" "$t/i" >/dev/null 2>&1 || return 0; done
	{ printf '\0\001\0\101\001\041\0\0'; cat "$t/i"; } >"$dir/qemu-$name"
}
mk empty-512 512 1M
mk data-512 512 1M "write -P 0xab 0 4k" "write -z 8k 4k" "write -P 0xcd 600k 1k"
mk data-4k 4096 4M "write -P 0x11 0 8k" "write -P 0x22 3M 4k"

