#!/usr/bin/env bash
# A real host EIO reaches the guest as VIRTIO_BLK_S_IOERR, vmlet logs it
# and keeps serving: a disk image on btrfs (loop device) with one data
# block corrupted behind btrfs' back, so reading it fails its checksum
# with EIO. The probe reads the first MiB in 64 KiB chunks: exactly the
# chunk holding the bad block must fail with status 1, the chunks after it
# and a second disk must read fine, no queue may need a reset.
# Then a flush reaches the disk: after the guest's write + flush the data
# is in the filesystem's backing store at once (btrfs alone would only
# write it back after dirty_expire_centisecs).
# Needs root, loop devices and mkfs.btrfs (btrfs-progs): skipped otherwise.
source "$(dirname "$0")/../lib/sh.sh"

have_kvm || skip "no usable /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
((EUID == 0)) || skip "needs root (loop device, mount)"
command -v mkfs.btrfs >/dev/null && command -v losetup >/dev/null || skip "no mkfs.btrfs/losetup"
grep -qw btrfs /proc/filesystems || skip "kernel without btrfs"

FS=$TMPD/fs.img MNT=$TMPD/mnt LOOP=
cleanup() {
	mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"
	[[ -n $LOOP ]] && losetup -d "$LOOP" 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT
attach() { # attach $FS and mount it on $MNT
	LOOP=$(losetup -f --show "$FS") || return 1
	mount -t btrfs "$LOOP" "$MNT" || return 1
}
detach() {
	umount "$MNT" && losetup -d "$LOOP" && LOOP=
}

mkdir -p "$MNT"
truncate -s 160M "$FS"
mkfs.btrfs -q -f "$FS" >/dev/null 2>&1 || skip "mkfs.btrfs failed"
attach || skip "cannot attach a loop device or mount btrfs here"
# bad.raw: 4 MiB, every 4 KiB block tagged with its number
python3 - "$MNT/bad.raw" <<'PY'
import sys
with open(sys.argv[1], "wb") as f:
    for i in range(1024):
        f.write((b"VMLETEIO%08d" % i) * 256)
PY
head -c $((2 << 20)) /dev/urandom >"$MNT/good.raw"
sum_good=$(head -c 1048576 "$MNT/good.raw" | sha256sum | cut -d' ' -f1)
sync
detach || { fail "cannot unmount"; finish; }
# block 64 = bytes 256 KiB.. = sector 512, inside the probe's 5th chunk
off=$(grep -obUa -m1 "VMLETEIO00000064" "$FS" | head -1 | cut -d: -f1)
[[ -n $off ]] || { fail "block 64 not found in the filesystem image"; finish; }
printf 'XXXX' | dd of="$FS" bs=1 seek=$((off + 100)) conv=notrunc status=none
attach || { fail "cannot remount"; finish; }
dd if="$MNT/bad.raw" of=/dev/null bs=4096 skip=64 count=1 status=none 2>/dev/null &&
	skip "the corrupted block reads without error (no data checksums?)"

# errorPolicy report: the guest sees the error (under KubeVirt's default,
# stop, the VM would pause: tests/sh/blk_error_policy.sh)
VM_ERROR_POLICY=report vm_manifest eio 128Mi Once bad="$MNT/bad.raw" good="$MNT/good.raw" >"$TMPD/vm.yaml"
for bin in "$VMLET" "$VMLET_SAN"; do
	[[ -x $bin ]] || continue
	timeout 120 "$bin" probe -f "$TMPD/vm.yaml" --show-console >"$TMPD/out.txt" 2>&1
	rc=$?
	grep -q '^disk=00:02.0 ' "$TMPD/out.txt" || { fail "$bin: no report (status $rc)"; tail -5 "$TMPD/out.txt"; continue; }
	mapfile -t errs < <(grep -a '^error=' "$TMPD/out.txt")
	[[ ${#errs[@]} -eq 1 && ${errs[0]} == "error=virtio-blk 01: read failed at sector 512 (status 1)" ]] &&
		ok "$bin: the bad block gives the guest IOERR, the other chunks read" ||
		fail "$bin: errors: ${errs[*]:-none}"
	grep -q "^disk=00:01.0 4194304 0 - -$" "$TMPD/out.txt" || fail "$bin: $(grep '^disk=00:01' "$TMPD/out.txt")"
	grep -q "^disk=00:02.0 2097152 0 $sum_good -$" "$TMPD/out.txt" && ok "$bin: the next disk is fine" ||
		fail "$bin: $(grep '^disk=00:02' "$TMPD/out.txt")"
	grep -q "disk 'bad': read at sector 512 failed: Input/output error" "$TMPD/out.txt" &&
		ok "$bin: vmlet logged the host error" || fail "$bin: no log line for the EIO"
	grep -q "needs reset" "$TMPD/out.txt" && fail "$bin: a queue was reset"
done

# Flush: the guest writes 1 MiB at sector 0 and flushes; the written data
# must then be in the loop device's backing file, i.e. on btrfs' disk.
in_backing() {
	python3 - "$FS" <<'PY'
import sys
n = bytes((k * 7 + k // 4096) & 255 for k in range(4096, 4160))
sys.exit(0 if n in open(sys.argv[1], "rb").read() else 1)
PY
}
run_write() { # mode image
	sed "s|$MNT/bad.raw|$2|; /name: good/d" "$TMPD/vm.yaml" >"$TMPD/w.yaml"
	timeout 120 "$VMLET" probe -f "$TMPD/w.yaml" --cmdline "vmlet.blkbench=$1" --show-console \
		>"$TMPD/w.txt" 2>&1
	grep -q "^blkBench=00:01.0 $1 1 1048576 [0-9]* 0$" "$TMPD/w.txt"
}
in_backing && { fail "the pattern is in the image before the test"; finish; }
head -c $((2 << 20)) /dev/urandom >"$MNT/nf.raw"
head -c $((2 << 20)) /dev/urandom >"$MNT/f.raw"
sync
# control: without a flush the data stays in btrfs' page cache (removing
# the file then drops it unwritten)
run_write write "$MNT/nf.raw" || fail "unflushed write: $(grep -a 'blkBench\|error' "$TMPD/w.txt")"
if in_backing; then
	echo "note: unflushed data already written back (a sync elsewhere?): flush check inconclusive"
	finish
fi
rm -f "$MNT/nf.raw"
run_write wflush "$MNT/f.raw" || fail "flushed write: $(grep -a 'blkBench\|error' "$TMPD/w.txt")"
in_backing && ok "a flushed write is on the backing store when the guest sees the completion" ||
	fail "flushed data is not on the filesystem's backing store"
finish
