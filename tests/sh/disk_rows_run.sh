#!/usr/bin/env bash
# Every disk row of docs/fields.md run, not only resolved (issue 22): one VM
# per kind, what `run` attaches checked in its log and what the guest finds
# on the bus checked by the probe.
# - disk with bus virtio: a virtio-blk function; bus sata: a port of the AHCI
#   controller (8086:2922);
# - disk without a bus (an empty disk target, no target at all, a volume
#   without a disks entry): SATA, KubeVirt's amd64 default
#   (pkg/defaults/amd64.go), with no warning; a preference's
#   preferredDiskBus still decides first;
# - disk without a bus and readonly: refused by resolve -o config and run
#   with KubeVirt's error (its VMI webhook checks the bus it defaulted);
# - a BIOS VM boots a disk without a bus through the default SeaBIOS image,
#   which is then the q35 build with its AHCI driver (bios.bin).
# The cdrom rows are run by cdrom_run.sh (sata, and without a bus), lun and
# cdrom on scsi (refused) by fields_rows_run.sh.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v python3 >/dev/null || skip "no python3"
tiny_guests 5

vm() { # NAME DISKS VOLUMES [SPEC-LINES]
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: %s, namespace: default}\n' "$1"
	printf 'spec:\n  runStrategy: Once\n%s  template:\n    spec:\n      domain:\n' "${4:-}"
	printf '        memory: {guest: 64Mi}\n        devices:\n'
	printf '          autoattachPodInterface: false\n'
	[[ -z $2 ]] || printf '          disks: [%s]\n' "$2"
	printf '      volumes: [%s]\n' "$3"
}
VOL='{name: d, emptyDisk: {capacity: 16Mi}}'
SATA_LOG="disk 'd': SATA on 00:0[0-9a-f].0 port 0 (raw, 16777216 bytes)"
VIRTIO_LOG="disk 'd': virtio-blk on 00:0[0-9a-f].0"

# run_kind LABEL YAML LOG-ERE PCI-ID...: run (the tiny guest) logs LOG-ERE and
# no warning about the bus; the probe guest finds each PCI function
# (VENDOR:DEVICE, or !VENDOR:DEVICE: not there)
run_kind() {
	local label=$1 y=$2 ere=$3 rc id want
	shift 3
	timeout 60 "$VMLET" run -f "$y" --kernel "$TMPD/mode5.elf" >/dev/null 2>"$TMPD/run.err"
	rc=$?
	if ((rc != 0)) || ! grep -q "$ere" "$TMPD/run.err" || grep -qi "warning.*bus" "$TMPD/run.err"; then
		fail "$label: run exit $rc, $(grep -i "disk 'd'\|bus" "$TMPD/run.err" | tail -3)"
		return
	fi
	timeout 120 "$VMLET" probe -f "$y" -o json >"$TMPD/p.json" 2>"$TMPD/p.err" ||
		{ fail "$label: probe: $(tail -2 "$TMPD/p.err")"; return; }
	for id; do
		want=True
		[[ $id == !* ]] && want=False id=${id#!}
		[[ $(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
v, dev = sys.argv[2].split(":")
print(any(p["vendor"] == v and p["device"] == dev for p in d["guest"]["pci"]))' "$TMPD/p.json" "$id") == "$want" ]] ||
			{ fail "$label: the guest's PCI functions: $(python3 -c 'import json, sys
print([p["vendor"] + ":" + p["device"] for p in json.load(open(sys.argv[1]))["guest"]["pci"]])' "$TMPD/p.json"), want ${want/False/no }$id"; return; }
	done
	ok "$label: $(grep -o "$ere" "$TMPD/run.err" | head -n 1)"
}

vm virtio '{name: d, disk: {bus: virtio}}' "$VOL" >"$TMPD/virtio.yaml"
run_kind "disk, bus virtio" "$TMPD/virtio.yaml" "$VIRTIO_LOG" 1af4:1042 '!8086:2922'
vm sata '{name: d, disk: {bus: sata}}' "$VOL" >"$TMPD/sata.yaml"
run_kind "disk, bus sata" "$TMPD/sata.yaml" "$SATA_LOG" 8086:2922 '!1af4:1042'
vm empty '{name: d, disk: {}}' "$VOL" >"$TMPD/empty.yaml"
run_kind "disk without a bus: SATA" "$TMPD/empty.yaml" "$SATA_LOG" 8086:2922 '!1af4:1042'
vm notarget '{name: d}' "$VOL" >"$TMPD/notarget.yaml"
run_kind "disk without a target: SATA" "$TMPD/notarget.yaml" "$SATA_LOG" 8086:2922 '!1af4:1042'
vm nodisks '' "$VOL" >"$TMPD/nodisks.yaml"
run_kind "volume without a disk: SATA" "$TMPD/nodisks.yaml" "$SATA_LOG" 8086:2922 '!1af4:1042'
{
	vm pref '{name: d}' "$VOL" '  preference: {kind: VirtualMachinePreference, name: p}
'
	printf -- '---\napiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachinePreference\n'
	printf 'metadata: {name: p, namespace: default}\nspec:\n  devices: {preferredDiskBus: virtio}\n'
} >"$TMPD/pref.yaml"
run_kind "disk without a bus, preferredDiskBus virtio" "$TMPD/pref.yaml" "$VIRTIO_LOG" 1af4:1042 '!8086:2922'

# read-only without a bus: SATA, which KubeVirt refuses read-only
vm ro '{name: d, disk: {readonly: true}}' "$VOL" >"$TMPD/ro.yaml"
"$VMLET" resolve -f "$TMPD/ro.yaml" -o config >/dev/null 2>"$TMPD/err"
rc=$?
timeout 60 "$VMLET" run -f "$TMPD/ro.yaml" --kernel "$TMPD/mode5.elf" >"$TMPD/out" 2>"$TMPD/err2"
rc2=$?
want="^$TMPD/ro.yaml:12:[0-9]+: spec.template.spec.domain.devices.disks\\[0\\].disk.bus: sata hard-disks do not support read-only"
((rc == 1 && rc2 == 1)) && grep -qE "$want" "$TMPD/err" && grep -qE "$want" "$TMPD/err2" && [[ ! -s $TMPD/out ]] &&
	ok "disk without a bus, readonly: KubeVirt's error from resolve -o config and run" ||
	fail "readonly without a bus: exit $rc/$rc2, $(cat "$TMPD/err") / $(tail -2 "$TMPD/err2")"

# SeaBIOS boots a disk without a bus (SATA) with no VMLET_SEABIOS
if [[ -f /usr/share/seabios/bios.bin ]] && command -v as >/dev/null && command -v ld >/dev/null; then
	as --32 -o "$TMPD/mbr.o" tests/data/bios_mbr.S &&
		ld -m elf_i386 -Ttext 0x7c00 --oformat binary -o "$TMPD/mbr.bin" "$TMPD/mbr.o" ||
		{ fail "cannot build the boot sector"; finish; }
	{
		cat "$TMPD/mbr.bin"
		printf 'vmlet-mbr: sector 1 read through INT 13h\r\n\0' | dd bs=512 conv=sync 2>/dev/null
	} >"$TMPD/boot.img"
	truncate -s 1M "$TMPD/boot.img"
	vm bios '{name: boot}' "{name: boot, hostDisk: {path: $TMPD/boot.img, type: Disk}}" |
		sed 's/^        memory: .*/        memory: {guest: 128Mi}\n        firmware: {bootloader: {bios: {useSerial: true}}}/' \
			>"$TMPD/bios.yaml"
	(
		unset VMLET_SEABIOS
		timeout 300 "$VMLET" run -f "$TMPD/bios.yaml" --log-format text >"$TMPD/bios.out" 2>"$TMPD/bios.log"
	)
	rc=$?
	((rc == 0)) && grep -aqF "vmlet-mbr: sector 1 read through INT 13h" "$TMPD/bios.out" &&
		grep -qF "bios: booting /usr/share/seabios/bios.bin" "$TMPD/bios.log" &&
		ok "BIOS: SeaBIOS's q35 build booted the disk without a bus (SATA)" ||
		fail "BIOS boot of a disk without a bus: exit $rc, $(grep -a 'bios:\|SATA' "$TMPD/bios.log" | tail -3)"
else
	echo "skip: the BIOS boot (no /usr/share/seabios/bios.bin or binutils)"
fi
finish
