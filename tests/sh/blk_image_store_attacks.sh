#!/usr/bin/env bash
# Images are untrusted (issue 28, findings 1 and 4): the image store reads
# layers with its own tar reader and runs nothing an image names. Images
# crafted with Python's tarfile, as `docker save` archives and an OCI
# layout, each served through `vmlet run --image-store` with runStrategy
# Halted (the store is resolved, no guest runs):
#  - a layer named --to-command=..., a containerDisk.path that is
#    --use-compress-program=...: the command never runs (a marker file
#    stays absent), the odd path is only a file name;
#  - device nodes, FIFOs, setuid and world-writable files in /disk: none
#    reaches the store; the disk is a fresh 0400 file in a 0700 directory;
#  - the disk a symbolic link to /etc/shadow, a symbolic link on its way,
#    a hard link out of the layer, a device: refused;
#  - names with "..", absolute names, truncated layers, a size past the
#    end, a corrupt gzip layer: the image is refused;
#  - whiteouts (.wh.NAME, .wh..wh..opq), GNU long names, pax headers, a
#    hard link inside the layer, zstd and gzip layers: the right bytes;
#  - a docker archive's layer that is a link to another member is
#    followed, one that leads out of the archive is refused;
#  - two volumes of one image with different paths get their own disks
#    (the cache key is image and member);
#  - a reference that is not one is refused before skopeo, and skopeo gets
#    it after "--";
#  - gzip runs as uid/gid 65534 with no_new_privs when vmlet is root.
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
command -v python3 >/dev/null || skip "no python3"
S=$TMPD/store
mkdir -p "$S"
python3 - "$S" "$TMPD" <<'PY' || { fail "building the images"; finish; }
import gzip, hashlib, io, json, os, shutil, subprocess, sys, tarfile
store, tmpd = sys.argv[1:3]

def data(tag, n=8192):
    return (tag.encode() * (n // len(tag) + 1))[:n]

def layer(entries, fmt=tarfile.GNU_FORMAT):
    """entries: (kind, name, arg[, mode]); kind file/dir/sym/link/chr/blk/fifo"""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for e in entries:
            kind, name, arg = e[:3]
            i = tarfile.TarInfo(name)
            i.mode = e[3] if len(e) > 3 else 0o644
            body = None
            if kind == "file":
                i.size, body = len(arg), io.BytesIO(arg)
            elif kind == "dir":
                i.type = tarfile.DIRTYPE
            elif kind == "sym":
                i.type, i.linkname = tarfile.SYMTYPE, arg
            elif kind == "link":
                i.type, i.linkname = tarfile.LNKTYPE, arg
            elif kind in ("chr", "blk"):
                i.type = tarfile.CHRTYPE if kind == "chr" else tarfile.BLKTYPE
                i.devmajor, i.devminor = 1, 3
            elif kind == "fifo":
                i.type = tarfile.FIFOTYPE
            t.addfile(i, body)
    return buf.getvalue()

def archive(fname, tag, layers, names=None):
    names = names or [f"l{i}/layer.tar" for i in range(len(layers))]
    with tarfile.open(os.path.join(store, fname), "w") as t:
        def add(n, d):
            i = tarfile.TarInfo(n); i.size = len(d); t.addfile(i, io.BytesIO(d))
        for n, l in zip(names, layers):
            if l is not None:
                add(n, l)
        add("manifest.json", json.dumps([{"Config": "c.json", "RepoTags": [tag],
                                          "Layers": names}]).encode())

marker = lambda n: os.path.join(tmpd, n)
# 1. command execution through tar's options
archive("a-opt.tar", "ex.org/opt:1", [layer([("file", "disk/d.img", data("x"))])] * 2,
        names=["l0/layer.tar", f"--to-command=sh -c 'touch {marker('pwned-layer')}'"])
odd = f"--use-compress-program=sh -c 'touch {marker('pwned-path')}; cat'"
archive("a-optgone.tar", "ex.org/optgone:1", [layer([("file", "disk/d.img", data("x"))]), None],
        names=["l0/layer.tar", f"-P --to-command=sh -c 'touch {marker('pwned-gone')}'"])
archive("b-odd.tar", "ex.org/oddpath:1", [layer([("file", odd, data("odd"))])])
# 2. what must not reach the store
archive("c-dev.tar", "ex.org/devices:1", [layer([
    ("dir", "disk", None), ("file", "disk/a.img", data("a")), ("chr", "disk/null", None),
    ("blk", "disk/sda", None), ("fifo", "disk/fifo", None),
    ("file", "disk/suid", b"#!/bin/sh\n", 0o4755), ("file", "disk/ww", b"w", 0o666)])])
archive("d-suid.tar", "ex.org/suid:1", [layer([("file", "disk/d.img", data("s"), 0o6777)])])
# 3. refused disks
archive("e-shadow.tar", "ex.org/shadow:1", [layer([("sym", "disk/disk.img", "/etc/shadow")])])
archive("f-symdir.tar", "ex.org/symdir:1", [layer([("sym", "disk", "/etc")])])
archive("g-hardout.tar", "ex.org/hardout:1", [layer([("link", "disk/disk.img", "etc/shadow")])])
archive("h-chr.tar", "ex.org/chrdisk:1", [layer([("chr", "disk/disk.img", None)])])
archive("i-dotdot.tar", "ex.org/dotdot:1", [layer([("file", "disk/d.img", data("d")),
                                                   ("file", "../../escaped", b"x")])])
archive("j-abs.tar", "ex.org/abs:1", [layer([("file", "disk/d.img", data("d")),
                                             ("file", marker("abs-escaped"), b"x")])])
good = layer([("file", "disk/d.img", data("t", 65536))])
archive("k-trunc.tar", "ex.org/trunc:1", [good[:30000]])
big = bytearray(layer([("file", "disk/d.img", data("p", 4096))]))
big[124:136] = b"%011o\0" % (1 << 30)  # size far past the end, checksum fixed
big[148:156] = b"        "
big[148:156] = b"%06o\0 " % sum(big[:512])
archive("l-past.tar", "ex.org/pasteof:1", [bytes(big)])
archive("m-gzbad.tar", "ex.org/badgzip:1", [gzip.compress(good, mtime=0)[:-100]])
# 4. what must come out right
archive("n-wh.tar", "ex.org/whiteout:1", [
    layer([("file", "disk/old.img", data("old"))]),
    layer([("file", "disk/.wh.old.img", b""), ("file", "disk/new.img", data("new"))])])
archive("n-whself.tar", "ex.org/whself:1", [
    layer([("file", "disk/gone.img", data("gone"))]),
    layer([("file", "disk/.wh.gone.img", b""), ("file", "disk/gone.img", data("back"))])])
archive("o-opq.tar", "ex.org/opaque:1", [
    layer([("file", "disk/a.img", data("lower"))]),
    layer([("file", "disk/.wh..wh..opq", b""), ("file", "disk/b.img", data("upper"))])])
archive("p-whdir.tar", "ex.org/whdir:1", [layer([("file", "disk/x.img", data("x"))]),
                                          layer([("file", ".wh.disk", b"")])])
longname = "disk/" + "n" * 200 + ".img"
archive("q-gnu.tar", "ex.org/gnulong:1", [layer([("file", longname, data("gnu"))])])
archive("r-pax.tar", "ex.org/pax:1", [layer([("file", "disk/pax-" + "é" * 80 + ".img",
                                              data("pax"))], fmt=tarfile.PAX_FORMAT)])
archive("s-hard.tar", "ex.org/hardin:1", [layer([("file", "data/real.img", data("hard")),
                                                 ("link", "disk/disk.img", "data/real.img")])])
archive("t-two.tar", "ex.org/two:1", [layer([("file", "disk/one.img", data("one")),
                                             ("file", "disk/two.img", data("two"))])])
# docker save's layer links (an older docker linked a repeated layer to
# the first copy): followed inside the archive, never out of it
def linked(fname, tag, target):
    with tarfile.open(os.path.join(store, fname), "w") as t:
        l = layer([("file", "disk/d.img", data("linked"))])
        i = tarfile.TarInfo("l0/layer.tar"); i.size = len(l); t.addfile(i, io.BytesIO(l))
        i = tarfile.TarInfo("l1/layer.tar"); i.type, i.linkname = tarfile.SYMTYPE, target
        t.addfile(i)
        m = json.dumps([{"RepoTags": [tag], "Layers": ["l1/layer.tar"]}]).encode()
        i = tarfile.TarInfo("manifest.json"); i.size = len(m); t.addfile(i, io.BytesIO(m))
linked("u-link.tar", "ex.org/linkin:1", "../l0/layer.tar")
linked("v-linkout.tar", "ex.org/linkout:1", "../../../../../etc/passwd")
# an OCI layout with a zstd layer under a gzip one
def blob(d):
    h = hashlib.sha256(d).hexdigest()
    os.makedirs(f"{store}/blobs/sha256", exist_ok=True)
    open(f"{store}/blobs/sha256/{h}", "wb").write(d)
    return {"digest": "sha256:" + h, "size": len(d)}
lays = [layer([("file", "disk/z.img", data("zstd"))])]
if shutil.which("zstd"):
    lays[0] = subprocess.run(["zstd", "-q", "-c"], input=lays[0], stdout=subprocess.PIPE,
                             check=True).stdout
    open(os.path.join(tmpd, "have-zstd"), "w")
lays.append(gzip.compress(layer([("file", "disk/g.img", data("gzip"))]), mtime=0))
man = {"schemaVersion": 2, "config": blob(b"{}"), "layers": [blob(l) for l in lays]}
m = dict(blob(json.dumps(man).encode()),
         annotations={"org.opencontainers.image.ref.name": "ex.org/oci:1"})
json.dump({"schemaVersion": 2, "manifests": [m]}, open(f"{store}/index.json", "w"))
json.dump({"imageLayoutVersion": "1.0.0"}, open(f"{store}/oci-layout", "w"))
# the expected disks, by their sha256
for n, d in [("x", data("x")), ("odd", data("odd")), ("a", data("a")), ("s", data("s")),
             ("new", data("new")), ("back", data("back")), ("upper", data("upper")),
             ("gnu", data("gnu")), ("pax", data("pax")), ("hard", data("hard")),
             ("one", data("one")), ("two", data("two")), ("linked", data("linked")), ("z", data("zstd")), ("g", data("gzip"))]:
    print(n, hashlib.sha256(d).hexdigest(), file=open(os.path.join(tmpd, "sums"), "a"))
PY

# vm VOLUME=IMAGE[#PATH]...: a Halted VM with those containerDisks
vm() {
	local v
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n'
	printf 'metadata: {name: t, namespace: default}\nspec:\n  runStrategy: Halted\n'
	printf '  template:\n    spec:\n      domain:\n        memory: {guest: 64Mi}\n'
	printf '        devices:\n          autoattachPodInterface: false\n          disks:\n'
	for v; do printf '          - {name: %s, disk: {bus: virtio}}\n' "${v%%=*}"; done
	printf '      volumes:\n'
	for v; do
		local img=${v#*=} path=
		[[ $img == *"#"* ]] && path=${img#*#} img=${img%%#*}
		printf '      - name: %s\n        containerDisk:\n          image: "%s"\n' "${v%%=*}" "$img"
		[[ -n $path ]] && printf '          path: "%s"\n' "$path"
	done
	return 0
}
# run VOLUME=IMAGE[#PATH]...: resolve them; 0 when vmlet accepted them
run() {
	vm "$@" >"$TMPD/vm.yaml"
	timeout 120 "$VMLET" run -f "$TMPD/vm.yaml" --image-store "$S" >/dev/null 2>"$TMPD/err"
}
# disk VOLUME: the file vmlet gave the volume (from its log)
disk() { sed -n "s/.*containerDisk volume '$1': image '[^']*' -> \([^\"]*\)\".*/\1/p" "$TMPD/err"; }
sum_of() { sed -n "s/^$1 //p" "$TMPD/sums"; }
# refused IMAGE[#PATH] WHAT ERE: vmlet refuses the image with a message
refused() {
	if run "a=$1"; then
		fail "$2: accepted"
	elif grep -qE -- "$3" "$TMPD/err"; then
		ok "$2: refused"
	else
		fail "$2: $(tail -2 "$TMPD/err")"
	fi
}
# same VOLUME NAME WHAT: the volume's disk has the bytes of NAME
same() {
	local f
	f=$(disk "$1")
	[[ -n $f && $(sha256sum <"$f" | cut -d' ' -f1) == "$(sum_of "$2")" ]] && ok "$3" ||
		fail "$3: volume $1 got '$f'"
}

# 1. no command from an image runs
run "a=ex.org/opt:1" || fail "opt layer: $(tail -2 "$TMPD/err")"
[[ ! -e $TMPD/pwned-layer ]] && ok "a layer named --to-command=... runs nothing" ||
	fail "the layer name ran a command"
same a x "... it is only the name of an archive member"
run "a=ex.org/optgone:1"
[[ ! -e $TMPD/pwned-gone ]] && grep -q "is not a file of the archive" "$TMPD/err" &&
	ok "a layer name that is no member: refused, nothing run" ||
	fail "missing option layer: $(tail -2 "$TMPD/err")"
odd="/--use-compress-program=sh -c 'touch $TMPD/pwned-path; cat'"
run "a=ex.org/oddpath:1#${odd//\'/\'}" || fail "odd path: $(tail -2 "$TMPD/err")"
[[ ! -e $TMPD/pwned-path ]] && ok "a containerDisk.path of --use-compress-program=... runs nothing" ||
	fail "containerDisk.path ran a command"
same a odd "... it is only the name of the disk file"

# 2. the store keeps nothing but the disks, private
run "a=ex.org/devices:1" && fail "several files in /disk accepted"
grep -q "more than one file in /disk" "$TMPD/err" && ok "several files in /disk: refused" ||
	fail "several files: $(tail -2 "$TMPD/err")"
run "a=ex.org/devices:1#/disk/a.img" "b=ex.org/suid:1" || fail "devices: $(tail -2 "$TMPD/err")"
same a a "the disk of a layer with devices, FIFOs, setuid and world-writable files"
[[ $(stat -c %a "$(disk b)") == 400 ]] && ok "a setuid 06777 disk is stored 0400" ||
	fail "suid disk: $(stat -c %a "$(disk b)")"
bad=$(find "$S/.vmlet-disks" \( -type c -o -type b -o -type p -o -type l -o -perm /7022 \
	-o -type d ! -perm 700 -o -type f ! -perm 400 \) -printf '%M %p\n')
[[ -z $bad ]] && ok "no device, FIFO, link, setuid or writable file in the store" ||
	fail "in the store: $bad"

# 3. refused disks and layers
refused ex.org/shadow:1 "the disk a symbolic link to /etc/shadow" "symbolic link.*refused"
refused "ex.org/symdir:1#/disk/shadow" "a symbolic link on the disk's way" "symbolic link.*refused"
refused ex.org/hardout:1 "a hard link out of the layer" "hard link.*refused"
refused ex.org/chrdisk:1 "the disk a character device" "character device.*refused"
refused ex.org/dotdot:1 "a layer with a ../ name" "leaves the archive's root"
refused ex.org/abs:1 "a layer with an absolute name" "leaves the archive's root"
[[ ! -e $TMPD/abs-escaped && ! -e $TMPD/../escaped ]] && ok "nothing written outside the store" ||
	fail "a file escaped the store"
refused ex.org/trunc:1 "a truncated layer" "truncated"
refused ex.org/pasteof:1 "a size past the end of the layer" "truncated"
refused ex.org/badgzip:1 "a corrupt gzip layer" "gzip could not decompress"
refused "ex.org/whdir:1#/disk/x.img" "a path whited out by a higher layer" "no regular file at"
refused ex.org/linkout:1 "a layer linked out of the docker archive" "is not a file of the archive"

# 4. the right bytes
run "a=ex.org/whiteout:1" "b=ex.org/opaque:1" "c=ex.org/gnulong:1" "d=ex.org/pax:1" \
	"e=ex.org/hardin:1" "f=ex.org/whself:1" ||
	fail "whiteouts and long names: $(tail -2 "$TMPD/err")"
same a new "a .wh. whiteout hides the lower layer's file"
same b upper "an opaque directory hides the lower layer's files"
same c gnu "a GNU long name"
same d pax "a pax header's path"
same e hard "a hard link to a file of the same layer"
same f back "a file of a layer wins over its own whiteout"
run "a=ex.org/linkin:1" || fail "layer link: $(tail -2 "$TMPD/err")"
same a linked "a layer linked to another member of the docker archive"
run "a=ex.org/two:1#/disk/one.img" "b=ex.org/two:1#/disk/two.img" ||
	fail "two paths: $(tail -2 "$TMPD/err")"
same a one "one image, first path"
same b two "one image, second path: its own disk"
if [[ -e $TMPD/have-zstd ]]; then
	run "a=ex.org/oci:1#/disk/z.img" "b=ex.org/oci:1#/disk/g.img" ||
		fail "zstd: $(tail -2 "$TMPD/err")"
	same a z "a zstd layer"
	same b g "a gzip layer over it"
fi

# the decompressor runs without root: a wrapper gzip first on PATH says
# who it is (nobody must be able to reach it and to write its note)
if ((EUID == 0)); then
	chmod o+x "$TMPD"
	mkdir -m 755 "$TMPD/wrap" && mkdir -m 1777 "$TMPD/note"
	printf '#!/bin/sh\n{ id -u; id -g; id -G; grep NoNewPrivs /proc/self/status; } >%s/note/gzip\nexec %s "$@"\n' \
		"$TMPD" "$(command -v gzip)" >"$TMPD/wrap/gzip"
	chmod 755 "$TMPD/wrap/gzip"
	vm "a=ex.org/oci:1#/disk/g.img" >"$TMPD/vm.yaml"
	rm -f "$S"/.vmlet-disks/*
	PATH="$TMPD/wrap:$PATH" timeout 60 "$VMLET" run -f "$TMPD/vm.yaml" --image-store "$S" \
		>/dev/null 2>"$TMPD/err" || fail "wrapped gzip: $(tail -2 "$TMPD/err")"
	[[ $(tr '\n\t' '  ' <"$TMPD/note/gzip" 2>/dev/null) == "65534 65534 65534 NoNewPrivs: 1 " ]] &&
		ok "gzip runs as uid/gid 65534, no groups, no_new_privs" ||
		fail "gzip ran as: $(cat "$TMPD/note/gzip" 2>&1)"
	same a g "... and decompresses the layer"
fi

# 5. references: refused when they are not, after "--" for skopeo
refused "-x" "a reference that starts with '-'" "is not an image reference"
refused "ex.org/a:1 --src-creds=x" "a reference with a space" "is not an image reference"
mkdir -p "$TMPD/bin"
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"%s/skopeo.args"\nexit 1\n' "$TMPD" >"$TMPD/bin/skopeo"
chmod +x "$TMPD/bin/skopeo"
vm "a=ex.org/missing:1" >"$TMPD/vm.yaml"
PATH="$TMPD/bin:$PATH" timeout 60 "$VMLET" run -f "$TMPD/vm.yaml" --image-store "$S" >/dev/null 2>&1
[[ $(tr '\n' ' ' <"$TMPD/skopeo.args" 2>/dev/null) == "copy -- docker://ex.org/missing:1 oci:$S:ex.org/missing:1 " ]] &&
	ok "skopeo gets the reference after --" || fail "skopeo argv: $(cat "$TMPD/skopeo.args" 2>&1)"
finish
