#!/usr/bin/env bash
# Seeds for image_store_fuzz: one byte naming the parser (see
# image_store_fuzz.c), then its input. Tar archives as Python's tarfile
# writes them (ustar, GNU long names and links, pax, devices, links,
# whiteouts, an old GNU sparse file), docker and OCI manifests, image
# references, and two-layer images for the extraction. $1: the seed
# directory.
set -eu
python3 - "$1" <<'PY'
import io, json, os, sys, tarfile

OUT = sys.argv[1]

def seed(name, mode, data, pre=b""):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes([mode]) + pre + data)

def layer(entries, fmt=tarfile.GNU_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for kind, name, arg in entries:
            i = tarfile.TarInfo(name)
            body = None
            if kind == "file":
                i.size, body = len(arg), io.BytesIO(arg)
            elif kind == "dir":
                i.type = tarfile.DIRTYPE
            elif kind == "sym":
                i.type, i.linkname = tarfile.SYMTYPE, arg
            elif kind == "link":
                i.type, i.linkname = tarfile.LNKTYPE, arg
            elif kind == "chr":
                i.type, i.devmajor, i.devminor = tarfile.CHRTYPE, 1, 3
            elif kind == "fifo":
                i.type = tarfile.FIFOTYPE
            t.addfile(i, body)
    return buf.getvalue()

disk = [("dir", "disk", None), ("file", "disk/d.img", b"D" * 700)]
long = [("file", "disk/" + "n" * 180 + ".img", b"L" * 10), ("sym", "s", "t" * 150)]
odd = [("chr", "disk/null", None), ("fifo", "disk/fifo", None), ("sym", "disk/x", "/etc/shadow"),
       ("file", "data/r", b"r"), ("link", "disk/h", "data/r")]
wh = [("file", "disk/.wh.old.img", b""), ("file", "disk/.wh..wh..opq", b""),
      ("file", ".wh.other", b""), ("file", "disk/new.img", b"N")]
for n, e in [("disk", disk), ("long", long), ("odd", odd), ("wh", wh)]:
    seed("tar-gnu-" + n, 0, layer(e))
    seed("tar-pax-" + n, 8, layer(e, tarfile.PAX_FORMAT))
    seed("tar-ustar-" + n, 0, layer([x for x in e if len(x[1]) < 100 and
                                     (x[2] is None or len(x[2]) < 100 or x[0] == "file")],
                                    tarfile.USTAR_FORMAT))
# an old GNU sparse entry with one extension block, then a file
h = bytearray(tarfile.TarInfo("sp").tobuf(tarfile.GNU_FORMAT))
h[156:157], h[482] = b"S", 1
h[148:156] = b"        "
h[148:156] = b"%06o\0 " % sum(h[:512])
seed("tar-gnu-sparse", 0, bytes(h[:512]) + bytes(512) + layer(disk))
# two-layer images: byte 1 is where the first layer ends (256ths)
for n, lo, hi, path in [("wh", disk + [("file", "disk/old.img", b"O")], wh, 0),
                        ("path", disk, [("file", ".wh.disk", b"")], 1),
                        ("hard", odd, [("file", "a", b"")], 1),
                        ("one", [("file", "disk/only", b"1" * 600)], [("dir", "x", None)], 0)]:
    a, b = layer(lo), layer(hi)
    # the first layer ends at (length * cut / 256): pad it (zeros after
    # its end blocks) until some cut lands exactly there
    A = len(a)
    while True:
        cut = -(-256 * A // (A + len(b)))
        if cut < 256 and (A + len(b)) * cut // 256 == A:
            break
        A += 1
    a += bytes(A - len(a))
    seed("image-" + n, 5, a + b, bytes([cut & 255, path]))
d64 = "sha256:" + "0123456789abcdef" * 4
seed("docker", 1, json.dumps([{"Config": "c.json", "RepoTags": ["ex.org/a:1"],
                               "Layers": ["l0/layer.tar", "./l1/layer.tar"]}]).encode())
seed("docker-bad", 1, b'[{"RepoTags":["ex.org/a:1"],"Layers":["../x",7]}]')
seed("oci-index", 2, json.dumps({"schemaVersion": 2, "manifests": [
    {"digest": d64, "annotations": {"org.opencontainers.image.ref.name": "ex.org/a:1"}}]}).encode())
seed("oci-manifest", 3, json.dumps({"schemaVersion": 2, "config": {"digest": d64},
                                    "layers": [{"digest": d64}, {"digest": d64}]}).encode())
for i, r in enumerate(["quay.io/containerdisks/fedora:40", "[::1]:5000/a/b_c__d:t@" + d64,
                       "localhost/x", "--to-command=sh"]):
    seed(f"ref-{i}", 4, r.encode())
PY
