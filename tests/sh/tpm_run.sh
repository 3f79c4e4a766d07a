#!/usr/bin/env bash
# devices.tpm (vmm/dev/tpm/, issue 27 part 2) with swtpm for real, under the
# default seccomp policy: the probe guest finds the TPM through the ACPI
# TPM2 table and drives it at CPL3 (TPM2_Startup, TPM2_GetRandom: the
# vCPU's MMIO, the worker thread, swtpm): the FIFO (TIS) for tpm: {} and the
# CRB for tpm.persistent, as KubeVirt's libvirt domains (tpm-tis, tpm-crb);
# tpm.persistent keeps the state in
# NAME.tpm beside the manifest, and a symbolic link planted there is
# refused without touching its target, and so is one made beforehand that
# is open to others or not vmlet's user's, and a hard link planted in it is
# not given to the unprivileged user; a missing swtpm is a clear error;
# swtpm killed while the guest runs stops the VM with a message naming it.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no usable /dev/kvm"
command -v swtpm >/dev/null || skip "no swtpm (Debian package swtpm)"

# tpm_vm NAME TPM-YAML STRATEGY: a manifest with that devices.tpm
tpm_vm() {
	vm_manifest "$1" 64Mi "${3:-Once}" | sed "s|^\(        devices:\)$|\1\n          tpm: $2|"
}

mkdir -p "$TMPD/a" "$TMPD/b" "$TMPD/c"
ELF=$TMPD/probe.elf
"$VMLET" probe --dump-guest "$ELF" || fail "vmlet probe --dump-guest"
tpm_vm tpma '{}' >"$TMPD/a/vm.yaml"
"$VMLET" probe -f "$TMPD/a/vm.yaml" -o json >"$TMPD/a.json" 2>"$TMPD/a.err"
rc=$?
grep -q '"tpm": *"tis 0x0 0x0 8"' "$TMPD/a.json" && ((rc == 0)) &&
	ok "tpm: {}: the guest ran TPM2_Startup and GetRandom through the TIS FIFO" ||
	fail "tpm: {}: exit $rc, $(grep -o '"tpm"[^,]*' "$TMPD/a.json" | head -2) $(tail -2 "$TMPD/a.err")"
((rc == 0)) && ! grep -q 'warning.*devices.tpm' "$TMPD/a.err" && ok "tpm: {} does not warn" ||
	fail "tpm: {} warns: $(grep 'devices.tpm' "$TMPD/a.err")"

tpm_vm tpmoff '{enabled: false}' >"$TMPD/a/off.yaml"
"$VMLET" probe -f "$TMPD/a/off.yaml" -o json >"$TMPD/off.json" 2>&1 &&
	! grep -q '"tpm"\|TPM2' "$TMPD/off.json" && ok "tpm.enabled false: no TPM, no TPM2 table" ||
	fail "tpm.enabled false: $(grep -o '"tpm"[^,]*\|TPM2' "$TMPD/off.json" | head -2)"

# persistent: the state directory beside the manifest, 0700, swtpm's file in it
tpm_vm tpmp '{persistent: true}' >"$TMPD/b/vm.yaml"
"$VMLET" probe -f "$TMPD/b/vm.yaml" -o json >"$TMPD/b.json" 2>"$TMPD/b.err" &&
	grep -q '"tpm": *"crb 0x0 0x0 8"' "$TMPD/b.json" &&
	[[ -s $TMPD/b/tpmp.tpm/tpm2-00.permall && $(stat -c %a "$TMPD/b/tpmp.tpm") == 700 ]] &&
	ok "tpm.persistent: the CRB, state in tpmp.tpm/ (0700)" ||
	fail "tpm.persistent: no state directory: $(ls -la "$TMPD/b" | tail -3) $(tail -2 "$TMPD/b.err")"
"$VMLET" probe -f "$TMPD/b/vm.yaml" >/dev/null 2>&1 &&
	ok "tpm.persistent: a second run starts from the kept state" || fail "tpm.persistent: second run"

# vmlet run as root: the state directory is given to the user vmlet and
# swtpm run as (65534), and a second run (as that user) goes on from it
if [[ $(id -u) == 0 ]]; then
	tpm_vm tpmu '{persistent: true}' >"$TMPD/b/u.yaml"
	for i in 1 2; do
		timeout 120 "$VMLET" run -f "$TMPD/b/u.yaml" --kernel "$ELF" --console "file:$TMPD/u$i.con" \
			>/dev/null 2>"$TMPD/u$i.err"
	done
	[[ $(stat -c %u "$TMPD/b/tpmu.tpm") == 65534 && $(stat -c %u "$TMPD/b/tpmu.tpm/tpm2-00.permall") == 65534 ]] &&
		grep -q '^tpm=crb 0x0 0x0 8' "$TMPD/u2.con" &&
		ok "vmlet run: the state is the unprivileged user's; a second run uses it" ||
		fail "run as 65534: $(stat -c '%u %n' "$TMPD/b/tpmu.tpm" "$TMPD/b/tpmu.tpm"/* 2>&1 | tr '\n' ' ') $(tail -2 "$TMPD/u2.err")"
fi

# the attack: NAME.tpm is a symbolic link to someone else's directory
mkdir -p "$TMPD/victim" && echo keep >"$TMPD/victim/file"
tpm_vm tpml '{persistent: true}' >"$TMPD/c/vm.yaml"
ln -s "$TMPD/victim" "$TMPD/c/tpml.tpm"
"$VMLET" probe -f "$TMPD/c/vm.yaml" >/dev/null 2>"$TMPD/c.err"
rc=$?
((rc != 0)) && grep -q 'TPM state directory.*not a directory' "$TMPD/c.err" &&
	[[ $(ls -A "$TMPD/victim") == file ]] &&
	ok "a symlink planted as NAME.tpm is refused, its target untouched" ||
	fail "planted NAME.tpm symlink: exit $rc, victim holds $(ls -A "$TMPD/victim" | tr '\n' ' '): $(tail -2 "$TMPD/c.err")"

# the attack: NAME.tpm made beforehand, open to others (world-writable: anyone
# chooses the state the guest's TPM starts from; readable: its seeds), or
# someone else's: refused before swtpm runs, nothing written in it
mkdir -p "$TMPD/d"
tpm_vm tpmw '{persistent: true}' >"$TMPD/d/vm.yaml"
mkdir -m 0777 "$TMPD/d/tpmw.tpm" && chmod 0777 "$TMPD/d/tpmw.tpm"
"$VMLET" probe -f "$TMPD/d/vm.yaml" >/dev/null 2>"$TMPD/d.err"
rc=$?
((rc != 0)) && grep -q 'TPM state directory.*must belong to this user' "$TMPD/d.err" &&
	[[ -z $(ls -A "$TMPD/d/tpmw.tpm") ]] &&
	ok "a world-writable NAME.tpm made beforehand is refused, nothing written in it" ||
	fail "world-writable NAME.tpm: exit $rc, it holds $(ls -A "$TMPD/d/tpmw.tpm" | tr '\n' ' '): $(tail -2 "$TMPD/d.err")"
if (($(id -u) == 0)); then
	tpm_vm tpmo '{persistent: true}' >"$TMPD/d/o.yaml"
	mkdir -m 0700 "$TMPD/d/tpmo.tpm" && chown 4242 "$TMPD/d/tpmo.tpm"
	"$VMLET" probe -f "$TMPD/d/o.yaml" >/dev/null 2>"$TMPD/o.err"
	rc=$?
	((rc != 0)) && grep -q 'TPM state directory.*must belong to this user' "$TMPD/o.err" &&
		[[ -z $(ls -A "$TMPD/d/tpmo.tpm") ]] &&
		ok "a NAME.tpm of another user is refused" ||
		fail "NAME.tpm of uid 4242: exit $rc: $(tail -2 "$TMPD/o.err")"
fi

# the attack: a hard link to a host file planted in the state directory
# (by whoever may write there: the user it was given to at an earlier
# run): vmlet run as root must not give the file to that user
if (($(id -u) == 0)); then
	tpm_vm tpmh '{persistent: true}' >"$TMPD/d/h.yaml"
	echo keep >"$TMPD/hostfile" && chmod 0600 "$TMPD/hostfile"
	mkdir -m 0700 "$TMPD/d/tpmh.tpm" && ln "$TMPD/hostfile" "$TMPD/d/tpmh.tpm/planted"
	timeout 120 "$VMLET" run -f "$TMPD/d/h.yaml" --kernel "$ELF" --console "file:$TMPD/h.con" \
		>/dev/null 2>"$TMPD/h.err"
	rc=$?
	((rc != 0)) && grep -q 'planted in the TPM state directory is not a file of swtpm' "$TMPD/h.err" &&
		[[ $(stat -c %u "$TMPD/hostfile") == 0 ]] &&
		ok "a hard link planted in NAME.tpm is refused, the linked file stays root's" ||
		fail "planted hard link: exit $rc, the host file is uid $(stat -c %u "$TMPD/hostfile"): $(tail -2 "$TMPD/h.err")"
fi

VMLET_SWTPM=/nonexistent/swtpm "$VMLET" probe -f "$TMPD/a/vm.yaml" >/dev/null 2>"$TMPD/n.err"
rc=$?
((rc != 0)) && grep -q "needs Debian's swtpm package" "$TMPD/n.err" &&
	ok "no swtpm: vmlet refuses to start, naming the package" ||
	fail "no swtpm: exit $rc: $(tail -2 "$TMPD/n.err")"

# without tpm.persistent the state lives as long as the VMI: through the
# guest's reboots (swtpm formats a new store once), not a new start
tpm_vm tpmr '{}' Always >"$TMPD/a/r.yaml"
: >"$TMPD/r.con"
"$VMLET" run -f "$TMPD/a/r.yaml" --kernel "$ELF" --cmdline vmlet.end=reboot \
	--console "file:$TMPD/r.con" >"$TMPD/r.out" 2>"$TMPD/r.err" &
pid=$!
for ((i = 0; i < 600; i++)); do
	(($(grep -c '^tpm=tis 0x0 0x0 8' "$TMPD/r.con") >= 3)) && break
	sleep 0.1
done
kill -TERM "$pid" 2>/dev/null
wait "$pid"
n=$(grep -c '^tpm=tis 0x0 0x0 8' "$TMPD/r.con")
f=$(grep -c 'as new linear NVRAM store' "$TMPD/r.err")
((n >= 3 && f == 1)) && ok "no tpm.persistent: one TPM state through $n boots (guest reboots)" ||
	fail "reboots: $n boots, swtpm formatted a new state $f times"

# swtpm killed under a running guest: the VM stops, the log says why (and
# swtpm ran as vmlet's unprivileged user)
tpm_vm tpmk '{}' Once >"$TMPD/a/k.yaml"
: >"$TMPD/k.con"
"$VMLET" run -f "$TMPD/a/k.yaml" --kernel "$ELF" --cmdline vmlet.end=hold \
	--console "file:$TMPD/k.con" >"$TMPD/k.out" 2>"$TMPD/k.err" &
pid=$!
if wait_log "$TMPD/k.con" '^tpm=tis 0x0 0x0 8' 300; then
	sw=$(pgrep -P "$pid" -x swtpm | head -1)
	# vmlet run as root switches to nobody (65534) once set up: swtpm too,
	# with no capabilities
	st=$(awk '$1 == "Uid:" { u = $2 } $1 == "CapEff:" { c = $2 } END { print u, c }' "/proc/$sw/status" 2>/dev/null)
	if [[ $(id -u) == 0 ]]; then
		[[ $st == "65534 0000000000000000" ]] && ok "swtpm runs as vmlet's user (65534), no capabilities" ||
			fail "swtpm's uid and capabilities: '$st'"
	fi
	# never kill an empty or wild pid
	if [[ $sw =~ ^[0-9]+$ ]] && ((sw > 1)); then
		kill -KILL "$sw"
		for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	fi
	kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid"; fail "vmlet still runs after swtpm died"; }
	wait "$pid"
	rc=$?
	[[ -n $sw ]] && ((rc != 0)) && grep -q 'swtpm was killed by signal 9: the VM stops' "$TMPD/k.err" &&
		ok "swtpm killed: the VM stopped (exit $rc) saying so" ||
		fail "swtpm killed: pid '$sw', exit $rc: $(tail -3 "$TMPD/k.err")"
else
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	fail "the held guest never reported its TPM: $(tail -3 "$TMPD/k.err")"
fi
finish
