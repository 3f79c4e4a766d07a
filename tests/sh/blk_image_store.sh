#!/usr/bin/env bash
# --image-store DIR: containerDisks named by their image reference, as on
# a bare host. The store holds an OCI image layout (built here by hand:
# a gzip layer with /disk/disk.qcow2) and a `docker save` archive (an
# uncompressed layer with /disk/disk.raw); the guest sees both disks with
# their images' bytes, the unpacked disks are reused by the next run, an
# image that is nowhere is an error naming volume, image and store. With
# Debian's skopeo and docker-registry: the OCI image is pushed to a
# registry on loopback, and vmlet pulls it into an empty store by itself.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no usable /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
command -v qemu-img >/dev/null && command -v tar >/dev/null || skip "no qemu-img or tar"
REG= CONF=
cleanup() {
	[[ -n $REG ]] && kill "$REG" 2>/dev/null
	[[ -n $CONF ]] && rm -f "$CONF"
	wait 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT
S=$TMPD/store
mkdir -p "$S" "$TMPD/src"
python3 - "$TMPD/src/a.raw" "$TMPD/src/b.raw" <<'PY'
import sys
open(sys.argv[1], "wb").write(bytes((i * 7 + i // 512) & 255 for i in range(3 << 20)))
open(sys.argv[2], "wb").write(bytes((i * 11 + i // 4096) & 255 for i in range(2 << 20)))
PY
qemu-img convert -f raw -O qcow2 "$TMPD/src/a.raw" "$TMPD/src/disk.qcow2" || { fail "qemu-img"; finish; }
sum_a=$(head -c 1048576 "$TMPD/src/a.raw" | sha256sum | cut -d' ' -f1)
sum_b=$(head -c 1048576 "$TMPD/src/b.raw" | sha256sum | cut -d' ' -f1)
# the OCI layout (example.org/vmlet/oci:1) and the docker archive
# (example.org/vmlet/arch:2), as containerdisks are built: FROM scratch,
# ADD the image to /disk/
python3 - "$S" "$TMPD/src/disk.qcow2" "$TMPD/src/b.raw" <<'PY'
import gzip, hashlib, io, json, os, sys, tarfile
store, qcow, raw = sys.argv[1:4]
def layer(path, name, compress):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        d = tarfile.TarInfo("disk"); d.type = tarfile.DIRTYPE; d.mode = 0o755; t.addfile(d)
        t.add(path, arcname="disk/" + name)
    data = buf.getvalue()
    return gzip.compress(data, mtime=0) if compress else data
def blob(data):
    h = hashlib.sha256(data).hexdigest()
    os.makedirs(f"{store}/blobs/sha256", exist_ok=True)
    open(f"{store}/blobs/sha256/{h}", "wb").write(data)
    return {"digest": "sha256:" + h, "size": len(data)}
lay = layer(qcow, "disk.qcow2", True)
cfg = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers",
      "diff_ids": ["sha256:" + hashlib.sha256(gzip.decompress(lay)).hexdigest()]}}).encode()
man = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
       "config": dict(blob(cfg), mediaType="application/vnd.oci.image.config.v1+json"),
       "layers": [dict(blob(lay), mediaType="application/vnd.oci.image.layer.v1.tar+gzip")]}
m = dict(blob(json.dumps(man).encode()), mediaType=man["mediaType"],
         annotations={"org.opencontainers.image.ref.name": "example.org/vmlet/oci:1"})
json.dump({"schemaVersion": 2, "manifests": [m]}, open(f"{store}/index.json", "w"))
json.dump({"imageLayoutVersion": "1.0.0"}, open(f"{store}/oci-layout", "w"))
# docker save: manifest.json, the config, one directory per layer
lay = layer(raw, "disk.raw", False)
with tarfile.open(f"{store}/arch.tar", "w") as t:
    def add(name, data):
        i = tarfile.TarInfo(name); i.size = len(data); t.addfile(i, io.BytesIO(data))
    add("cfg.json", json.dumps({"os": "linux"}).encode())
    add("l1/layer.tar", lay)
    add("manifest.json", json.dumps([{"Config": "cfg.json", "RepoTags": ["example.org/vmlet/arch:2"],
        "Layers": ["l1/layer.tar"]}]).encode())
PY
manifest() { vm_manifest store 64Mi Once "a=@$1" "b=@$2"; } # IMAGE-A IMAGE-B
# guest STORE: the probe's "name capacity sha" of each disk
guest() {
	timeout 120 "$VMLET" probe -f "$TMPD/vm.yaml" --image-store "$1" -o json >"$TMPD/out.json" 2>"$TMPD/err" &&
		python3 -c 'import json,sys
for d in json.load(open(sys.argv[1]))["guest"]["disks"]: print(d["name"], d["capacityBytes"], d["sha256First1MiB"])' \
			"$TMPD/out.json" | tr '\n' ' '
}
want="a 3145728 $sum_a b 2097152 $sum_b "
manifest example.org/vmlet/oci:1 example.org/vmlet/arch:2 >"$TMPD/vm.yaml"
got=$(guest "$S")
[[ $got == "$want" ]] && ok "an OCI layout and a docker save archive serve the containerDisks" ||
	fail "guest saw '$got': $(tail -3 "$TMPD/err")"
[[ $(ls "$S/.vmlet-disks" 2>/dev/null | wc -l) -eq 2 ]] && ok "both disks unpacked once in the store" ||
	fail "store cache: $(ls -la "$S/.vmlet-disks" 2>&1)"
# the next run takes the unpacked disk from the store, not the image:
# zeroes written into the unpacked copy show through
cached=$(find "$S/.vmlet-disks" -type f -size 2097152c)
[[ -f $cached && $(dirname "$cached") == "$S/.vmlet-disks" ]] || fail "no cached disk for b: '$cached'"
[[ $(stat -c %a "$S/.vmlet-disks") == 700 && $(stat -c %a "$cached") == 400 ]] &&
	ok "the store's disks are private (directory 0700, files 0400)" ||
	fail "modes: $(stat -c '%a %n' "$S/.vmlet-disks" "$cached")"
dd if=/dev/zero of="$cached" bs=1M count=1 conv=notrunc status=none
zero=$(head -c 1048576 /dev/zero | sha256sum | cut -d' ' -f1)
got=$(guest "$S")
[[ $got == "a 3145728 $sum_a b 2097152 $zero " ]] && ok "the next run reuses the unpacked disks" ||
	fail "second run: '$got'"
rm -f "$cached"

# nowhere, and no skopeo on PATH: an error naming volume, image and store
mkdir -p "$TMPD/bin"
manifest example.org/vmlet/nowhere:9 example.org/vmlet/arch:2 >"$TMPD/vm.yaml"
timeout 60 env PATH="$TMPD/bin" "$VMLET" probe -f "$TMPD/vm.yaml" --image-store "$S" >/dev/null 2>"$TMPD/err" &&
	fail "a missing image was accepted"
grep -q "containerDisk volume 'a': image 'example.org/vmlet/nowhere:9' is not in the image store '$S'.*install skopeo" \
	"$TMPD/err" && ok "a missing image is named with its volume and the store" || fail "missing image: $(cat "$TMPD/err")"

# skopeo pull from Debian's docker-registry on loopback (plain HTTP: the
# registry is declared insecure the way an administrator does it, a
# drop-in in /etc/containers/registries.conf.d, removed afterwards)
command -v skopeo >/dev/null && command -v docker-registry >/dev/null ||
	{ echo "note: skopeo or docker-registry not installed: pull not tested"; finish; }
[[ -w /etc/containers/registries.conf.d ]] ||
	{ echo "note: cannot declare a loopback registry insecure: pull not tested"; finish; }
port=$((20000 + RANDOM % 20000))
cat >"$TMPD/registry.yml" <<YAML
version: 0.1
storage: {filesystem: {rootdirectory: $TMPD/registry}}
http: {addr: "127.0.0.1:$port"}
YAML
docker-registry serve "$TMPD/registry.yml" >"$TMPD/registry.log" 2>&1 &
REG=$!
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
CONF=/etc/containers/registries.conf.d/zz-vmlet-test-$port.conf
printf '[[registry]]\nlocation = "127.0.0.1:%s"\ninsecure = true\n' "$port" >"$CONF"
skopeo copy -q "oci:$S:example.org/vmlet/oci:1" "docker://127.0.0.1:$port/vmlet/oci:1" >/dev/null 2>"$TMPD/push.err" ||
	{ fail "push to the loopback registry: $(tail -2 "$TMPD/push.err")"; finish; }
mkdir -p "$TMPD/empty"
cp "$S/arch.tar" "$TMPD/empty/"
manifest "127.0.0.1:$port/vmlet/oci:1" example.org/vmlet/arch:2 >"$TMPD/vm.yaml"
got=$(guest "$TMPD/empty")
[[ $got == "$want" ]] && ok "vmlet pulled the image from the registry with skopeo" ||
	fail "pull: guest saw '$got': $(tail -3 "$TMPD/err")"
grep -q "\"127.0.0.1:$port/vmlet/oci:1\"" "$TMPD/empty/index.json" 2>/dev/null &&
	ok "the pulled image is in the store's OCI layout" || fail "no pulled image in the store"
finish
