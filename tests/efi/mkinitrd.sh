#!/bin/sh
# Make the gzip'd cpio initrd the Linux EFI tests boot: Debian's static
# busybox and an /init that reports, on the console, what Linux sees of
# the firmware, then powers off (ACPI S5):
#   VMLET-EFI-LINUX: userspace reached
#   VMLET-EFI-LINUX: fw_platform_size=64
#   VMLET-EFI-LINUX: runtime-map type=T phys=P virt=V   (one per region: the
#                    kernel called SetVirtualAddressMap with these)
#   VMLET-EFI-LINUX: PlatformLang=en-US                  (GetVariable at runtime)
#   VMLET-EFI-LINUX: VmletLinuxTest=written-by-linux     (SetVariable, read back)
#   VMLET-EFI-LINUX: variables N
#   VMLET-EFI-LINUX: done
# The variable lines need EFIVARFS (a module in Debian's cloud kernel: pass
# its efivarfs.ko, scripts/fetch-kernel keeps it as build/vmlinuz.efivarfs.ko).
#   tests/efi/mkinitrd.sh OUT [efivarfs.ko]
set -eu
out=$1 ko=${2:-}
busybox=$(command -v busybox || echo /bin/busybox)
# static: no program interpreter (readelf: binutils, part of build-essential)
[ -x "$busybox" ] && ! readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter' ||
	{ echo "mkinitrd: needs a static busybox (busybox-static)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/proc" "$tmp/sys" "$tmp/dev" "$tmp/lib"
cp "$busybox" "$tmp/bin/busybox"
[ -z "$ko" ] || cp "$ko" "$tmp/lib/efivarfs.ko"
cat >"$tmp/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
m=VMLET-EFI-LINUX
echo "$m: userspace reached"
fw=/sys/firmware/efi
if [ -d $fw ]; then
	echo "$m: fw_platform_size=$(cat $fw/fw_platform_size)"
	for r in $fw/runtime-map/*; do
		[ -d "$r" ] && echo "$m: runtime-map type=$(cat $r/type) phys=$(cat $r/phys_addr) virt=$(cat $r/virt_addr)"
	done
	if [ -f /lib/efivarfs.ko ] && insmod /lib/efivarfs.ko &&
		mount -t efivarfs efivarfs $fw/efivars; then
		g=8be4df61-93ca-11d2-aa0d-00e098032b8c
		echo "$m: PlatformLang=$(tail -c +5 $fw/efivars/PlatformLang-$g | tr -d '\000')"
		t=$fw/efivars/VmletLinuxTest-5a7e0c1d-2b3a-4c5d-8e9f-0a1b2c3d4e5f
		printf '\007\000\000\000written-by-linux' >$t
		echo "$m: VmletLinuxTest=$(tail -c +5 $t)"
		echo "$m: variables $(ls $fw/efivars | wc -l)"
	fi
fi
echo "$m: done"
poweroff -f
INIT
chmod +x "$tmp/init"
(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
