#!/usr/bin/env bash
# containerDisk as KubeVirt means it (issue 14 part 3):
#  - ephemeral: the probe guest's write test passes on a containerDisk
#    while the image (qcow2) stays byte for byte as it was; the image sits
#    on a read-only filesystem (as root: a read-only bind mount); the
#    overlay lives in $TMPDIR and is gone after exit;
#  - under runStrategy Always the restarted guest sees the image as it was
#    (the first boot's writes are gone);
#  - the image is only read: a running VM holds QEMU's read locks on it
#    (no write lock), so a second VM may use the same image;
#  - resolution: one directory per volume under --disk-root, containerDisk
#    .path inside it, KubeVirt's "only one file in /disk" rule, and the
#    ambiguous cases (two containerDisks and one image, two images) are
#    errors naming the volumes.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no usable /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
command -v qemu-img >/dev/null || skip "no qemu-img"
PIDS=()
RO=
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	[[ -n $RO ]] && umount "$RO" 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT

root=$TMPD/root
mkdir -p "$root/rootdisk" "$TMPD/scratch"
python3 - "$TMPD/a.raw" <<'PY'
import sys
open(sys.argv[1], "wb").write(bytes((i * 7 + i // 512) & 255 for i in range(4 << 20)))
PY
qemu-img convert -f raw -O qcow2 "$TMPD/a.raw" "$root/rootdisk/disk.qcow2" || { fail "qemu-img"; finish; }
sum_img() { sha256sum <"$root/rootdisk/disk.qcow2" | cut -d' ' -f1; }
sum0=$(sum_img)
first=$(head -c 1048576 "$TMPD/a.raw" | sha256sum | cut -d' ' -f1)
if ((EUID == 0)) && mkdir -p "$TMPD/ro" && mount --bind "$root" "$TMPD/ro" 2>/dev/null; then
	RO=$TMPD/ro
	mount -o remount,bind,ro "$RO" && touch "$RO/x" 2>/dev/null && fail "the bind mount is writable"
	disk_root=$RO
else
	disk_root=$root
	echo "note: not root: the image is on a writable filesystem"
fi
"$VMLET" probe --dump-guest "$TMPD/probe.elf" || { fail "cannot dump the probe"; finish; }
manifest() { vm_manifest eph 128Mi "$1" rootdisk=@quay.io/containerdisks/fedora:40; } # STRATEGY

# 1. the write test on the containerDisk: passes, the image is unchanged
manifest Once >"$TMPD/vm.yaml"
for bin in "$VMLET" "$VMLET_SAN"; do
	[[ -x $bin ]] || continue
	TMPDIR=$TMPD/scratch timeout 120 "$bin" probe -f "$TMPD/vm.yaml" --disk-root "$disk_root" \
		--io-test rootdisk --show-console >"$TMPD/out" 2>&1 &&
		grep -aq '^ioTest=00:01.0 ok' "$TMPD/out" &&
		ok "$bin: the guest writes its containerDisk${RO:+ (image on a read-only mount)}" ||
		fail "$bin: write test: $(grep -a '^ioTest\|error' "$TMPD/out" | head -3)"
	[[ $(sum_img) == "$sum0" ]] && ok "$bin: the image is unchanged" || fail "$bin: the image changed"
	[[ -z $(ls -A "$TMPD/scratch") ]] && ok "$bin: nothing left in \$TMPDIR" ||
		fail "$bin: left in TMPDIR: $(ls -A "$TMPD/scratch")"
done

# 2. runStrategy Always: each boot reports the disk's first MiB, then
# overwrites its first 64 KiB; the second boot must see the image again
manifest Always >"$TMPD/vm.yaml"
TMPDIR=$TMPD/scratch "$VMLET" run -f "$TMPD/vm.yaml" --disk-root "$disk_root" --kernel "$TMPD/probe.elf" \
	--cmdline 'vmlet.iotest=#0' --log-format text >"$TMPD/always" 2>"$TMPD/always.log" &
PIDS+=($!)
for _ in $(seq 1200); do
	(($(grep -ac '^ioTest=00:01.0 ok' "$TMPD/always") >= 2)) && break
	kill -0 "${PIDS[-1]}" 2>/dev/null || break
	sleep 0.1
done
{ kill -KILL "${PIDS[-1]}" && wait "${PIDS[-1]}"; } 2>/dev/null
grep -aq "overlay in $TMPD/scratch, thrown away at exit" "$TMPD/always.log" &&
	ok "the overlay is in \$TMPDIR (log)" || fail "no overlay log line"
[[ -z $(ls -A "$TMPD/scratch") ]] && ok "nothing left in \$TMPDIR after SIGKILL" ||
	fail "left in TMPDIR after SIGKILL: $(ls -A "$TMPD/scratch")"
mapfile -t reports < <(grep -a '^disk=00:01.0 ' "$TMPD/always" | cut -d' ' -f4)
if ((${#reports[@]} >= 2)); then
	[[ ${reports[0]} == "$first" && ${reports[1]} == "$first" ]] &&
		ok "runStrategy Always: the restarted guest sees the image as it was" ||
		fail "boots saw ${reports[*]}, want $first"
else
	fail "fewer than two boots: $(grep -a 'lifecycle\|error' "$TMPD/always.log" | head -3)"
fi
[[ $(sum_img) == "$sum0" ]] || fail "the image changed under runStrategy Always"

# 3. only read: QEMU's read locks, no write lock; a second VM shares it
locked() {
	local ino
	ino=$(stat -c %i "$root/rootdisk/disk.qcow2")
	awk -v ino="$ino" '$2 == "OFDLCK" { split($6, a, ":"); if (a[3] == ino) print $7 "-" $8 }' \
		/proc/locks | sort -n | tr '\n' ' ' | sed 's/ $//'
}
tiny_guests 1
manifest Once >"$TMPD/vm.yaml"
TMPDIR=$TMPD/scratch "$VMLET" run -f "$TMPD/vm.yaml" --disk-root "$disk_root" --kernel "$TMPD/mode1.elf" \
	--log-format text >"$TMPD/hold" 2>&1 &
PIDS+=($!)
if wait_log "$TMPD/hold" "tiny-guest: up|error" 600 && grep -q "tiny-guest: up" "$TMPD/hold"; then
	b=$(locked)
	[[ $b == "100-100 201-201 203-203" ]] && ok "the image is read-locked as QEMU locks a backing file ($b)" ||
		fail "locks on the image: '$b'"
	TMPDIR=$TMPD/scratch timeout 120 "$VMLET" probe -f "$TMPD/vm.yaml" --disk-root "$disk_root" \
		--io-test rootdisk >"$TMPD/out" 2>&1 && ok "a second VM uses the same containerDisk" ||
		fail "second VM: $(grep -a 'error' "$TMPD/out" | head -2)"
else
	fail "holder did not start: $(tail -3 "$TMPD/hold")"
fi
{ kill -KILL "${PIDS[-1]}" && wait "${PIDS[-1]}"; } 2>/dev/null

# 4. resolution
two() { # the VM with containerDisks a and b (b with path $1 when given)
	cat <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: two}
spec:
  runStrategy: Once
  template:
    spec:
      domain:
        memory: {guest: 64Mi}
        devices:
          disks:
          - {name: a, disk: {}}
          - {name: b, disk: {}}
      volumes:
      - {name: a, containerDisk: {image: x}}
      - {name: b, containerDisk: {image: y${1:+, path: $1}}}
YAML
}
R=$TMPD/r
resolve() { "$VMLET" resolve -f "$TMPD/two.yaml" -o config --disk-root "$R" 2>"$TMPD/err"; }
paths() { resolve | python3 -c 'import json,sys; print(" ".join(d["path"] for d in json.load(sys.stdin)["disks"]))'; }
two >"$TMPD/two.yaml"
mkdir -p "$R" && touch "$R/one.qcow2"
resolve >/dev/null && fail "two containerDisks on one image in ROOT resolved" ||
	{ grep -q "containerDisk volumes a, b: no $R/a directory" "$TMPD/err" &&
		ok "two containerDisks, one image in ROOT: error naming the volumes" ||
		fail "ambiguous ROOT: $(cat "$TMPD/err")"; }
mkdir -p "$R/a" "$R/b/disk" && touch "$R/a/x.img" "$R/b/disk/y"
[[ $(paths) == "$R/a/x.img $R/b/disk/y" ]] && ok "ROOT/NAME/ and ROOT/NAME/disk/ per volume" ||
	fail "per-volume dirs: $(paths) $(cat "$TMPD/err")"
touch "$R/b/disk/z"
resolve >/dev/null && fail "two files in /disk resolved" ||
	{ grep -q "containerDisk volume b: more than one file in $R/b/disk" "$TMPD/err" &&
		ok "two files in a volume's /disk: KubeVirt's error" || fail "two files: $(cat "$TMPD/err")"; }
two /disk/z >"$TMPD/two.yaml"
[[ $(paths) == "$R/a/x.img $R/b/disk/z" ]] && ok "containerDisk.path inside the volume's image" ||
	fail "path: $(paths) $(cat "$TMPD/err")"
finish
