#!/usr/bin/env bash
# Image locks as QEMU takes them (vmm/disk/blk.h blk_lock()), checked
# against Debian's QEMU as the other party: while a vmlet writes an image
# a second vmlet writer is refused with an error naming the image as in
# use, QEMU cannot open it for writing, qemu-img info cannot open a qcow2
# image; vmlet refuses an image QEMU writes; the bytes locked are QEMU's
# (/proc/locks); shareable: true lets two vmlets write one image; readOnly
# disks share with readers (QEMU's too) and exclude writers; every kind of
# user (readOnly, shareable, containerDisk) locks QEMU's bytes; the locks of a
# sandboxed vmlet, and of a jailed one (as root), are taken before its
# confinement and gone once it is killed with SIGKILL.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no usable /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
command -v qemu-img >/dev/null || skip "no qemu-img (Debian qemu-utils)"
grep -q OFDLCK /proc/locks 2>/dev/null || [[ -r /proc/locks ]] || skip "no /proc/locks"
tiny_guests 1
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT

# manifest NAME DISK=PATH[:ro][:shared][:cd]...: a VM with those hostDisks
# (:cd: containerDisks, whose images start gives with --volume)
manifest() {
	local name=$1 d p
	shift
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n'
	printf 'metadata: {name: %s, namespace: default}\nspec:\n  runStrategy: Once\n  template:\n    spec:\n' "$name"
	printf '      domain:\n        memory: {guest: 64Mi}\n        devices:\n'
	printf '          autoattachPodInterface: false\n          disks:\n'
	for d; do
		p=${d#*=}
		printf '          - {name: %s, disk: {bus: virtio, readonly: %s}, shareable: %s}\n' \
			"${d%%=*}" "$([[ $p == *:ro* ]] && echo true || echo false)" \
			"$([[ $p == *:shared* ]] && echo true || echo false)"
	done
	printf '      volumes:\n'
	for d; do
		p=${d#*=}
		if [[ $p == *:cd* ]]; then # a containerDisk: its image given with --volume
			printf '      - {name: %s, containerDisk: {image: example/%s}}\n' "${d%%=*}" "${d%%=*}"
		else
			printf '      - {name: %s, hostDisk: {path: %s, type: Disk}}\n' "${d%%=*}" "${p%%:*}"
		fi
	done
}
# start TAG DISK=PATH...: a vmlet holding those disks (guest idles; $EXTRA
# options); 1 if it did not come up (its output is in $TMPD/TAG.out)
EXTRA=()
start() {
	local tag=$1
	shift
	manifest "$tag" "$@" >"$TMPD/$tag.yaml"
	: >"$TMPD/$tag.out" # now: the background child truncates it later
	"$VMLET" run -f "$TMPD/$tag.yaml" --kernel "$TMPD/mode1.elf" --log-format text "${EXTRA[@]}" \
		>"$TMPD/$tag.out" 2>&1 &
	PIDS+=($!)
	LAST=$!
	wait_log "$TMPD/$tag.out" "tiny-guest: up|error" 600 && grep -q "tiny-guest: up" "$TMPD/$tag.out"
}
# refused TAG DISK=PATH...: a vmlet on those disks must exit 1 naming PATH as in use
refused() {
	local tag=$1 path=${2#*=}
	path=${path%%:*}
	manifest "$tag" "${@:2}" >"$TMPD/$tag.yaml"
	timeout 30 "$VMLET" run -f "$TMPD/$tag.yaml" --kernel "$TMPD/mode1.elf" --log-format text \
		>"$TMPD/$tag.out" 2>&1
	local rc=$?
	[[ $rc -eq 1 ]] && grep -q "image '$path' is in use by another process" "$TMPD/$tag.out"
}
stop() { kill -KILL "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
# locked_bytes FILE: "100-101 201-201" (sorted ranges of OFD locks on FILE)
locked_bytes() {
	local ino
	ino=$(stat -c %i "$1")
	awk -v ino="$ino" '$2 == "OFDLCK" { split($6, a, ":"); if (a[3] == ino) print $7 "-" $8 }' \
		/proc/locks | sort -n | tr '\n' ' ' | sed 's/ $//'
}

raw=$TMPD/disk.raw qcow=$TMPD/disk.qcow2
truncate -s 16M "$raw"
qemu-img create -q -f qcow2 "$qcow" 16M || { fail "qemu-img create"; finish; }

# 1. a writer: the bytes QEMU's writer locks; nobody else may write (a
# hostDisk is raw whatever it holds: the qcow2 file is one for qemu-img)
if start w1 a="$raw" b="$qcow"; then
	w1=$LAST
	b=$(locked_bytes "$raw")
	[[ $b == "100-101 201-201" ]] && ok "raw writer locks QEMU's bytes ($b)" ||
		fail "raw writer locks '$b', QEMU's writer 100-101 201-201"
	refused w2 a="$raw" && ok "a second vmlet writer is refused: $(grep -m1 'in use' "$TMPD/w2.out")" ||
		fail "second writer not refused: $(tail -3 "$TMPD/w2.out")"
	refused r2 a="$raw:ro" && ok "a vmlet reader is refused while vmlet writes" ||
		fail "reader not refused: $(tail -3 "$TMPD/r2.out")"
	out=$(qemu-img info "$qcow" 2>&1)
	[[ $out == *'Failed to get shared "write" lock'* ]] && ok "qemu-img info sees the lock" ||
		fail "qemu-img info: $out"
	qemu-img info -U "$qcow" >/dev/null 2>&1 && ok "qemu-img info -U still reads it" || fail "info -U"
	if command -v qemu-io >/dev/null; then
		out=$(qemu-io -f raw -c 'write 0 512' "$raw" 2>&1)
		[[ $out == *'Failed to get "write" lock'* ]] && ok "qemu-io cannot write the raw image" ||
			fail "qemu-io: $out"
	fi
	# SIGKILL: the locks go with the process
	stop "$w1"
	b=$(locked_bytes "$raw")$(locked_bytes "$qcow")
	[[ -z $b ]] && ok "SIGKILL: no lock left" || fail "locks left after SIGKILL: $b"
	qemu-img info "$qcow" >/dev/null 2>&1 && ok "qemu-img info opens the image after the kill" ||
		fail "qemu-img info after the kill"
else
	fail "first writer did not start: $(tail -3 "$TMPD/w1.out")"
fi

# 2. vmlet refuses an image QEMU writes, shares with QEMU's readers
if command -v qemu-system-x86_64 >/dev/null; then
	qemu() { # DRIVE-OPTS BYTES: a stopped QEMU (-S) holding the drive, once
		# it locks BYTES (it takes its permissions in steps while starting)
		qemu-system-x86_64 -nodefaults -display none -S -drive "$1" &
		PIDS+=($!)
		LAST=$!
		for _ in $(seq 300); do [[ $(locked_bytes "$raw") == "$2" ]] && return 0; sleep 0.1; done
		return 1
	}
	if qemu "file=$raw,format=raw,if=virtio" "100-101 201-201"; then
		q=$LAST
		refused qw a="$raw" && ok "vmlet refuses an image QEMU writes" ||
			fail "image QEMU writes: $(tail -3 "$TMPD/qw.out")"
		stop "$q"
	else
		fail "QEMU did not lock the image: $(locked_bytes "$raw")"
		stop "$LAST"
	fi
	if qemu "file=$raw,format=raw,if=virtio,readonly=on" "100-100 201-201"; then
		q=$LAST
		start qr a="$raw:ro" && ok "vmlet reads an image QEMU reads" ||
			fail "reader with QEMU reader: $(tail -3 "$TMPD/qr.out")"
		stop "$LAST"
		refused qrw a="$raw" && ok "vmlet cannot write an image QEMU reads" ||
			fail "writer with QEMU reader: $(tail -3 "$TMPD/qrw.out")"
		stop "$q"
	else
		fail "QEMU did not lock the image for reading: $(locked_bytes "$raw")"
		stop "$LAST"
	fi
fi

# 3. readOnly: readers share; shareable: writers share
# share HOLDER SHARER REFUSED WHAT: while a vmlet holds a=HOLDER, one on
# a=SHARER starts too and one on a=REFUSED is refused
share() {
	local holder
	start h a="$1" || { fail "$4: the first vmlet did not start: $(tail -3 "$TMPD/h.out")"; return; }
	holder=$LAST
	[[ $1 == *:ro ]] && { b=$(locked_bytes "$raw"); [[ $b == "100-100 201-201" ]] &&
		ok "reader locks QEMU's reader bytes ($b)" || fail "reader locks '$b'"; }
	start s a="$2" && ok "$4: a second one shares the image" || fail "$4: $(tail -3 "$TMPD/s.out")"
	stop "$LAST"
	refused x a="$3" && ok "$4: an exclusive writer is refused" || fail "$4: not refused: $(tail -3 "$TMPD/x.out")"
	stop "$holder"
}
share "$raw:ro" "$raw:ro" "$raw" "readOnly"
share "$raw:shared" "$raw:shared" "$raw" "shareable: true"

# 5. each kind of user locks the bytes QEMU 7.2 locks for the same disk as
# libvirt starts it (readOnly: readonly=on, shareable: share-rw=on; a
# containerDisk is the backing file of KubeVirt's overlay), QEMU being the
# oracle: its bytes are read once its QMP greeting says it is set up
if command -v qemu-system-x86_64 >/dev/null && command -v python3 >/dev/null; then
	qemu-img create -q -f qcow2 -b "$qcow" -F qcow2 "$TMPD/overlay.qcow2"
	# qemu_bytes FILE ARGS...: the bytes a stopped QEMU with ARGS locks on FILE
	qemu_bytes() {
		local file=$1 q
		shift
		rm -f "$TMPD/qmp"
		qemu-system-x86_64 -nodefaults -display none -S -qmp "unix:$TMPD/qmp,server=on,wait=off" "$@" &
		q=$!
		python3 - "$TMPD/qmp" <<'PY'
import socket, sys, time
for _ in range(600):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.recv(4096); sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)
PY
		locked_bytes "$file"
		stop "$q"
	}
	# same WHAT VMLET-DISK QEMU-DRIVE-OPTS [DEVICE-OPTS]: vmlet's bytes on the image are QEMU's
	same() {
		local what=$1 d=$2 file=${2#*=} want got
		file=${file%%:*}
		want=$(qemu_bytes "$file" -drive "if=none,id=d0,$3" -device "virtio-blk-pci,drive=d0${4:+,$4}")
		[[ $d == *:cd* ]] && EXTRA=(--volume "${d%%=*}=$file")
		if start k "$d"; then
			got=$(locked_bytes "$file")
			[[ -n $want && $got == "$want" ]] && ok "$what: QEMU's bytes ($got)" ||
				fail "$what: vmlet locks '$got', QEMU '$want'"
		else
			fail "$what: vmlet did not start: $(tail -3 "$TMPD/k.out")"
		fi
		stop "$LAST"
		EXTRA=()
	}
	same "raw writer" a="$raw" "file=$raw,format=raw"
	same "raw readOnly" a="$raw:ro" "file=$raw,format=raw,readonly=on"
	same "raw readOnly shareable" a="$raw:ro:shared" "file=$raw,format=raw,readonly=on" share-rw=on
	same "raw shareable writer" a="$raw:shared" "file=$raw,format=raw" share-rw=on
	same "qcow2 readOnly containerDisk" a="$qcow:cd:ro" "file=$qcow,format=qcow2,readonly=on"
	same "qcow2 readOnly shareable containerDisk" a="$qcow:cd:ro:shared" \
		"file=$qcow,format=qcow2,readonly=on" share-rw=on
	same "qcow2 containerDisk (the overlay's backing file)" a="$qcow:cd" \
		"file=$TMPD/overlay.qcow2,format=qcow2"
fi

# 4. in a jail (namespaces, pivot into an empty directory): the locks were
# taken before, and go when the supervisor is killed (its worker follows)
if ((EUID == 0)); then
	mkdir -p "$TMPD/jail"
	EXTRA=(--jail "$TMPD/jail")
	if start j1 a="$raw"; then
		j1=$LAST
		b=$(locked_bytes "$raw")
		[[ $b == "100-101 201-201" ]] && ok "jailed writer holds its locks ($b)" ||
			fail "jailed writer locks '$b'"
		EXTRA=()
		refused j2 a="$raw" && ok "a writer is refused while a jailed vmlet writes" ||
			fail "next to a jailed writer: $(tail -3 "$TMPD/j2.out")"
		stop "$j1"
		for _ in $(seq 100); do [[ -z $(locked_bytes "$raw") ]] && break; sleep 0.1; done
		[[ -z $(locked_bytes "$raw") ]] && ok "SIGKILL of the jailed vmlet: no lock left" ||
			fail "locks left after killing the jailed vmlet: $(locked_bytes "$raw")"
	else
		fail "jailed writer did not start: $(tail -3 "$TMPD/j1.out")"
	fi
	EXTRA=()
fi
finish
