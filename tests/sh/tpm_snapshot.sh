#!/usr/bin/env bash
# Snapshot and restore of a VM with devices.tpm (vmm/dev/tpm/tpm_snap.c,
# docs/snapshot.md#the-tpm) through vmlet's control socket, swtpm for
# real, the tiny guest that prints "x" on COM1: tpm: {} (TIS) snapshotted
# with --resume (it runs on) and --stop, restored (the guest continues,
# powers off on the button); tpm.persistent (CRB, NAME.tpm/) restored
# onto its own directory, and refused ("is not the TPM state of the
# snapshot") onto another one. A VM with tpm: {} migrates live to
# another vmlet (its TPM in the state stream): the source ends with 0,
# the destination runs the guest on.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v swtpm >/dev/null || skip "no swtpm (Debian package swtpm)"
tiny_guests 8
SOCK=$TMPD/api.sock
G=$TMPD/mode8.elf

tpm_vm() { # NAME TPM-YAML
	vm_manifest "$1" 64Mi Once | sed "s|^\(        devices:\)$|\1\n          tpm: $2|"
}
start() { # OUT ERR ARGS...
	local out=$1 err=$2; shift 2
	rm -f "$SOCK"
	"$VMLET" run --kernel "$G" --api-socket "$SOCK" --log-format text "$@" >"$out" 2>"$err" &
	PID=$!
	for _ in $(seq 600); do
		[[ -S $SOCK ]] && grep -q "x" "$out" && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "vmlet did not start: $(tail -2 "$err")"
	kill -KILL "$PID" 2>/dev/null
	return 1
}
xs() { tr -cd x <"$1" | wc -c; }
grows() {
	local a b
	a=$(xs "$1"); sleep 0.3; b=$(xs "$1")
	((b > a))
}
# snap NAME: run the VM, snapshot --resume then --stop into $TMPD/NAME.snap
snap() {
	local n=$1 rc
	start "$TMPD/$n.out" "$TMPD/$n.err" -f "$TMPD/$n/vm.yaml" || return 1
	"$VMLET" ctl "$SOCK" snapshot "$TMPD/$n.s0" --resume >/dev/null && grows "$TMPD/$n.out" &&
		ok "$n: snapshot --resume of a VM with a TPM, the guest runs on" ||
		fail "$n: snapshot --resume: $(tail -3 "$TMPD/$n.err")"
	"$VMLET" ctl "$SOCK" snapshot "$TMPD/$n.snap" --stop >/dev/null
	wait "$PID"
	rc=$?
	((rc == 0)) && [[ -f $TMPD/$n.snap/state ]] && ok "$n: snapshot --stop, exit 0" ||
		fail "$n: snapshot --stop: exit $rc $(tail -3 "$TMPD/$n.err")"
}
# restored NAME: restore from $TMPD/NAME.snap, the guest continues and
# powers off on the button
restored() {
	local n=$1 rc
	start "$TMPD/$n.rout" "$TMPD/$n.rerr" -f "$TMPD/$n/vm.yaml" --restore "$TMPD/$n.snap" ||
		return 1
	grep -q "restore: the guest continues" "$TMPD/$n.rerr" && grows "$TMPD/$n.rout" &&
		ok "$n: restored with its TPM, the guest continues" ||
		fail "$n: restore: $(tail -3 "$TMPD/$n.rerr")"
	"$VMLET" ctl "$SOCK" power-button
	wait "$PID"
	rc=$?
	((rc == 0)) && ok "$n: restored guest powers off (exit 0)" ||
		fail "$n: restored: exit $rc $(tail -3 "$TMPD/$n.rerr")"
}

mkdir -p "$TMPD/tpms" "$TMPD/tpmp"
tpm_vm tpms '{}' >"$TMPD/tpms/vm.yaml"
snap tpms && restored tpms

tpm_vm tpmp '{persistent: true}' >"$TMPD/tpmp/vm.yaml"
snap tpmp && restored tpmp
# another TPM's state in tpmp.tpm/: refused before the guest runs
mv "$TMPD/tpmp/tpmp.tpm" "$TMPD/tpmp/saved.tpm"
mkdir -m 0700 "$TMPD/tpmp/tpmp.tpm"
"$VMLET" run --kernel "$G" --log-format text -f "$TMPD/tpmp/vm.yaml" \
	--restore "$TMPD/tpmp.snap" >"$TMPD/other.out" 2>"$TMPD/other.err"
rc=$?
((rc != 0)) && grep -q "is not the TPM state of the snapshot" "$TMPD/other.err" &&
	! grep -q x "$TMPD/other.out" &&
	ok "tpm.persistent: a restore onto another TPM state is refused, naming it" ||
	fail "another TPM state: exit $rc $(tail -3 "$TMPD/other.err")"

# live migration of a VM with tpm: {} (the TPM's state travels in the
# migration's state)
M=$TMPD/mig.sock D=$TMPD/dst.sock
if start "$TMPD/ms.out" "$TMPD/ms.err" -f "$TMPD/tpms/vm.yaml"; then
	SP=$PID
	rm -f "$M"
	"$VMLET" run --kernel "$G" --api-socket "$D" --log-format text -f "$TMPD/tpms/vm.yaml" \
		--incoming "unix:$M" >"$TMPD/md.out" 2>"$TMPD/md.err" &
	DP=$!
	wait_log "$TMPD/md.err" "waiting for the guest" 100 ||
		fail "destination did not listen: $(tail -2 "$TMPD/md.err")"
	out=$("$VMLET" ctl "$SOCK" migrate "unix:$M")
	rc=$?
	wait "$SP"
	src_rc=$?
	((rc == 0 && src_rc == 0)) && [[ $out == *'"state":"completed"'* ]] &&
		grep -q "the guest arrived" "$TMPD/md.err" && grows "$TMPD/md.out" &&
		ok "tpm: {}: migrated live, the destination runs the guest on" ||
		fail "migrate: ctl $rc, source $src_rc: $out $(tail -3 "$TMPD/ms.err") $(tail -3 "$TMPD/md.err")"
	"$VMLET" ctl "$D" power-button >/dev/null
	wait "$DP"
	rc=$?
	((rc == 0)) && ok "migrated guest powers off (exit 0)" || fail "migrated: exit $rc $(tail -2 "$TMPD/md.err")"
fi
finish
