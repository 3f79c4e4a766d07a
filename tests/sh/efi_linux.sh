#!/usr/bin/env bash
# Linux EFI stub smoke test (opt-in: EFI_LINUX=1, minutes on our hosts):
# a Debian cloud kernel as \EFI\BOOT\BOOTX64.EFI on an ESP, with initrd=
# on its command line, under vmlet's UEFI firmware in QEMU microvm. The
# stub must print its first message ("EFI stub: Loaded initrd from command
# line option": it read the file through our SimpleFileSystem); when the
# time box allows, the kernel must also report "EFI v2.100 by vmlet" after
# ExitBootServices. Everything runs at CPL0, which our kvm-pvm hosts
# emulate (~1 us per instruction), hence the opt-in and the time box; on a
# real KVM host this takes well under a second.
#   EFI_LINUX_KERNEL=path/to/vmlinuz  use this kernel (else one is fetched
#                                      once with apt-get download into build/)
#   EFI_LINUX_SECONDS=600               time box
source "$(dirname "$0")/../lib/sh.sh"

[[ ${EFI_LINUX:-0} == 1 ]] || skip "opt-in (EFI_LINUX=1): the stub takes minutes at emulated CPL0 here"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
have_kvm || skip "no usable /dev/kvm"
BIOS=/usr/share/qemu/qboot.rom
[[ -f $BIOS ]] || skip "no qboot firmware for microvm"
kernel=${EFI_LINUX_KERNEL:-}
if [[ -z $kernel ]]; then
	cache=build/efi-linux
	kernel=$(ls "$cache"/boot/vmlinuz-* 2>/dev/null | head -n1)
	if [[ -z $kernel ]]; then
		mkdir -p "$cache"
		(cd "$cache" && apt-get download linux-image-cloud-amd64 >/dev/null 2>&1 &&
			dep=$(dpkg-deb -f linux-image-cloud-amd64_*.deb Depends | sed 's/[ ,].*//') &&
			apt-get download "$dep" >/dev/null 2>&1 &&
			dpkg-deb --fsys-tarfile "$dep"_*.deb | tar -x --wildcards './boot/vmlinuz-*') ||
			skip "no kernel: apt-get download linux-image-cloud-amd64 failed"
		kernel=$(ls "$cache"/boot/vmlinuz-* | head -n1)
	fi
fi
make -s build/fw/efi.elf || { echo "FAIL: cannot build build/fw/efi.elf"; exit 1; }
head -c 65536 /dev/urandom >"$TMPD/initrd.img"
ESP_MB=32 ESP_EXTRA="$TMPD/initrd.img:/initrd.img" tests/efi/mkesp.sh "$kernel" "$TMPD/esp.img"

qemu-system-x86_64 -enable-kvm -cpu host -m 512 -nodefaults -no-user-config -nographic \
	-display none -no-reboot -M microvm,x-option-roms=off,rtc=on,pit=off,pic=off,isa-serial=on,acpi=on,auto-kernel-cmdline=off \
	-bios "$BIOS" -kernel build/fw/efi.elf -initrd "$TMPD/esp.img" \
	-append 'initrd=\initrd.img console=ttyS0' -serial "file:$TMPD/out" >"$TMPD/qemu.log" 2>&1 &
qpid=$!
t0=$SECONDS
limit=${EFI_LINUX_SECONDS:-600}
while ((SECONDS - t0 < limit)) && kill -0 $qpid 2>/dev/null; do
	grep -q 'EFI v2.100 by vmlet' "$TMPD/out" && break
	sleep 2
done
kill $qpid 2>/dev/null
wait $qpid 2>/dev/null
grep -E '^efi: |EFI stub|EFI v2' "$TMPD/out" | sed 's/^/    /'
if grep -q 'EFI stub: Loaded initrd from command line option' "$TMPD/out"; then
	ok "the Linux EFI stub ran and read initrd= through SimpleFileSystem"
else
	fail "no EFI stub message within ${limit}s"
fi
if grep -q 'EFI v2.100 by vmlet' "$TMPD/out"; then
	ok "Linux booted past ExitBootServices and sees vmlet's system table"
else
	echo "note: the kernel did not get to its EFI line within ${limit}s (emulated CPL0)"
fi
finish
