#!/usr/bin/env bash
# BIOS boot through Debian's SeaBIOS (vmm/boot/bios_boot.c, vmm/dev/fw_cfg.c):
# a VirtualMachine with firmware.bootloader.bios and two virtio hostDisks,
# the second holding our boot sector (tests/data/bios_mbr.S) and
# bootOrder 1, on 2 vCPUs. SeaBIOS must find fw_cfg, both CPUs and the
# virtio-blk disks on PCI, boot the disk the boot order names, and its boot
# sector must run (INT 10h text, an INT 13h read) and power off: exit 0.
# With useSerial the BIOS and the boot sector print on vmlet's console;
# without it nothing does (no display), the guest still powers off. QEMU
# q35 (-cpu qemu64) boots the same disk the same way (the oracle). A
# missing SeaBIOS image is an error naming the Debian package. `vmlet probe`
# on the VM boots the probe through SeaBIOS and must match.
source "$(dirname "$0")/../lib/sh.sh"

have_kvm || skip "no usable /dev/kvm"
command -v as >/dev/null && command -v ld >/dev/null || skip "no binutils"
[[ -f /usr/share/seabios/bios-microvm.bin ]] || skip "Debian's seabios is not installed"

as --32 -o "$TMPD/mbr.o" tests/data/bios_mbr.S &&
	ld -m elf_i386 -Ttext 0x7c00 --oformat binary -o "$TMPD/mbr.bin" "$TMPD/mbr.o" ||
	{ fail "cannot build the boot sector"; finish; }
{
	cat "$TMPD/mbr.bin"
	printf 'vmlet-mbr: sector 1 read through INT 13h\r\n\0' | dd bs=512 conv=sync 2>/dev/null
} >"$TMPD/boot.img"
truncate -s 1M "$TMPD/boot.img"
truncate -s 1M "$TMPD/blank.img" # no boot signature

# bios_yaml USESERIAL: the VM (disk 'blank' first, 'boot' with bootOrder 1)
bios_yaml() {
	cat <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: bios-test, namespace: default}
spec:
  runStrategy: Once
  template:
    spec:
      domain:
        memory: {guest: 128Mi}
        firmware:
          bootloader:
            bios: {useSerial: $1}
        devices:
          autoattachPodInterface: false
          disks:
          - {name: blank, disk: {bus: virtio}}
          - {name: boot, disk: {bus: virtio}, bootOrder: 1}
      volumes:
      - {name: blank, hostDisk: {path: $TMPD/blank.img, type: Disk}}
      - {name: boot, hostDisk: {path: $TMPD/boot.img, type: Disk}}
YAML
}
bios_yaml true >"$TMPD/serial.yaml"
bios_yaml false >"$TMPD/quiet.yaml"

# markers the console must show, in this order
want=("SeaBIOS (version" "Booting from Hard Disk..." "vmlet-mbr: boot sector runs"
	"vmlet-mbr: sector 1 read through INT 13h")
check_console() { # WHO FILE
	local m all=1
	for m in "${want[@]}"; do
		grep -aqF -- "$m" "$2" || { fail "$1: no '$m' on the console"; all=0; }
	done
	((all)) && ok "$1: SeaBIOS banner, boot from the disk, boot sector's INT 10h/13h output"
}

timeout 300 "$VMLET" run -f "$TMPD/serial.yaml" --smp 2 --log-level debug --log-format text \
	>"$TMPD/out" 2>"$TMPD/log"
rc=$?
((rc == 0)) && ok "vmlet: the boot sector powered the VM off (exit 0)" ||
	{ fail "vmlet exit $rc"; tail -n 30 "$TMPD/log" | sed 's/^/    /'; }
check_console vmlet "$TMPD/out"
# bootOrder on one disk only: SeaBIOS leaves the other alone (KubeVirt:
# disks without a bootOrder are not tried when one has it)
n=$n_fail
for m in "Found QEMU fw_cfg" "QEMU fw_cfg DMA interface supported" "Found 2 cpu(s)" \
	"1: /pci@i0cf8/disk@2" "skipping init of a non-bootable virtio-blk at 00:01.0" \
	"found virtio-blk at 00:02.0" "table(50434146)=" "Copying SMBIOS 3.0"; do
	grep -qF -- "$m" "$TMPD/log" || fail "SeaBIOS's log has no '$m'"
done
((n == n_fail)) &&
	ok "SeaBIOS's log (port 0x402): fw_cfg DMA, 2 CPUs, boot order, the disk, ACPI, SMBIOS"
grep -F "debugcon:" "$TMPD/log" | grep -E "Booting from 0000:7c00" >/dev/null &&
	ok "SeaBIOS handed control to the boot sector" || fail "no 'Booting from 0000:7c00'"

# useSerial false: no BIOS console, the boot still happens
timeout 300 "$VMLET" run -f "$TMPD/quiet.yaml" >"$TMPD/qout" 2>"$TMPD/qlog"
rc=$?
if ((rc == 0)) && ! grep -aq "SeaBIOS\|vmlet-mbr" "$TMPD/qout"; then
	ok "useSerial false: the guest boots and powers off, nothing on the console"
else
	fail "useSerial false: exit $rc, console: $(head -c 300 "$TMPD/qout")"
fi

# the sanitizer build through the whole fw_cfg path
if [[ -x $VMLET_SAN ]]; then
	timeout 300 "$VMLET_SAN" run -f "$TMPD/serial.yaml" >"$TMPD/sout" 2>"$TMPD/slog"
	rc=$?
	((rc == 0)) && grep -aqF "sector 1 read through INT 13h" "$TMPD/sout" &&
		ok "ASan/UBSan build boots it too" ||
		{ fail "ASan build: exit $rc"; tail -n 20 "$TMPD/slog" | sed 's/^/    /'; }
fi

# vmlet probe on this BIOS VM: the probe boots through SeaBIOS (QEMU's PVH
# option ROM as the boot device): it must see 2 sockets x 2 cores, RAM above
# 4 GiB and the ACPI tables through what SeaBIOS hands over
if [[ -f /usr/share/qemu/pvh.bin ]]; then
	timeout 300 "$VMLET" probe -f "$TMPD/serial.yaml" --smp 2,2,1 --memory 5Gi -o text \
		--log-level debug --log-format text >"$TMPD/probe" 2>"$TMPD/plog"
	rc=$?
	if ((rc == 0)) && grep -q '^match: yes' "$TMPD/probe" &&
		grep -q 'debugcon: Booting from ROM' "$TMPD/plog" &&
		grep -qE '^  biosVendor +SeaBIOS +SeaBIOS *$' "$TMPD/probe"; then
		ok "vmlet probe through SeaBIOS: match (2x2 vCPUs, 5 GiB, ACPI, SMBIOS type 0 SeaBIOS's)"
	else
		fail "probe through SeaBIOS: exit $rc"
		sed 's/^/    /' "$TMPD/probe"
		grep -v debugcon "$TMPD/plog" | tail -n 10 | sed 's/^/    /'
	fi
fi

# without any bootloader (BIOS by KubeVirt's default) the probe boots
# directly, saying so, and finds vmlet's own SMBIOS
grep -v -e 'firmware:' -e 'bootloader:' -e 'bios: {' "$TMPD/serial.yaml" >"$TMPD/default.yaml"
timeout 120 "$VMLET" probe -f "$TMPD/default.yaml" -o text >"$TMPD/dprobe" 2>"$TMPD/dlog"
rc=$?
((rc == 0)) && grep -q '^match: yes' "$TMPD/dprobe" && grep -qE '^  biosVendor +vmlet +vmlet *$' "$TMPD/dprobe" &&
	grep -q '^note: .*booted directly, not through SeaBIOS' "$TMPD/dprobe" &&
	ok "probe of a VM without bootloader: direct, says so: $(grep '^note: ' "$TMPD/dprobe")" ||
	{ fail "probe without bootloader: exit $rc"; cat "$TMPD/dprobe" "$TMPD/dlog" | sed 's/^/    /'; }

# a missing image: the error names the Debian package
VMLET_SEABIOS=$TMPD/none.bin timeout 60 "$VMLET" run -f "$TMPD/serial.yaml" >/dev/null \
	2>"$TMPD/elog"
rc=$?
((rc == 1)) && grep -q "'seabios' package" "$TMPD/elog" &&
	ok "no SeaBIOS image: exit 1 naming the 'seabios' package" ||
	fail "missing image: exit $rc: $(cat "$TMPD/elog")"

# the oracle: QEMU q35 with its SeaBIOS boots the same disks the same way
if command -v qemu-system-x86_64 >/dev/null; then
	timeout 300 qemu-system-x86_64 -M q35 -accel kvm -cpu qemu64 -smp 2 -m 128 -nodefaults \
		-no-user-config -nographic -serial stdio \
		-drive "file=$TMPD/blank.img,if=none,id=d0,format=raw" -device virtio-blk-pci,drive=d0 \
		-drive "file=$TMPD/boot.img,if=none,id=d1,format=raw" \
		-device virtio-blk-pci,drive=d1,bootindex=1 \
		-device isa-debug-exit,iobase=0xf4,iosize=4 </dev/null >"$TMPD/qemu" 2>&1
	rc=$?
	((rc == 33)) && ok "QEMU: the boot sector powered off (debug exit 0x10 -> 33)" ||
		fail "QEMU exit $rc"
	check_console QEMU "$TMPD/qemu"
fi
finish
