#!/usr/bin/env bash
# Snapshot and restore (vmm/snapshot/, docs/snapshot.md) with the tiny
# guest that prints "x" on COM1 until the power button is pressed: a
# snapshot with --resume leaves it running; one with --stop ends vmlet
# with 0 and leaves DIR/state and a sparse DIR/memory; `run --restore`
# continues the guest where it stopped (it goes on printing and powers
# off on the button, exit 0), twice from the same files; a snapshot of a
# paused guest keeps it paused; its output says "not frozen (no agent)"
# (the tiny guest runs no agent). Refused with a clear error and exit 1:
# a restore whose options give another config, a state file cut short or
# with a flipped byte, a memory file cut short, a directory without
# snapshot. A VM with a busless (SATA, AHCI) disk driven by the probe
# is snapshotted and restored; a restore onto its disk written since is
# refused. With passt, the probe with an e1000e pod interface is
# snapshotted (--resume, then --stop) and restored.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
tiny_guests 8
SOCK=$TMPD/api.sock
G=$TMPD/mode8.elf

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
# the guest prints: the count of x grows
grows() {
	local a b
	a=$(xs "$1"); sleep 0.3; b=$(xs "$1")
	((b > a))
}

if start "$TMPD/out1" "$TMPD/err1"; then
	sout=$("$VMLET" ctl "$SOCK" snapshot "$TMPD/s0" --resume) && [[ -f $TMPD/s0/state ]] &&
		grows "$TMPD/out1" && [[ $sout == *'"not frozen (no agent)"'* ]] &&
		ok "snapshot --resume: files written, the guest runs on, not frozen (no agent)" ||
		fail "snapshot --resume: '${sout:-}' $(tail -3 "$TMPD/err1")"
	# links planted in an existing snapshot folder are replaced, not followed
	mkdir -p "$TMPD/s2" && echo victim >"$TMPD/victim" && echo victim >"$TMPD/victim2"
	ln -s "$TMPD/victim" "$TMPD/s2/memory" && ln "$TMPD/victim2" "$TMPD/s2/state.partial"
	"$VMLET" ctl "$SOCK" snapshot "$TMPD/s2" --resume >/dev/null &&
		[[ $(cat "$TMPD/victim" "$TMPD/victim2") == $'victim\nvictim' && ! -L $TMPD/s2/memory ]] &&
		ok "links planted in the snapshot folder: replaced, their targets intact" ||
		fail "planted links: victim '$(head -c 20 "$TMPD/victim")' '$(head -c 20 "$TMPD/victim2")'"
	"$VMLET" ctl "$SOCK" pause
	"$VMLET" ctl "$SOCK" snapshot "$TMPD/s1" --resume &&
		"$VMLET" ctl -o text "$SOCK" status | grep -q '^state: Paused$' &&
		ok "snapshot of a paused guest: still paused" || fail "snapshot while paused"
	"$VMLET" ctl "$SOCK" resume
	"$VMLET" ctl "$SOCK" snapshot "$TMPD/snap" --stop && ok "snapshot --stop accepted" ||
		fail "snapshot --stop: $(tail -3 "$TMPD/err1")"
	wait "$PID"
	rc=$?
	((rc == 0)) && ok "vmlet ended with 0 after --stop" || fail "exit $rc after --stop"
	[[ -f $TMPD/snap/state && ! -e $TMPD/snap/state.partial ]] && ok "state file complete" ||
		fail "state file: $(ls "$TMPD/snap")"
	size=$(stat -c %s "$TMPD/snap/memory")
	used=$(($(stat -c %b "$TMPD/snap/memory") * 512))
	((size >= 64 << 20 && used < size / 8)) && ok "memory file sparse ($used of $size bytes)" ||
		fail "memory file: $used of $size bytes allocated"
fi

# restore, twice from the same snapshot: the guest prints on and powers off
for n in 1 2; do
	if start "$TMPD/rout$n" "$TMPD/rerr$n" --restore "$TMPD/snap"; then
		grep -q "restore: the guest continues" "$TMPD/rerr$n" && grows "$TMPD/rout$n" &&
			! grep -q "tiny-guest: up" "$TMPD/rout$n" &&
			ok "restore $n: the guest continues (no new boot)" ||
			fail "restore $n: $(tail -3 "$TMPD/rerr$n")"
		"$VMLET" ctl "$SOCK" power-button
		wait "$PID"
		rc=$?
		((rc == 0)) && grep -q "guest entered S5" "$TMPD/rerr$n" &&
			ok "restore $n: powers off on the button (exit 0)" ||
			fail "restore $n: exit $rc: $(tail -3 "$TMPD/rerr$n")"
	fi
done

# the snapshot of the guest the user had paused (s1) restores paused: it
# prints nothing until `ctl resume`, then goes on
if [[ -f $TMPD/s1/state ]]; then
	rm -f "$SOCK"
	"$VMLET" run --kernel "$G" --api-socket "$SOCK" --log-format text --restore "$TMPD/s1" \
		>"$TMPD/pzout" 2>"$TMPD/pzerr" &
	PID=$!
	wait_log "$TMPD/pzerr" "arrived paused" 200
	a=$(xs "$TMPD/pzout"); sleep 0.5; b=$(xs "$TMPD/pzout")
	st=$("$VMLET" ctl -o text "$SOCK" status 2>&1 | grep '^state:')
	[[ $st == "state: Paused" ]] && ((a == b)) &&
		ok "restore of a paused guest's snapshot: paused, the guest does not run" ||
		fail "paused restore: '$st', $a then $b x: $(tail -3 "$TMPD/pzerr")"
	"$VMLET" ctl "$SOCK" resume >/dev/null
	grows "$TMPD/pzout" && ok "paused restore: runs on after ctl resume" ||
		fail "paused restore did not run after resume: $(tail -3 "$TMPD/pzerr")"
	"$VMLET" ctl "$SOCK" power-button >/dev/null
	wait "$PID" || fail "paused restore: exit $?"
fi

refused() { # WHAT ERE ARGS...: run --restore must fail with a message
	local what=$1 ere=$2; shift 2
	timeout 60 "$VMLET" run --kernel "$G" --log-format text "$@" >"$TMPD/o" 2>"$TMPD/e"
	local rc=$?
	((rc == 1)) && grep -qE -- "$ere" "$TMPD/e" && ok "refused: $what" ||
		fail "$what: exit $rc: $(tail -2 "$TMPD/e")"
}
refused "another memory size" "bytes of memory" --memory 96M --restore "$TMPD/snap"
refused "another config (--cmdline)" "another config" --cmdline other --restore "$TMPD/snap"
cp -r "$TMPD/snap" "$TMPD/cut"
truncate -s 1000 "$TMPD/cut/state"
refused "a truncated state file" "state: .*(truncated|past the end)" --restore "$TMPD/cut"
cp "$TMPD/snap/state" "$TMPD/cut/state"
python3 - "$TMPD/cut/state" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x20
open(p, "wb").write(b)
PY
refused "a flipped byte" "checksum mismatch" --restore "$TMPD/cut"
cp "$TMPD/snap/state" "$TMPD/cut/state"
truncate -s 4096 "$TMPD/cut/memory"
refused "a memory file cut short" "outside memory" --restore "$TMPD/cut"
mkdir -p "$TMPD/empty"
refused "no snapshot in the directory" "restore: .*state" --restore "$TMPD/empty"

# started virtio devices: the probe guest (its report done, it waits for
# the power button) with a virtio disk, virtio-rng and (with passt) the pod
# network's virtio-net it drove; restored,
# it powers off on the button; a restore after the disk was written to
# (touched) is refused, naming the disk
PROBE=build/fw/probe.elf
if [[ -f $PROBE ]]; then
	truncate -s 4M "$TMPD/pdisk.img"
	# with passt, the pod network's virtio-net too (DHCP, ARP, ping by the probe)
	nic=false
	command -v passt >/dev/null && nic=true
	vm_manifest pvm 128Mi Once d="$TMPD/pdisk.img" |
		sed "s/autoattachPodInterface: false/autoattachPodInterface: $nic\\n          rng: {}/" >"$TMPD/pvm.yaml"
	pstart() { # OUT ERR ARGS...
		local out=$1 err=$2; shift 2
		rm -f "$SOCK"
		"$VMLET" run -f "${PYAML:-$TMPD/pvm.yaml}" --kernel "$PROBE" \
			--cmdline "${PCMD:-vmlet.end=button}" \
			--api-socket "$SOCK" --log-format text "$@" >"$out" 2>"$err" &
		PID=$!
		for _ in $(seq 600); do
			[[ -S $SOCK ]] && { [[ $# -gt 0 ]] || grep -q VMLET-PROBE-END "$out"; } && return 0
			kill -0 "$PID" 2>/dev/null || break
			sleep 0.05
		done
		fail "probe did not start: $(tail -2 "$err")"
		kill -KILL "$PID" 2>/dev/null
		return 1
	}
	if pstart "$TMPD/pout" "$TMPD/perr"; then
		grep -q "^disk=" "$TMPD/pout" && grep -q "^rng=.* ok" "$TMPD/pout" && ! grep -q "^error=" "$TMPD/pout" &&
			{ ! $nic || grep -q "^nic=.* ok " "$TMPD/pout"; } ||
			fail "probe report: $(grep -E '^(disk|rng|nic|error)=' "$TMPD/pout")"
		# --resume first: the devices' threads are held, then go on
		"$VMLET" ctl "$SOCK" snapshot "$TMPD/presume" --resume && kill -0 "$PID" &&
			"$VMLET" ctl -o text "$SOCK" status | grep -q '^state: Running$' &&
			ok "probe: snapshot --resume with started devices, it runs on" ||
			fail "probe snapshot --resume: $(tail -3 "$TMPD/perr")"
		"$VMLET" ctl "$SOCK" snapshot "$TMPD/psnap" --stop
		wait "$PID"
		rc=$?
		((rc == 0)) && ok "probe with started virtio-blk, virtio-rng (virtio-net: $nic): snapshot --stop" ||
			fail "probe snapshot: exit $rc: $(tail -3 "$TMPD/perr")"
	fi
	if pstart "$TMPD/pout2" "$TMPD/perr2" --restore "$TMPD/psnap"; then
		sleep 0.3
		"$VMLET" ctl "$SOCK" power-button
		wait "$PID"
		rc=$?
		((rc == 0)) && grep -q "guest entered S5" "$TMPD/perr2" &&
			ok "probe restored: powers off on the button" ||
			fail "probe restore: exit $rc: $(tail -3 "$TMPD/perr2")"
	fi
	# an e1000e pod interface (the windows.* preferences' NIC; the probe
	# does not drive it): its I/O thread is held for the snapshot and lets
	# go after --resume, its registers are saved and loaded back
	if $nic; then
		{
			vm_manifest e1k 128Mi Once | sed '/autoattachPodInterface/d'
			printf '          interfaces:\n          - {name: default, masquerade: {}, model: e1000e}\n'
			printf '      networks:\n      - {name: default, pod: {}}\n'
		} >"$TMPD/e1k.yaml"
		if PYAML=$TMPD/e1k.yaml pstart "$TMPD/eout" "$TMPD/eerr"; then
			"$VMLET" ctl "$SOCK" snapshot "$TMPD/eres" --resume >/dev/null &&
				"$VMLET" ctl "$SOCK" snapshot "$TMPD/esnap" --stop >/dev/null
			wait "$PID"
			rc=$?
			((rc == 0)) && grep -q "e1000e (82574L)" "$TMPD/eerr" &&
				ok "probe with an e1000e NIC: snapshot --resume, then --stop" ||
				fail "e1000e snapshot: exit $rc: $(tail -3 "$TMPD/eerr")"
		fi
		if PYAML=$TMPD/e1k.yaml pstart "$TMPD/eout2" "$TMPD/eerr2" --restore "$TMPD/esnap"; then
			sleep 0.3
			"$VMLET" ctl "$SOCK" power-button
			wait "$PID"
			rc=$?
			((rc == 0)) && grep -q "guest entered S5" "$TMPD/eerr2" &&
				ok "probe with an e1000e NIC restored: powers off on the button" ||
				fail "e1000e restore: exit $rc: $(tail -3 "$TMPD/eerr2")"
		fi
	fi
	# from the snapshot alone (no -f): the manifests it recorded are resolved
	# again under this command line; the hostDisk they name is outside every
	# root, so it needs the operator's --volume (without it: refused)
	rm -f "$SOCK" "$TMPD/pyaml-gone"
	mv "$TMPD/pvm.yaml" "$TMPD/pyaml-gone"
	"$VMLET" run --kernel "$PROBE" --cmdline vmlet.end=button --api-socket "$SOCK" \
		--log-format text --volume d="$TMPD/pdisk.img" --restore "$TMPD/psnap" \
		>"$TMPD/pout3" 2>"$TMPD/perr3" &
	PID=$!
	wait_log "$TMPD/perr3" "restore: the guest continues" 200
	sleep 0.3
	"$VMLET" ctl "$SOCK" power-button >/dev/null
	wait "$PID"
	rc=$?
	((rc == 0)) && grep -q "resolving the 1 manifest text" "$TMPD/perr3" &&
		grep -q "guest entered S5" "$TMPD/perr3" &&
		ok "probe restored from the snapshot alone (its manifests, --volume): powers off on the button" ||
		fail "restore alone: exit $rc: $(tail -3 "$TMPD/perr3")"
	timeout 60 "$VMLET" run --kernel "$PROBE" --cmdline vmlet.end=button --restore "$TMPD/psnap" \
		--log-format text >/dev/null 2>"$TMPD/e"
	rc=$?
	((rc == 1)) && grep -q "give volume 'd' the host file .*outside the roots" "$TMPD/e" &&
		! grep -q "the guest continues" "$TMPD/e" &&
		ok "refused: the snapshot's manifests name a disk outside the command line's roots" ||
		fail "restore alone without --volume: exit $rc: $(tail -2 "$TMPD/e")"
	mv "$TMPD/pyaml-gone" "$TMPD/pvm.yaml"
	touch "$TMPD/pdisk.img"
	timeout 60 "$VMLET" run -f "$TMPD/pvm.yaml" --kernel "$PROBE" --cmdline vmlet.end=button \
		--restore "$TMPD/psnap" --log-format text >/dev/null 2>"$TMPD/e"
	rc=$?
	((rc == 1)) && grep -q "disk 'd' is not the disk of the snapshot" "$TMPD/e" &&
		ok "refused: the disk was written since" || fail "disk check: exit $rc: $(tail -2 "$TMPD/e")"
else
	fail "no $PROBE (make)"
fi

# a BIOS VM (SeaBIOS, fw_cfg; no bootable disk: SeaBIOS keeps trying):
# snapshot --stop, restored it runs on (no crash) until stopped
vm_manifest bios 64Mi Once >"$TMPD/bios.yaml"
rm -f "$SOCK"
"$VMLET" run -f "$TMPD/bios.yaml" --api-socket "$SOCK" --grace-period 1 --log-format text \
	>/dev/null 2>"$TMPD/berr" &
PID=$!
wait_log "$TMPD/berr" "ctl: listening" 300 && sleep 1
"$VMLET" ctl "$SOCK" snapshot "$TMPD/bsnap" --stop
wait "$PID"
rc=$?
((rc == 0)) && ok "BIOS VM (fw_cfg): snapshot --stop" || fail "BIOS snapshot: exit $rc: $(tail -2 "$TMPD/berr")"
rm -f "$SOCK"
"$VMLET" run -f "$TMPD/bios.yaml" --api-socket "$SOCK" --grace-period 1 --log-format text \
	--restore "$TMPD/bsnap" >/dev/null 2>"$TMPD/berr2" &
PID=$!
wait_log "$TMPD/berr2" "restore: the guest continues" 300 && sleep 1
state=$("$VMLET" ctl -o text "$SOCK" status | sed -n 's/^state: //p')
"$VMLET" ctl "$SOCK" stop
wait "$PID"
rc=$?
[[ $state == Running ]] && ((rc == 5)) && ok "BIOS VM restored: runs on, stopped after the grace period" ||
	fail "BIOS restore: state '$state', exit $rc: $(tail -2 "$TMPD/berr2")"

# a disk without a bus is SATA (AHCI): the probe's polled AHCI driver
# (vmlet.satabench=qd1: port set up, 8192 READ DMA EXT) done, the probe
# waits for the button; snapshot --stop, restored it powers off on the
# button; a restore after the disk was written to is refused, naming it
if [[ -f $PROBE ]]; then
	truncate -s 4M "$TMPD/sata.img"
	vm_manifest sata 128Mi Once >"$TMPD/sata.yaml"
	cat >>"$TMPD/sata.yaml" <<'YAMLEND'
          disks:
          - {name: d}
      volumes:
      - {name: d, hostDisk: {path: SATA_IMG, type: Disk}}
YAMLEND
	sed -i "s|SATA_IMG|$TMPD/sata.img|" "$TMPD/sata.yaml"
	PYAML=$TMPD/sata.yaml PCMD="vmlet.satabench=qd1 vmlet.end=button"
	if pstart "$TMPD/out3" "$TMPD/err3"; then
		grep -q "SATA on" "$TMPD/err3" && grep -aq "^blkBench=.* qd1 8192 .* 0$" "$TMPD/out3" ||
			fail "sata probe: $(grep -a -E '^(blkBench|error)=' "$TMPD/out3")"
		"$VMLET" ctl "$SOCK" snapshot "$TMPD/s3" --stop 2>"$TMPD/cerr"
		wait "$PID"
		rc=$?
		((rc == 0)) && [[ -f $TMPD/s3/state ]] && ok "SATA (busless disk, AHCI, port started): snapshot --stop" ||
			fail "AHCI snapshot: exit $rc: $(tail -2 "$TMPD/err3" "$TMPD/cerr")"
	fi
	if [[ -f $TMPD/s3/state ]] && pstart "$TMPD/out4" "$TMPD/err4" --restore "$TMPD/s3"; then
		sleep 0.3
		"$VMLET" ctl "$SOCK" power-button
		wait "$PID"
		rc=$?
		((rc == 0)) && grep -q "guest entered S5" "$TMPD/err4" &&
			ok "SATA VM restored: powers off on the button" ||
			fail "SATA restore: exit $rc: $(tail -3 "$TMPD/err4")"
		touch "$TMPD/sata.img"
		timeout 60 "$VMLET" run -f "$TMPD/sata.yaml" --kernel "$PROBE" \
			--cmdline "vmlet.satabench=qd1 vmlet.end=button" --restore "$TMPD/s3" \
			--log-format text >/dev/null 2>"$TMPD/e"
		rc=$?
		((rc == 1)) && grep -q "disk 'd' is not the disk of the snapshot" "$TMPD/e" &&
			ok "refused: the SATA disk was written since" ||
			fail "SATA disk check: exit $rc: $(tail -2 "$TMPD/e")"
	fi
fi
finish
