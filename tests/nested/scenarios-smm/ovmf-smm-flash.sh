# The variable flash of an SMM VM cannot be written from outside SMM, not
# even by the guest's kernel (issue 27 part 4; docs/firmware.md "SMM").
# Secure boot is off here, so that Linux is not locked down and root can
# reach the flash through /dev/mem (iomem=relaxed): the attack is the CFI
# block erase (0x20, then 0xd0) of the store's first block at the flash's
# base, 0xffc00000, which would wipe the firmware volume header ("_FVH" at
# 0x28 of the vars file). One signed disk (its binaries boot without secure
# boot too), three boots, each VM with its OVMF given by --firmware:
#   a  OVMF_CODE_4M.fd, no features.smm: the flash is plain, the erase lands
#      (the attack reproduced: vars-a.fd's header is gone)
#   b  features.smm, OVMF's SMM build OVMF_CODE_4M.secboot.fd: the erase is
#      refused (vmlet's log says so, vars-b.fd's header is intact) while a
#      variable Linux writes through efivarfs (the runtime services, which
#      call into SMM) lands in vars-b.fd
#   c  the same VM on vars-b.fd again: the variable is there, the header too
# The firmware is given with --firmware, so VMLET_OVMF_SMM=1 asks for SMM
# (the default for features.smm only with vmlet's own choice of OVMF image,
# docs/firmware.md "SMM"). Not in a default set (three OVMF boots, about 10
# minutes); QEMU's smm=on oracle in the same L1 is ovmf-qemu-smm. By hand:
#   tests/nested/run --l0 patched --scenarios tests/nested/scenarios-smm
SHAPE=${SHAPE:-1,2,1} MEM=512Mi TIMEBOX=800
host_prep() {
	local vm
	tests/efi/mkdisk.sh --signed "$L2_KERNEL" "$L2_INITRD" \
		"console=ttyS0 panic=-1 rdinit=/init nosoftlockup rcupdate.rcu_cpu_stall_suppress=1 iomem=relaxed nested.scn=$SCN" \
		"$SCN_DIR/disk.img" || return 1
	cp /usr/share/OVMF/OVMF_CODE_4M.fd /usr/share/OVMF/OVMF_CODE_4M.secboot.fd \
		/usr/share/OVMF/OVMF_VARS_4M.fd "$SCN_DIR/" || return 1
	vm=$(vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
          - {name: disk, disk: {bus: virtio}}" "      - {name: disk, hostDisk: {path: /scn/$SCN/disk.img, type: Disk}}")
	printf '%s\n' "$vm" | sed 's/^        cpu: /        firmware: {bootloader: {efi: {secureBoot: false}}}\n        cpu: /' \
		>"$SCN_DIR/plain.yaml"
	printf '%s\n' "$vm" |
		sed 's/^        cpu: /        features: {smm: {enabled: true}}\n        firmware: {bootloader: {efi: {secureBoot: false}}}\n        cpu: /' \
		>"$SCN_DIR/smm.yaml"
}
l1() {
	fvh() { dd if="$1" bs=1 skip=40 count=4 2>/dev/null; }
	run() { # MANIFEST CODE VARS
		VMLET_OVMF_SMM=1 timeout -s KILL 250 vmlet run -f "$D/$1.yaml" --firmware "$D/$2" --efi-vars "$D/$3" \
			--console stdio --log-format text
	}
	cp "$D/OVMF_VARS_4M.fd" "$D/vars-a.fd" && cp "$D/OVMF_VARS_4M.fd" "$D/vars-b.fd" || return
	echo "@R fvh-before $(fvh "$D/vars-a.fd")"
	run plain OVMF_CODE_4M.fd vars-a.fd 2>"$D/vmm-a.log"
	echo "@R fvh-a $(fvh "$D/vars-a.fd")"
	run smm OVMF_CODE_4M.secboot.fd vars-b.fd 2>"$D/vmm.log"
	echo "@R fvh-b $(fvh "$D/vars-b.fd")"
	echo "@R smm $(grep -o 'SMM on, the variable flash writable only from SMM' "$D/vmm.log" | head -n 1)"
	echo "@R refused $(grep -o 'pflash: a write to the variable flash from outside SMM was refused[^"]*' \
		"$D/vmm.log" | head -n 1)"
	run smm OVMF_CODE_4M.secboot.fd vars-b.fd 2>"$D/vmm-c.log"
	echo "@R fvh-c $(fvh "$D/vars-b.fd")"
}
l2() {
	mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
	rep lockdown "$(cat /sys/kernel/security/lockdown 2>/dev/null)"
	mod efivarfs
	mount -t efivarfs efivarfs /sys/firmware/efi/efivars || return
	t=/sys/firmware/efi/efivars/SmmNested-6e657374-6564-4c32-8e9f-0a1b2c3d4e5f
	if [ -e $t ]; then
		rep var-found "$(tail -c +5 $t)"
	else
		printf '\007\000\000\000kept-through-smm' >$t # NV|BS|RT, then the data
		rep var-written "$(tail -c +5 $t)"
	fi
	# the attack: erase the first block of the variable store from ring 0
	devmem 0xffc00000 8 0x20 && devmem 0xffc00000 8 0xd0
	rep attack "rc=$? status=$(devmem 0xffc00000 8)"
	devmem 0xffc00000 8 0xff
}
host_check() {
	local a
	a=$(rep attack | head -n 1)
	[[ $(rep fvh-before) == _FVH ]] || fail "the template has no _FVH at 0x28: '$(rep fvh-before)'"
	[[ $(rep lockdown | head -n 1) == *"[none]"* ]] && ok "Linux not locked down: $(rep lockdown | head -n 1)" ||
		fail "lockdown '$(rep lockdown | head -n 1)': /dev/mem is not the kernel's to use"
	[[ $a == rc=0* && $(rep fvh-a) != _FVH ]] &&
		ok "without SMM the kernel erased the store's first block through /dev/mem ($a; header now '$(rep fvh-a)')" ||
		fail "the attack without SMM did not land ($a, header '$(rep fvh-a)')"
	[[ $(rep smm) == "SMM on, the variable flash writable only from SMM" ]] &&
		ok "the second VM ran OVMF's SMM build with SMM" || fail "vmlet did not say SMM on"
	[[ $(rep fvh-b) == _FVH && $(rep fvh-c) == _FVH && -n $(rep refused) ]] &&
		ok "with SMM the same erase was refused: $(rep refused); header intact ($(rep attack | sed -n 2p))" ||
		fail "with SMM: header '$(rep fvh-b)'/'$(rep fvh-c)', refused '$(rep refused)'"
	[[ $(rep var-written | sed -n 2p) == kept-through-smm && $(rep var-found) == kept-through-smm ]] &&
		ok "a variable written through efivarfs under SMM was in the flash at the next boot" ||
		fail "variable: written '$(rep var-written | tr '\n' ' ')', found '$(rep var-found)'"
}
