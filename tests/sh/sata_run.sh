#!/usr/bin/env bash
# bus: sata runs (issue 22 part 1): the disk is a port of the ICH9 AHCI
# function (8086:2922, class 01/06/01) the probe guest finds on the bus;
# a read-only claim on SATA runs too (KubeVirt refuses disk.readonly on
# sata itself); a seventh SATA disk (by resolve -o config too) and bus scsi are refused before
# anything starts; the probe's polled AHCI bench driver (scripts/bench-blk's
# SATA rows) completes its queue-depth-1 and NCQ reads. A driver no one here wrote: SeaBIOS's AHCI driver (its
# q35 build, bios.bin: Debian's bios-microvm.bin that vmlet runs by default
# has no AHCI) finds the controller, identifies the disk (QEMU's model
# string), finds it in the bootorder vmlet wrote
# (/pci@i0cf8/pci8086,2922@SLOT/drive@0/disk@0, with HALT), boots its boot
# sector (tests/data/bios_mbr.S), which reads sector 1 through INT 13h and
# powers off. What a driver makes of every command is tests/unit/ahci_test.c's.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v python3 >/dev/null || skip "no python3"
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

vm sata '{name: d, serial: SATA-SER-1, disk: {bus: sata}}' '{name: d, emptyDisk: {capacity: 16Mi}}' \
	>"$TMPD/sata.yaml"
timeout 120 "$VMLET" probe -f "$TMPD/sata.yaml" -o json >"$TMPD/p.json" 2>"$TMPD/p.err"
rc=$?
((rc == 0)) && pci_has "$TMPD/p.json" 8086:2922 010601 &&
	timeout 60 "$VMLET" run -f "$TMPD/sata.yaml" --kernel "$TMPD/mode5.elf" >/dev/null \
		2>"$TMPD/run.err" &&
	grep -q "disk 'd': SATA on 00:0[0-9a-f].0 port 0 (raw, 16777216 bytes)" "$TMPD/run.err" &&
	ok "bus: sata: the guest finds the AHCI function, the disk is on port 0" ||
	fail "sata: exit $rc $(tail -3 "$TMPD/p.err" "$TMPD/run.err" 2>&1)"

# the probe's polled AHCI driver (firmware/probe/ahcibench.c, bench-blk's
# SATA rows): 8192 reads at queue depth 1 (READ DMA EXT) and 65536 NCQ reads
# with 32 slots (READ FPDMA QUEUED), every one completed without an error
for m in qd1 qd32; do
	timeout 120 "$VMLET" probe -f "$TMPD/sata.yaml" --cmdline "vmlet.satabench=$m" --show-console \
		>/dev/null 2>"$TMPD/bench.err"
	line=$(grep -a "^blkBench=" "$TMPD/bench.err")
	[[ $line =~ ^blkBench=00:[0-9a-f]{2}\.0\ $m\ (8192|65536)\ [0-9]+\ [1-9][0-9]*\ 0$ ]] &&
		ok "satabench $m: ${line#* }" || fail "satabench $m: '$line' $(grep -a '^error=' "$TMPD/bench.err")"
done

head -c 1048576 /dev/zero >"$TMPD/ro.img"
vm ro '{name: d, disk: {bus: sata, }}, {name: e, disk: {bus: virtio}}' \
	'{name: d, persistentVolumeClaim: {claimName: c, readOnly: true}}, {name: e, emptyDisk: {capacity: 1Mi}}' \
	>"$TMPD/ro.yaml"
timeout 60 "$VMLET" run -f "$TMPD/ro.yaml" --kernel "$TMPD/mode5.elf" --volume "d=$TMPD/ro.img" \
	>/dev/null 2>"$TMPD/ro.err"
rc=$?
((rc == 0)) && grep -q "disk 'd': SATA on .* read-only)" "$TMPD/ro.err" &&
	grep -q "disk 'e': virtio-blk on" "$TMPD/ro.err" &&
	ok "a read-only SATA disk next to a virtio one" ||
	fail "read-only sata: exit $rc $(tail -3 "$TMPD/ro.err")"

disks= vols=
for i in 1 2 3 4 5 6 7; do
	disks+="${disks:+, }{name: d$i, disk: {bus: sata}}"
	vols+="${vols:+, }{name: d$i, emptyDisk: {capacity: 1Mi}}"
done
vm seven "$disks" "$vols" >"$TMPD/seven.yaml"
timeout 60 "$VMLET" probe -f "$TMPD/seven.yaml" -o json >/dev/null 2>"$TMPD/seven.err"
rc=$?
((rc != 0)) && grep -q "disk 'd7': more than 6 SATA disks" "$TMPD/seven.err" &&
	ok "a seventh SATA disk is refused, naming it" || fail "seven: exit $rc $(tail -2 "$TMPD/seven.err")"
"$VMLET" resolve -f "$TMPD/seven.yaml" -o config >/dev/null 2>"$TMPD/seven.rerr"
rc=$?
((rc == 1)) && grep -qE "^$TMPD/seven.yaml:[0-9]+:[0-9]+: spec.template.spec.domain.devices.disks\[6\]: disk 'd7': more than 6 SATA disks" \
	"$TMPD/seven.rerr" && ok "...and by resolve -o config, as run refuses it (FILE:LINE:COL)" ||
	fail "seven, resolve -o config: exit $rc $(cat "$TMPD/seven.rerr")"

vm scsi '{name: d, disk: {bus: scsi}}' '{name: d, emptyDisk: {capacity: 1Mi}}' >"$TMPD/scsi.yaml"
timeout 60 "$VMLET" run -f "$TMPD/scsi.yaml" >/dev/null 2>"$TMPD/scsi.err"
rc=$?
((rc != 0)) && grep -q 'bus "scsi" is not supported' "$TMPD/scsi.err" &&
	ok "bus: scsi is still refused" || fail "scsi: exit $rc $(tail -2 "$TMPD/scsi.err")"

# SeaBIOS boots a SATA disk (bootOrder 1) next to a virtio one without
if [[ -f /usr/share/seabios/bios.bin ]] && command -v as >/dev/null && command -v ld >/dev/null; then
	as --32 -o "$TMPD/mbr.o" tests/data/bios_mbr.S &&
		ld -m elf_i386 -Ttext 0x7c00 --oformat binary -o "$TMPD/mbr.bin" "$TMPD/mbr.o" ||
		{ fail "cannot build the boot sector"; finish; }
	{
		cat "$TMPD/mbr.bin"
		printf 'vmlet-mbr: sector 1 read through INT 13h\r\n\0' | dd bs=512 conv=sync 2>/dev/null
	} >"$TMPD/boot.img"
	truncate -s 1M "$TMPD/boot.img" "$TMPD/blank.img"
	cat >"$TMPD/bios.yaml" <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: bios-sata, namespace: default}
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
          - {name: boot, serial: SATA-BOOT-1, disk: {bus: sata}, bootOrder: 1}
      volumes:
      - {name: blank, hostDisk: {path: $TMPD/blank.img, type: Disk}}
      - {name: boot, hostDisk: {path: $TMPD/boot.img, type: Disk}}
YAML
	VMLET_SEABIOS=/usr/share/seabios/bios.bin timeout 300 "$VMLET" run -f "$TMPD/bios.yaml" \
		--log-level debug --log-format text >"$TMPD/bios.out" 2>"$TMPD/bios.log"
	rc=$?
	((rc == 0)) && grep -aqF "vmlet-mbr: sector 1 read through INT 13h" "$TMPD/bios.out" &&
		ok "SeaBIOS booted the SATA disk; its boot sector read sector 1 (INT 13h)" ||
		fail "SeaBIOS SATA boot: exit $rc $(grep -a debugcon "$TMPD/bios.log" | tail -5)"
	for m in "1: /pci@i0cf8/pci8086,2922@" "AHCI controller at 00:" \
		'registering: "AHCI/0: QEMU HARDDISK ATA-7 Hard-Disk (1 MiBytes)"'; do
		grep -qF -- "$m" "$TMPD/bios.log" || fail "SeaBIOS's log has no '$m'"
	done
	# the oracle: QEMU q35 (its AHCI at 00:1f.2), its SeaBIOS, the same disk
	if command -v qemu-system-x86_64 >/dev/null; then
		timeout 300 qemu-system-x86_64 -M q35 -accel kvm -cpu qemu64 -m 128 -nodefaults \
			-no-user-config -nographic -serial stdio -debugcon "file:$TMPD/qemu.dbg" \
			-global isa-debugcon.iobase=0x402 \
			-drive "file=$TMPD/boot.img,if=none,id=d1,format=raw,snapshot=on" \
			-device ide-hd,drive=d1,bus=ide.0,serial=SATA-BOOT-1,bootindex=1 \
			-device isa-debug-exit,iobase=0xf4,iosize=4 </dev/null >"$TMPD/qemu" 2>&1
		q=$(grep -a 'registering: "AHCI/0' "$TMPD/qemu.dbg")
		v=$(grep -o 'registering: "AHCI/0.*' "$TMPD/bios.log")
		[[ -n $q && ${q#*registering} == "${v#*registering}" ]] &&
			grep -aqF "vmlet-mbr: sector 1 read through INT 13h" "$TMPD/qemu" &&
			ok "QEMU q35 boots the same disk; SeaBIOS names both alike: ${q#*registering: }" ||
			fail "QEMU: '$q' vs vmlet: '$v'"
	fi
else
	echo "skip: SeaBIOS's AHCI boot (no /usr/share/seabios/bios.bin or binutils)"
fi
finish
