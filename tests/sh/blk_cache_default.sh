#!/usr/bin/env bash
# A disk's cache mode as KubeVirt's virt-launcher sets it
# (vmm/disk/volume.c): unset is none (O_DIRECT) where the image's file
# system takes direct I/O, else writethrough (O_DSYNC); an explicit none
# where it does not is refused with an error naming the disk; writeback
# is the page cache. Checked on the descriptors the running vmlet holds
# (/proc/PID/fdinfo flags) with images on a file system with O_DIRECT (the
# test's /tmp or /var/tmp) and, where the kernel's tmpfs has no O_DIRECT
# (before Linux 6.6), on /dev/shm; tests/unit/volume_cache_test covers a
# file system without O_DIRECT on any kernel.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no usable /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
command -v python3 >/dev/null || skip "no python3"
# direct PATH: 0 when PATH opens with O_DIRECT
direct() { python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT))' "$1" 2>/dev/null; }
SHM=$(mktemp -d /dev/shm/vmlet-cache.XXXXXX 2>/dev/null) || skip "no /dev/shm"
VT=
cleanup() {
	[[ -n ${PID:-} ]] && kill -KILL "$PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMPD" "$SHM" ${VT:+"$VT"}
}
trap cleanup EXIT
truncate -s 4M "$SHM/t.img"
NODIO=1
direct "$SHM/t.img" && NODIO= && echo "note: /dev/shm takes O_DIRECT here (Linux >= 6.6): no image without it"
D=$TMPD
truncate -s 4M "$D/d.img"
if ! direct "$D/d.img"; then
	VT=$(mktemp -d /var/tmp/vmlet-cache.XXXXXX) && D=$VT && truncate -s 4M "$D/d.img" &&
		direct "$D/d.img" || skip "no file system with O_DIRECT in /tmp or /var/tmp"
fi
tiny_guests 1

# manifest DISK=PATH[:CACHE]...
manifest() {
	local d c
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n'
	printf 'metadata: {name: c, namespace: default}\nspec:\n  runStrategy: Once\n  template:\n    spec:\n'
	printf '      domain:\n        memory: {guest: 64Mi}\n        devices:\n'
	printf '          autoattachPodInterface: false\n          disks:\n'
	for d; do
		c=${d#*=}
		[[ $c == *:* ]] && c=", cache: ${c#*:}" || c=
		printf '          - {name: %s%s, disk: {bus: virtio}}\n' "${d%%=*}" "$c"
	done
	printf '      volumes:\n'
	for d; do
		c=${d#*=}
		printf '      - {name: %s, hostDisk: {path: %s, type: Disk}}\n' "${d%%=*}" "${c%%:*}"
	done
}
# flags FILE: the octal open flags of the running vmlet's descriptor on FILE
flags() {
	local fd
	for fd in /proc/"$PID"/fd/*; do
		[[ $(readlink "$fd") == "$1" ]] || continue
		awk '/^flags:/ {print $2}' /proc/"$PID"/fdinfo/"${fd##*/}"
		return
	done
}
has() { (((8#$1 & $2) != 0)); } # has FLAGS BIT

cp "$D/d.img" "$D/e.img"
cp "$SHM/t.img" "$SHM/u.img"
disks=(a="$D/d.img" c="$D/e.img:writeback" d="$SHM/u.img:writethrough")
[[ -n $NODIO ]] && disks+=(b="$SHM/t.img")
manifest "${disks[@]}" >"$TMPD/vm.yaml"
"$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode1.elf" --log-format text >"$TMPD/run.out" 2>&1 &
PID=$!
if wait_log "$TMPD/run.out" "tiny-guest: up|error" 600 && grep -q "tiny-guest: up" "$TMPD/run.out"; then
	fa=$(flags "$D/d.img") fb=$(flags "$SHM/t.img") fc=$(flags "$D/e.img") fd=$(flags "$SHM/u.img")
	O_DIRECT=$((8#40000)) O_DSYNC=$((8#10000))
	if [[ -n $fa ]] && has "$fa" $O_DIRECT && ! has "$fa" $O_DSYNC; then
		ok "unset cache, O_DIRECT file system: none (flags $fa)"
	else
		fail "unset cache on $D: flags '$fa', want O_DIRECT"
	fi
	if [[ -z $NODIO ]]; then
		:
	elif [[ -n $fb ]] && has "$fb" $O_DSYNC && ! has "$fb" $O_DIRECT; then
		ok "unset cache, tmpfs: writethrough (flags $fb)"
	else
		fail "unset cache on tmpfs: flags '$fb', want O_DSYNC"
	fi
	[[ -n $fc ]] && ! has "$fc" $O_DIRECT && ! has "$fc" $O_DSYNC &&
		ok "cache writeback: the page cache (flags $fc)" || fail "cache writeback: flags '$fc'"
	[[ -n $fd ]] && has "$fd" $O_DSYNC && ok "cache writethrough on tmpfs (flags $fd)" ||
		fail "cache writethrough: flags '$fd'"
	grep -q "disk 'a': cache mode none (unset" "$TMPD/run.out" &&
		{ [[ -z $NODIO ]] || grep -q "disk 'b': cache mode writethrough (unset" "$TMPD/run.out"; } &&
		ok "the chosen modes are logged" || fail "no log line naming the chosen cache modes"
else
	fail "the VM did not come up: $(tail -n 5 "$TMPD/run.out")"
fi
kill -KILL "$PID" 2>/dev/null
wait "$PID" 2>/dev/null
PID=

[[ -z $NODIO ]] && finish
manifest a="$SHM/t.img:none" >"$TMPD/none.yaml"
timeout 60 "$VMLET" run -f "$TMPD/none.yaml" --kernel "$TMPD/mode1.elf" --log-format text >"$TMPD/none.out" 2>&1
rc=$?
if [[ $rc -eq 1 ]] && grep -q "disk 'a': cache mode 'none' needs direct I/O, which the file system of '$SHM/t.img' does not support" "$TMPD/none.out"; then
	ok "cache none on tmpfs is refused, naming the disk"
else
	fail "cache none on tmpfs: exit $rc: $(tail -n 3 "$TMPD/none.out")"
fi
finish
