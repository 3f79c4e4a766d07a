# Snapshot and restore of a secure-boot VM with SMM (issue 24, h29;
# docs/snapshot.md): OVMF's SMM build (OVMF_CODE_4M.secboot.fd, VARS
# .ms.fd), features.smm, secureBoot on, booting the signed shim -> GRUB ->
# kernel disk of tests/efi/mkdisk.sh. L2 reports secure boot on and then
# counts in a tmpfs file with its uptime, as scenarios/snapshot.sh; L1
# takes a snapshot with --stop after a few counts (vmlet exits 0), then
# restores it: the counter goes on from the file's value, uptime does not
# go backwards, no clocksource/lockup/stall line is logged after the first
# count, and the guest powers off on the power button. The variable store
# is the default one (no efi.persistent: made anew from the template for
# each run), so the restore's store takes the snapshot's bytes. Then a
# restore with --efi-vars naming another store (a copy of the template)
# must be refused before the guest runs ("not the variable store of the
# snapshot"). At count 9 (after the restore: the snapshot follows count 6
# within a poll) the guest writes an EFI variable through efivarfs: the
# runtime services raise an SMI and OVMF's SMM variable driver programs the
# flash, which only code in SMM may write, so SMRAM, SMBASE, the SMI
# registers and the flash came back usable; L1 finds the bytes in the
# restored run's variable store. By hand, with the patched L0 (README "OVMF scenarios"):
#   tests/nested/run --l0 patched --scenarios tests/nested/scenarios-smm \
#     --only ovmf-smm-snapshot
SHAPE=${SHAPE:-1,2,1} MEM=512Mi TIMEBOX=900 L2_END=pwrbtn_wait
host_prep() {
	tests/efi/mkdisk.sh --signed "$L2_KERNEL" "$L2_INITRD" \
		"console=ttyS0 panic=-1 rdinit=/init nosoftlockup rcupdate.rcu_cpu_stall_suppress=1 nested.scn=$SCN" \
		"$SCN_DIR/disk.img" || return 1
	cp /usr/share/OVMF/OVMF_CODE_4M.secboot.fd /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$SCN_DIR/" || return 1
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: disk, disk: {bus: virtio}}" "      - {name: disk, hostDisk: {path: /scn/$SCN/disk.img, type: Disk}}" |
		sed 's/^        cpu: /        features: {smm: {enabled: true}}\n        firmware: {bootloader: {efi: {secureBoot: true}}}\n        cpu: /' \
			>"$SCN_DIR/vm.yaml"
}
l1() {
	sock=/tmp/api.sock
	smm_run() {
		VMLET_OVMF_CODE=$D/OVMF_CODE_4M.secboot.fd VMLET_OVMF_VARS=$D/OVMF_VARS_4M.ms.fd VMLET_OVMF_SMM=1 \
			timeout -s KILL "$TIMEBOX" vmlet run -f "$D/vm.yaml" --console stdio --log-format text "$@"
	}
	rm -rf /tmp/snap "$sock"
	: >/tmp/con1
	smm_run --api-socket "$sock" >/tmp/con1 2>"$D/vmm.log" &
	vmpid=$!
	n=0
	while ! grep -q '@R count 6 ' /tmp/con1 && kill -0 $vmpid 2>/dev/null && [ $n -lt 4000 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	vmlet ctl "$sock" snapshot /tmp/snap --stop
	echo "@R snapshot-rc $?"
	wait $vmpid
	echo "@R first-exit $?"
	echo "@R smm $(grep -o 'SMM on, the variable flash writable only from SMM' "$D/vmm.log" | head -n 1)"
	grep -o 'snapshot: [a-z].*' "$D/vmm.log" | sed 's/^/@R snaplog /'
	cp "$D/vmm.log" "$D/vmm-snapshot.log"
	echo "@R snapshot-bytes $(du -k /tmp/snap/memory | cut -f1)k-used $(wc -c </tmp/snap/state)"
	sleep 2
	rm -f "$sock"
	: >/tmp/con2
	smm_run --api-socket "$sock" --restore /tmp/snap >>/tmp/con2 2>"$D/vmm-restore.log" &
	vmpid=$!
	n=0
	while [ "$(grep -c '@R count ' /tmp/con2)" -lt 4 ] && kill -0 $vmpid 2>/dev/null &&
		[ $n -lt 3000 ]; do
		sleep 0.2
		n=$((n + 1))
	done
	vmlet ctl "$sock" power-button || kill $vmpid
	wait $vmpid
	rc=$?
	grep -o 'restore: .*' "$D/vmm-restore.log" | head -n 3 | sed 's/^/@R restorelog /'
	cp "$D/OVMF_VARS_4M.ms.fd" "$D/other-vars.fd"
	smm_run --restore /tmp/snap --efi-vars "$D/other-vars.fd" >/dev/null 2>"$D/vmm-other.log"
	echo "@R other-rc $?"
	echo "@R other $(grep -o 'is not the variable store of the snapshot' "$D/vmm-other.log" | head -n 1)"
	echo "@R var-in-store $(grep -la 'written-after-restore' "$D"/*.fd "$D"/*vars* 2>/dev/null | head -n 1)"
	sed 's/^/@1/' /tmp/con1 | grep '^@1@R ' | sed 's/^@1//'
	echo "@R restored"
	grep '^@R ' /tmp/con2
	return $rc
}
l2() {
	fw=/sys/firmware/efi
	rep sbdmesg "$(dmesg | grep -o 'Secure boot [a-z]*' | head -n 1)"
	mod efivarfs
	mount -t efivarfs efivarfs $fw/efivars
	(
		n=0
		while :; do
			[ -f /tmp/counter ] && n=$(cat /tmp/counter)
			n=$((n + 1))
			echo $n >/tmp/counter
			bad=$(dmesg | grep -ciE 'clocksource|soft lockup|watchdog|hung task|rcu.*stall|unstable|backwards')
			echo "@R count $n $(cut -d' ' -f1 /proc/uptime) $bad"
			if [ $n = 9 ]; then
				t=$fw/efivars/SmmSnap-6e657374-6564-4c32-8e9f-0a1b2c3d4e5f
				printf '\007\000\000\000written-after-restore' >$t
				echo "@R var-written rc=$? $(tail -c +5 $t)"
			fi
			sleep 0.5
		done
	) &
}
host_check() {
	local before after
	[[ $(rep sbdmesg | head -n 1) == "Secure boot enabled" ]] && ok "secure boot on: $(rep sbdmesg | head -n 1)" ||
		fail "secure boot: '$(rep sbdmesg | head -n 1)'"
	[[ $(rep smm) == "SMM on, the variable flash writable only from SMM" ]] &&
		ok "the VM ran OVMF's SMM build with SMM" || fail "vmlet did not say SMM on"
	[[ $(rep snapshot-rc) == 0 && $(rep first-exit) == 0 ]] &&
		ok "snapshot --stop of the SMM VM: vmlet exited 0 ($(rep snapshot-bytes))" ||
		fail "snapshot: ctl $(rep snapshot-rc), vmlet exit $(rep first-exit): $(rep snaplog | tr '\n' ';')"
	before=$(sed -n '/^restored/q; s/^count //p' "$R" | tail -n 1)
	after=$(sed -n '/^restored/,$ s/^count //p' "$R" | head -n 1)
	[[ -n $before && -n $after && ${after%% *} == $((${before%% *} + 1)) ]] &&
		ok "the counter goes on after the restore: $before -> $after" ||
		fail "counter before the snapshot '$before', after the restore '$after' ($(rep restorelog | tr '\n' ';'))"
	python3 - "$R" <<'PY' && ok "uptime monotonic across the restore, no clock complaints" ||
import sys
ups, bad = [], set()
for line in open(sys.argv[1], errors="replace"):
    f = line.split()
    if len(f) == 4 and f[0] == "count":
        ups.append(float(f[2]))
        bad.add(int(f[3]))
assert len(ups) >= 8, ups
assert all(b > a for a, b in zip(ups, ups[1:])), ups
assert len(bad) == 1, bad
PY
		fail "uptime or dmesg after the restore: $(grep '^count' "$R" | tr '\n' ';')"
	rep power-button | grep -q . && ok "the restored guest powered off on the button" ||
		fail "no power button in the restored guest"
	[[ $(sed -n '/^restored/,$ s/^var-written //p' "$R") == "rc=0 written-after-restore" &&
		-n $(rep var-in-store) ]] &&
		ok "after the restore an EFI variable went through SMM into the flash ($(rep var-in-store))" ||
		fail "variable after the restore: '$(rep var-written)', in the store: '$(rep var-in-store)'"
	[[ $(rep other-rc) != 0 && $(rep other) == "is not the variable store of the snapshot" ]] &&
		ok "a restore onto another variable store is refused (exit $(rep other-rc))" ||
		fail "restore onto another store: exit $(rep other-rc), '$(rep other)'"
}
