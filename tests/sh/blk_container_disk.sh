#!/usr/bin/env bash
# containerDisk volumes reach the guest from a host file: through
# --volume NAME=PATH and through --disk-root DIR (KubeVirt's convention of a
# disk file inside the image, here ROOT/NAME/*.qcow2), for raw and qcow2
# images. The guest's capacity and SHA-256 of the first MiB must match the
# image's; a missing image fails with an error naming the volume's file.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no usable /dev/kvm"
command -v qemu-img >/dev/null || skip "no qemu-img"

python3 - "$TMPD/a.raw" <<'PY'
import sys
open(sys.argv[1], "wb").write(bytes((i * 7 + i // 512) & 255 for i in range(3 << 20)))
PY
want=$(head -c 1048576 "$TMPD/a.raw" | sha256sum | cut -d' ' -f1)
qemu-img convert -f raw -O qcow2 "$TMPD/a.raw" "$TMPD/a.qcow2" || fail "qemu-img convert"
mkdir -p "$TMPD/root/rootdisk"
cp "$TMPD/a.qcow2" "$TMPD/root/rootdisk/disk.qcow2"

vm_manifest cdisk 64Mi Always rootdisk=@quay.io/containerdisks/fedora:latest >"$TMPD/vm.yaml"

check() { # $1: label, rest: extra vmlet args
	local label=$1; shift
	timeout 60 "$VMLET" probe -f "$TMPD/vm.yaml" -o json "$@" >"$TMPD/out.json" 2>"$TMPD/err" ||
		{ fail "$label: probe failed: $(tail -n 3 "$TMPD/err")"; return; }
	got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["guest"]["disks"][0]; print(d["name"], d["capacityBytes"], d["sha256First1MiB"])' "$TMPD/out.json")
	[[ $got == "rootdisk 3145728 $want" ]] && ok "$label" || fail "$label: guest saw '$got'"
}
check "--volume raw" --volume "rootdisk=$TMPD/a.raw"
check "--volume qcow2" --volume "rootdisk=$TMPD/a.qcow2"
check "--disk-root qcow2" --disk-root "$TMPD/root"

timeout 60 "$VMLET" probe -f "$TMPD/vm.yaml" --volume "rootdisk=$TMPD/missing.img" >/dev/null 2>"$TMPD/err"
rc=$?
[[ $rc -eq 1 ]] || fail "missing image: exit $rc, want 1"
grep -q "missing.img" "$TMPD/err" && ok "missing image named in the error" || fail "error: $(cat "$TMPD/err")"
"$VMLET" probe -f "$TMPD/vm.yaml" --volume nonsense >/dev/null 2>&1
[[ $? -eq 2 ]] && ok "--volume without = is a usage error" || fail "--volume nonsense not a usage error"
finish
