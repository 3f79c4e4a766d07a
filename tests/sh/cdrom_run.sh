#!/usr/bin/env bash
# cdrom disks run (issue 22 item 2): an ATAPI CD-ROM drive on a port of the
# ICH9 AHCI function (8086:2922) the probe guest finds, one VM per volume
# kind a CD takes (hostDisk ISO, containerDisk ISO under --disk-root, a
# claim given with --volume, cloudInitConfigDrive) and an empty drive (no
# volume); tray: open runs; bus virtio (KubeVirt's admission), bus scsi and
# lun are refused before anything starts. A driver no one here wrote:
# SeaBIOS's AHCI/ATAPI driver (bios.bin, its q35 build) identifies the
# drive, finds it in the bootorder vmlet wrote (bootOrder 1, ahead of a
# virtio disk) and boots the ISO through El Torito (an ISO made by xorriso
# with tests/data/bios_cd.S as its no-emulation boot image), whose code
# reads the volume descriptor through INT 13h (READ(10) on the drive); QEMU
# q35 with the same ISO on ide-cd is the oracle: SeaBIOS must name both
# drives alike and boot both. bootOrder across a SATA disk, the CD and a
# virtio disk gives SeaBIOS the bootorder QEMU gives it for the same
# devices (the controller's slot aside). What a driver makes of every
# command is tests/unit/atapi_test.c's.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v python3 >/dev/null || skip "no python3"
command -v xorriso >/dev/null || skip "no xorriso"
tiny_guests 5

vm() { # NAME DISKS VOLUMES
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: %s, namespace: default}\n' "$1"
	printf 'spec:\n  runStrategy: Once\n  template:\n    spec:\n      domain:\n'
	printf '        memory: {guest: 64Mi}\n        devices:\n'
	printf '          autoattachPodInterface: false\n          disks: [%s]\n' "$2"
	printf '      volumes: [%s]\n' "$3"
}
pci_has() { # FILE VENDOR:DEVICE CLASS
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
want = sys.argv[2].split(":")
sys.exit(0 if any(p["vendor"] == want[0] and p["device"] == want[1] and p["class"] == sys.argv[3]
                  for p in d["guest"]["pci"]) else 1)' "$@"
}

# the ISO: the boot image, a file, volume id VMLET_CD_TEST
mkdir -p "$TMPD/iso"
as --32 -o "$TMPD/cd.o" tests/data/bios_cd.S &&
	ld -m elf_i386 -Ttext 0x7c00 --oformat binary -o "$TMPD/iso/boot.bin" "$TMPD/cd.o" ||
	{ fail "cannot build the boot image"; finish; }
echo "a file on the CD" >"$TMPD/iso/hello.txt"
xorriso -as mkisofs -V VMLET_CD_TEST -b boot.bin -no-emul-boot -boot-load-size 4 \
	-o "$TMPD/cd.iso" "$TMPD/iso" >/dev/null 2>&1 || { fail "xorriso"; finish; }
size=$(stat -c %s "$TMPD/cd.iso")

vm host '{name: cd, cdrom: {}}' "{name: cd, hostDisk: {path: $TMPD/cd.iso, type: Disk}}" \
	>"$TMPD/host.yaml"
timeout 120 "$VMLET" probe -f "$TMPD/host.yaml" -o json >"$TMPD/p.json" 2>"$TMPD/p.err"
rc=$?
((rc == 0)) && pci_has "$TMPD/p.json" 8086:2922 010601 &&
	timeout 60 "$VMLET" run -f "$TMPD/host.yaml" --kernel "$TMPD/mode5.elf" >/dev/null \
		2>"$TMPD/run.err" &&
	grep -q "disk 'cd': CD-ROM (SATA) on 00:0[0-9a-f].0 port 0 (raw, $size bytes, read-only)" \
		"$TMPD/run.err" &&
	ok "cdrom (no bus: sata) from a hostDisk ISO: the guest finds the AHCI function" ||
	fail "hostDisk cdrom: exit $rc $(tail -3 "$TMPD/p.err" "$TMPD/run.err" 2>&1)"

run_ok() { # WHAT YAML LOG-PATTERN [ARGS...]
	local what=$1 yaml=$2 pat=$3
	shift 3
	timeout 60 "$VMLET" run -f "$yaml" --kernel "$TMPD/mode5.elf" "$@" >/dev/null 2>"$TMPD/r.err"
	local rc=$?
	((rc == 0)) && grep -q -- "$pat" "$TMPD/r.err" && ok "$what" ||
		fail "$what: exit $rc $(tail -3 "$TMPD/r.err")"
}

mkdir -p "$TMPD/root/cd/disk" && cp "$TMPD/cd.iso" "$TMPD/root/cd/disk/cd.iso"
vm cdisk '{name: cd, cdrom: {bus: sata}}' '{name: cd, containerDisk: {image: cd-img}}' \
	>"$TMPD/cdisk.yaml"
run_ok "cdrom from a containerDisk ISO (read-only, no overlay)" "$TMPD/cdisk.yaml" \
	"disk 'cd': CD-ROM (SATA) on .* port 0 (raw, $size bytes, read-only)" \
	--disk-root "$TMPD/root"

vm pvc '{name: d, disk: {bus: virtio}}, {name: cd, cdrom: {readonly: false}}' \
	'{name: d, emptyDisk: {capacity: 1Mi}}, {name: cd, persistentVolumeClaim: {claimName: c}}' \
	>"$TMPD/pvc.yaml"
run_ok "cdrom from a claim (--volume), readonly: false, next to a virtio disk" "$TMPD/pvc.yaml" \
	"disk 'cd': CD-ROM (SATA) on .* port 0 (raw, $size bytes, read-only)" \
	--volume "cd=$TMPD/cd.iso"

vm ci '{name: cd, cdrom: {tray: open}}, {name: ci, cdrom: {}}' \
	"{name: cd, hostDisk: {path: $TMPD/cd.iso, type: Disk}}, {name: ci, cloudInitConfigDrive: {userData: \"#cloud-config\\\\n\"}}" \
	>"$TMPD/ci.yaml"
run_ok "cloudInitConfigDrive on a cdrom, and a drive with its tray open" "$TMPD/ci.yaml" \
	"disk 'ci': CD-ROM (SATA) on .* port 1 (raw, .* read-only)"
grep -q "disk 'cd': CD-ROM (SATA) on .* port 0 (.*, tray open)" "$TMPD/r.err" ||
	fail "tray open: $(grep "disk 'cd'" "$TMPD/r.err")"

vm empty '{name: cd, cdrom: {}}' '' >"$TMPD/empty.yaml"
run_ok "an empty CD-ROM drive (no volume)" "$TMPD/empty.yaml" \
	"disk 'cd': CD-ROM (SATA) on .* port 0, no medium"

refused() { # WHAT DISK VOLUME MESSAGE
	vm refused "$2" "$3" >"$TMPD/ref.yaml"
	timeout 60 "$VMLET" run -f "$TMPD/ref.yaml" --kernel "$TMPD/mode5.elf" >/dev/null \
		2>"$TMPD/ref.err"
	local rc=$?
	((rc != 0)) && grep -qF -- "$4" "$TMPD/ref.err" && ! grep -q "CD-ROM (SATA) on" "$TMPD/ref.err" &&
		ok "$1 is refused" || fail "$1: exit $rc $(tail -2 "$TMPD/ref.err")"
}
iso="{name: cd, hostDisk: {path: $TMPD/cd.iso, type: Disk}}"
refused "cdrom on bus virtio" '{name: cd, cdrom: {bus: virtio}}' "$iso" \
	"Bus type virtio is invalid for CD-ROM device"
refused "cdrom on bus scsi" '{name: cd, cdrom: {bus: scsi}}' "$iso" \
	'a CD-ROM on bus "scsi" is not supported'
refused "a lun" '{name: cd, lun: {}}' '{name: cd, persistentVolumeClaim: {claimName: c}}' \
	"vmlet has no SCSI LUN"

# SeaBIOS boots the CD (bootOrder 1) next to a virtio disk without
if [[ -f /usr/share/seabios/bios.bin ]]; then
	truncate -s 1M "$TMPD/blank.img"
	cat >"$TMPD/bios.yaml" <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: bios-cd, namespace: default}
spec:
  runStrategy: Once
  template:
    spec:
      domain:
        memory: {guest: 128Mi}
        firmware:
          bootloader:
            bios: {useSerial: true}
        devices:
          autoattachPodInterface: false
          disks:
          - {name: blank, disk: {bus: virtio}}
          - {name: cd, cdrom: {bus: sata}, bootOrder: 1}
      volumes:
      - {name: blank, hostDisk: {path: $TMPD/blank.img, type: Disk}}
      - {name: cd, hostDisk: {path: $TMPD/cd.iso, type: Disk}}
YAML
	VMLET_SEABIOS=/usr/share/seabios/bios.bin timeout 300 "$VMLET" run -f "$TMPD/bios.yaml" \
		--log-level debug --log-format text >"$TMPD/bios.out" 2>"$TMPD/bios.log"
	rc=$?
	want="vmlet-cd: the volume descriptor read through INT 13"
	((rc == 0)) && grep -aqF "$want" "$TMPD/bios.out" &&
		grep -aq "^VMLET_CD_TEST *|" "$TMPD/bios.out" &&
		ok "SeaBIOS booted the ISO from the CD (El Torito); its code read the volume descriptor" ||
		fail "SeaBIOS CD boot: exit $rc $(grep -a debugcon "$TMPD/bios.log" | tail -5)"
	for m in "1: /pci@i0cf8/pci8086,2922@" "AHCI controller at 00:" "Booting from DVD/CD..." \
		'registering: "DVD/CD [AHCI/0: QEMU DVD-ROM ATAPI-4 DVD/CD]"'; do
		grep -qF -- "$m" "$TMPD/bios.log" || fail "SeaBIOS's log has no '$m'"
	done
	# the oracle: QEMU q35 (its AHCI at 00:1f.2), its SeaBIOS, the same ISO
	if command -v qemu-system-x86_64 >/dev/null; then
		timeout 300 qemu-system-x86_64 -M q35 -accel kvm -cpu qemu64 -m 128 -nodefaults \
			-no-user-config -nographic -serial stdio -debugcon "file:$TMPD/qemu.dbg" \
			-global isa-debugcon.iobase=0x402 \
			-drive "file=$TMPD/cd.iso,if=none,id=cd,format=raw,readonly=on,media=cdrom" \
			-device ide-cd,drive=cd,bus=ide.0,bootindex=1 \
			-device isa-debug-exit,iobase=0xf4,iosize=4 </dev/null >"$TMPD/qemu" 2>&1
		q=$(grep -a 'registering: "DVD/CD' "$TMPD/qemu.dbg")
		v=$(grep -o 'registering: "DVD/CD.*' "$TMPD/bios.log")
		[[ -n $q && ${q#*registering} == "${v#*registering}" ]] &&
			grep -aqF "$want" "$TMPD/qemu" && grep -aqF "Booting from DVD/CD..." "$TMPD/qemu.dbg" &&
			ok "QEMU q35 boots the same ISO; SeaBIOS names both drives alike: ${q#*registering: }" ||
			fail "QEMU: '$q' vs vmlet: '$v'"
	fi
	# bootOrder across a SATA disk (2, port 0), the CD (1, port 1) and a
	# virtio disk without: the bootorder SeaBIOS reads is QEMU's for the
	# same devices (ide-hd on ide.0, ide-cd on ide.1, -boot strict=on as
	# libvirt gives it), the controller's slot aside; the CD boots
	sed -e 's/- {name: cd, cdrom: {bus: sata}, bootOrder: 1}/- {name: hd, disk: {bus: sata}, bootOrder: 2}\
          - {name: cd, cdrom: {bus: sata}, bootOrder: 1}/' \
		-e 's/- {name: cd, hostDisk:/- {name: hd, hostDisk: {path: BLANK2, type: Disk}}\
      - {name: cd, hostDisk:/' -e "s#BLANK2#$TMPD/blank2.img#" "$TMPD/bios.yaml" >"$TMPD/order.yaml"
	truncate -s 1M "$TMPD/blank2.img"
	VMLET_SEABIOS=/usr/share/seabios/bios.bin timeout 300 "$VMLET" run -f "$TMPD/order.yaml" \
		--log-level debug --log-format text >"$TMPD/order.out" 2>"$TMPD/order.log"
	rc=$?
	order() { # the "boot order:" list of a SeaBIOS log, the AHCI slot as S
		sed -n 's/^\(vmlet: debugcon: \)\?\([0-9]*: .*\)$/\2/p' "$1" | tr -d '\r' |
			sed 's/pci8086,2922@[0-9a-f,]*/pci8086,2922@S/' | grep -v '^[0-9]*: $'
	}
	order "$TMPD/order.log" >"$TMPD/order.v"
	((rc == 0)) && grep -aqF "$want" "$TMPD/order.out" &&
		[[ $(head -1 "$TMPD/order.v") == "1: /pci@i0cf8/pci8086,2922@S/drive@1/disk@0" ]] &&
		ok "bootOrder: the CD on port 1 ahead of the SATA disk on port 0; SeaBIOS boots the CD" ||
		fail "bootOrder: exit $rc, $(tr '\n' ' ' <"$TMPD/order.v")"
	if command -v qemu-system-x86_64 >/dev/null; then
		timeout 300 qemu-system-x86_64 -M q35 -accel kvm -cpu qemu64 -m 128 -nodefaults \
			-no-user-config -nographic -serial stdio -debugcon "file:$TMPD/qorder.dbg" \
			-global isa-debugcon.iobase=0x402 -boot strict=on \
			-drive "file=$TMPD/blank.img,if=none,id=v,format=raw,snapshot=on" \
			-device virtio-blk-pci,drive=v \
			-drive "file=$TMPD/blank2.img,if=none,id=hd,format=raw,snapshot=on" \
			-device ide-hd,drive=hd,bus=ide.0,bootindex=2 \
			-drive "file=$TMPD/cd.iso,if=none,id=cd,format=raw,readonly=on,media=cdrom" \
			-device ide-cd,drive=cd,bus=ide.1,bootindex=1 \
			-device isa-debug-exit,iobase=0xf4,iosize=4 </dev/null >"$TMPD/qorder" 2>&1
		order "$TMPD/qorder.dbg" >"$TMPD/order.q"
		[[ -s $TMPD/order.q ]] && cmp -s "$TMPD/order.q" "$TMPD/order.v" &&
			grep -aqF "$want" "$TMPD/qorder" &&
			ok "QEMU's bootorder for the same devices is vmlet's: $(tr '\n' ' ' <"$TMPD/order.q")" ||
			fail "bootorder: QEMU '$(tr '\n' ' ' <"$TMPD/order.q")' vmlet '$(tr '\n' ' ' <"$TMPD/order.v")'"
	fi
else
	echo "skip: SeaBIOS's CD boot (no /usr/share/seabios/bios.bin)"
fi
finish
