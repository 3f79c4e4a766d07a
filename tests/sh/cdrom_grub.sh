#!/usr/bin/env bash
# Boot from CD with images no one here wrote (issue 22 item 3): an ISO made
# by grub-mkrescue (Debian's GRUB, xorriso, mtools: a BIOS El Torito
# no-emulation image, eltorito.img, and a UEFI one) boots under SeaBIOS
# (bios.bin, its AHCI/ATAPI driver) from vmlet's CD-ROM drive: GRUB loads
# its modules and grub.cfg from the ISO9660 file system through INT 13h,
# prints a line on the serial console and powers off through the debug-exit
# port (iorw's outb); the same ISO's EFI image (GRUB for x86_64-efi) under
# vmlet's own UEFI does the same. QEMU q35 with the same ISO on ide-cd is
# the oracle of the BIOS boot:
# the same line, SeaBIOS naming the drive alike. Slow on a nested host (a
# few minutes each, QEMU's the slower): its own test, apart from
# cdrom_run.sh.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v grub-mkrescue >/dev/null && command -v xorriso >/dev/null &&
	command -v mformat >/dev/null || skip "no grub-mkrescue, xorriso or mtools"
[[ -d /usr/lib/grub/i386-pc ]] || skip "no grub-pc-bin"
[[ -f /usr/share/seabios/bios.bin ]] || skip "no /usr/share/seabios/bios.bin"

mkdir -p "$TMPD/g/boot/grub"
cat >"$TMPD/g/boot/grub/grub.cfg" <<'CFG'
serial --unit=0 --speed=115200
terminal_input serial console
terminal_output serial console
set timeout=0
echo "vmlet-grub: GRUB read its config from the CD"
insmod iorw
outb 0xf4 0x10
CFG
grub-mkrescue -o "$TMPD/grub.iso" "$TMPD/g" --modules="iorw serial" >"$TMPD/mk.log" 2>&1 ||
	{ fail "grub-mkrescue: $(tail -3 "$TMPD/mk.log")"; finish; }
xorriso -indev "$TMPD/grub.iso" -report_el_torito plain 2>/dev/null |
	grep -q "El Torito boot img : *1 *BIOS *y *none" ||
	fail "the ISO has no BIOS no-emulation boot image"

cat >"$TMPD/vm.yaml" <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: grub-cd, namespace: default}
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
          - {name: cd, cdrom: {}, bootOrder: 1}
      volumes:
      - {name: cd, containerDisk: {image: grub-iso}}
YAML
mkdir -p "$TMPD/root/cd/disk" && cp "$TMPD/grub.iso" "$TMPD/root/cd/disk/"
want="vmlet-grub: GRUB read its config from the C"
VMLET_SEABIOS=/usr/share/seabios/bios.bin timeout 600 nice -n 10 "$VMLET" run -f "$TMPD/vm.yaml" \
	--disk-root "$TMPD/root" --log-level debug --log-format text >"$TMPD/out" 2>"$TMPD/log"
rc=$?
v=$(grep -o 'registering: "DVD/CD.*' "$TMPD/log")
((rc == 0)) && grep -aqF "$want" "$TMPD/out" && grep -qF "Booting from DVD/CD..." "$TMPD/log" &&
	ok "SeaBIOS boots grub-mkrescue's ISO from the CD (a containerDisk); GRUB read grub.cfg" ||
	fail "GRUB from CD: exit $rc $(grep -a debugcon "$TMPD/log" | tail -3) $(tail -c 300 "$TMPD/out")"

# the same ISO under vmlet's own UEFI: the firmware finds GRUB's EFI image
# in the catalog (boot entry 1, after the BIOS one), GRUB for x86_64-efi
# reads grub.cfg from the ISO 9660 file system through the firmware's
# BlockIo on the CD
if [[ -d /usr/lib/grub/x86_64-efi ]]; then
	sed 's/bios: {useSerial: true}/efi: {secureBoot: false}/' "$TMPD/vm.yaml" >"$TMPD/efi.yaml"
	timeout 600 nice -n 10 "$VMLET" run -f "$TMPD/efi.yaml" --disk-root "$TMPD/root" \
		--log-format text >"$TMPD/efi.out" 2>"$TMPD/efi.log"
	rc=$?
	((rc == 0)) && grep -aqF "$want" "$TMPD/efi.out" &&
		grep -aq 'efi: disk: El Torito EFI image 1 at block' "$TMPD/efi.out" &&
		ok "vmlet's UEFI boots the ISO's EFI image (GRUB, boot entry 1); GRUB read grub.cfg" ||
		fail "GRUB from CD under vmlet's UEFI: exit $rc $(tail -c 300 "$TMPD/efi.out")"
fi

if command -v qemu-system-x86_64 >/dev/null; then
	timeout 600 nice -n 10 qemu-system-x86_64 -M q35 -accel kvm -cpu qemu64 -m 128 -nodefaults \
		-no-user-config -nographic -serial stdio -debugcon "file:$TMPD/qemu.dbg" \
		-global isa-debugcon.iobase=0x402 \
		-drive "file=$TMPD/grub.iso,if=none,id=cd,format=raw,readonly=on,media=cdrom" \
		-device ide-cd,drive=cd,bus=ide.0,bootindex=1 \
		-device isa-debug-exit,iobase=0xf4,iosize=4 </dev/null >"$TMPD/qemu" 2>&1
	rc=$?
	q=$(grep -a 'registering: "DVD/CD' "$TMPD/qemu.dbg")
	((rc == 33)) && grep -aqF "$want" "$TMPD/qemu" && [[ -n $q && ${q#*registering} == "${v#*registering}" ]] &&
		ok "QEMU q35 boots the same ISO to the same line; SeaBIOS names both drives alike" ||
		fail "QEMU: exit $rc, '$q' vs vmlet '$v'"
fi
finish
