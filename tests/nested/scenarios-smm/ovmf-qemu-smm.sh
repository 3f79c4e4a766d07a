# The oracle of SMM secure boot (issue 27 part 4; scenarios-smm, not in a
# default set): ovmf-qemu with OVMF's SMM build as KubeVirt runs it, QEMU
# -M q35,smm=on with the pflash secure=on. Passed in L1 under the patched
# L0: 676 s for the two boots (ovmf-qemu without SMM: 214 s). It is
# ovmf-qemu otherwise: QEMU -enable-kvm (this host's QEMU, in the
# same L1, on the same kvm_amd) with OVMF_CODE_4M.secboot.fd, a copy of the
# same OVMF_VARS_4M.ms.fd as its flash variables and the same disk (q35,
# pflash, virtio-blk), run twice on one vars file as vmlet is: the signed
# chain boots to userspace with secure boot on, the variable the first
# boot writes is there in the second, the power-off ends QEMU with 0. Its
# L2 dmesg is what ovmf-secureboot's is compared with (check.py: a kernel
# complaint under vmlet passes only if QEMU's L2 shows it too).
VMM=qemu SHAPE=${SHAPE:-1,2,1} MEM=512Mi TIMEBOX=500
host_prep() {
	tests/efi/mkdisk.sh --signed "$L2_KERNEL" "$L2_INITRD" \
		"console=ttyS0 panic=-1 rdinit=/init nosoftlockup rcupdate.rcu_cpu_stall_suppress=1 nested.scn=$SCN" \
		"$SCN_DIR/disk.img" || return 1
	cp /usr/share/OVMF/OVMF_CODE_4M.secboot.fd /usr/share/OVMF/OVMF_VARS_4M.ms.fd "$SCN_DIR/" || return 1
	# (the manifest only gives QEMU the shape and memory: qemu.smp, qemu.mem)
	vm_yaml "$SCN" "$SHAPE" "$MEM" >"$SCN_DIR/vm.yaml"
}
ovmf_qemu_run() {
	timeout -s KILL "${TIMEBOX:-150}" /d/sys/qemu -L /d/sys/share -enable-kvm -cpu host -M q35,smm=on \
		-global driver=cfi.pflash01,property=secure,value=on \
		-smp "$(cat "$D/qemu.smp")" -m "$(cat "$D/qemu.mem")" \
		-nodefaults -no-user-config -nographic -display none -no-reboot -serial stdio \
		-drive "if=pflash,format=raw,readonly=on,file=$D/OVMF_CODE_4M.secboot.fd" \
		-drive "if=pflash,format=raw,file=$D/vars.fd" \
		-drive "if=none,id=d0,file=$D/disk.img,format=raw" \
		-device virtio-blk-pci,drive=d0,disable-legacy=on
}
l1() {
	cp "$D/OVMF_VARS_4M.ms.fd" "$D/vars.fd" || return 1
	ovmf_qemu_run 2>"$D/vmm.log" || return
	ovmf_qemu_run 2>"$D/vmm2.log"
}
l2() {
	fw=/sys/firmware/efi
	rep efi "platform=$(cat $fw/fw_platform_size 2>/dev/null) runtime-map=$(ls $fw/runtime-map 2>/dev/null | wc -l)"
	rep cmdline "$(cat /proc/cmdline)"
	rep sbdmesg "$(dmesg | grep -o 'Secure boot [a-z]*' | head -n 1)"
	rep bios "$(cat /sys/class/dmi/id/bios_vendor)"
	mod efivarfs
	mount -t efivarfs efivarfs $fw/efivars || return
	rep sbvar "$(tail -c +5 $fw/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c | od -An -tu1 | tr -d ' ')"
	t=$fw/efivars/OvmfNested-6e657374-6564-4c32-8e9f-0a1b2c3d4e5f
	if [ -e $t ]; then
		rep var-found "$(tail -c +5 $t)"
	else
		printf '\007\000\000\000kept-in-flash' >$t # NV|BS|RT, then the data
		rep var-written "$(tail -c +5 $t)"
	fi
}
host_check() {
	r1() { rep "$1" | head -n 1; }
	[[ $(r1 cmdline) == "BOOT_IMAGE=/vmlinuz "*"nested.scn=$SCN"* ]] &&
		ok "QEMU: signed GRUB booted the signed kernel" || fail "QEMU: command line '$(r1 cmdline)'"
	[[ $(r1 efi) == "platform=64 runtime-map="[1-9]* ]] && ok "QEMU: EFI: $(r1 efi)" ||
		fail "QEMU: EFI: '$(r1 efi)'"
	[[ $(r1 sbvar) == 1 && $(r1 sbdmesg) == "Secure boot enabled" ]] &&
		ok "QEMU: secure boot on: SecureBoot=1, '$(r1 sbdmesg)'" ||
		fail "QEMU: secure boot: SecureBoot='$(r1 sbvar)' dmesg '$(r1 sbdmesg)'"
	[[ $(r1 bios) == *"EFI Development Kit II"* || $(r1 bios) == EDK* ]] &&
		ok "QEMU: the firmware is OVMF: $(r1 bios)" || fail "QEMU: BIOS vendor '$(r1 bios)'"
	[[ $(rep var-written) == kept-in-flash && $(rep var-found) == kept-in-flash ]] &&
		ok "QEMU: a variable written in the first run was there in the second" ||
		fail "QEMU: variable across runs: written '$(rep var-written)', found '$(rep var-found)'"
}
