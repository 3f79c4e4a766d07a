#!/usr/bin/env bash
# vmlet's own UEFI reads SATA disks (firmware/efi/sata.c over the polled
# driver of firmware/lib/ahci.c, against vmlet's ICH9 AHCI): an EFI VM whose
# only disk has no bus (KubeVirt's default: SATA) boots tests/efi/testapp.c
# from its ESP (PASS) through PciRoot/Pci/Sata(0), with no "cannot boot"
# warning; and bootOrder picks the disk across buses and ports (the
# firmware asks the VMM where each disk is: FW_ABI_EFI_BOOT_LOCS), each
# case checked by the device path the app reports it was loaded from.
source "$(dirname "$0")/../lib/sh.sh"
source tests/efi/lib.sh

have_kvm || skip "no usable /dev/kvm"
[[ -z $(efi_tools) ]] || skip "$(efi_tools)"
tests/efi/build-efi.sh tests/efi/testapp.c "$TMPD/testapp.efi" || exit 1
tests/efi/mkesp.sh "$TMPD/testapp.efi" "$TMPD/a.img"
cp "$TMPD/a.img" "$TMPD/b.img"
cp "$TMPD/a.img" "$TMPD/c.img"

# run_efi NAME EFI_VM_YAML_ARGS...: boots; sets $dp (boot.dp= of the app)
run_efi() {
	local name=$1
	shift
	efi_vm_yaml "$name" "$@" >"$TMPD/$name.yaml"
	timeout 120 "$VMLET" run -f "$TMPD/$name.yaml" --console "file:$TMPD/$name.out" \
		>"$TMPD/$name.log" 2>&1
	rc=$?
	dp=$(grep -a '^boot.dp=' "$TMPD/$name.out" 2>/dev/null | tr -d '\r' | head -n1)
	dp=${dp#boot.dp=}
	if ((rc != 0)) || ! grep -q '^VMLET-EFI-TEST: PASS' "$TMPD/$name.out" 2>/dev/null; then
		sed 's/^/    /' "$TMPD/$name.out" "$TMPD/$name.log" 2>/dev/null | tail -n 30
		return 1
	fi
}

# 1. the busless disk: SATA, and the firmware boots it
if run_efi busless disk=esp:"$TMPD/a.img" bus=esp:none; then
	ok "a busless-disk EFI VM boots its ESP (boot.dp=$dp)"
else
	fail "a busless-disk EFI VM did not boot (exit $rc)"
fi
[[ $dp == */Sata\(0\)/HD\(1\) ]] && ok "loaded from Sata(0)" || fail "device path '$dp', want .../Sata(0)/HD(1)"
grep -q '^efi: sata 00:[0-9a-f]*\.0 port 0: 10 MiB' "$TMPD/busless.out" &&
	ok "the firmware found the disk on the AHCI function (10 MiB)" ||
	fail "no 'efi: sata ... port 0: 10 MiB' line"
grep -q 'cannot boot from it' "$TMPD/busless.log" &&
	fail "vmlet still warns that the firmware cannot boot a SATA disk" ||
	ok "no warning for a SATA disk"

# 2. bootOrder across buses and ports: virtio a, SATA b (port 0), SATA c (port 1)
disks=(disk=a:"$TMPD/a.img":A disk=b:"$TMPD/b.img":B disk=c:"$TMPD/c.img":C bus=b:sata bus=c:sata)
for want in c b a; do
	case $want in
	a) args=("${disks[@]//:A/:1}") && args=("${args[@]//:B/:2}") && args=("${args[@]//:C/:3}") ;;
	b) args=("${disks[@]//:A/:3}") && args=("${args[@]//:B/:1}") && args=("${args[@]//:C/:2}") ;;
	c) args=("${disks[@]//:A/:2}") && args=("${args[@]//:B/:3}") && args=("${args[@]//:C/:1}") ;;
	esac
	if ! run_efi "order-$want" "${args[@]}"; then
		fail "bootOrder first '$want': the VM did not boot (exit $rc)"
		continue
	fi
	case $want in
	a) [[ $dp == */Pci\(*\)/HD\(1\) && $dp != *Sata* ]] ;;
	b) [[ $dp == */Sata\(0\)/HD\(1\) ]] ;;
	c) [[ $dp == */Sata\(1\)/HD\(1\) ]] ;;
	esac && ok "bootOrder 1 on disk '$want' boots it ($dp)" ||
		fail "bootOrder 1 on disk '$want' booted $dp"
done
finish
