#!/usr/bin/env bash
# vmlet's ACPI tables as OVMF loads them (issue 21): QEMU q35 with TCG and
# Debian's OVMF, its own ACPI off (-M q35,acpi=off), and instead vmlet's
# fw_cfg files etc/acpi/rsdp, etc/acpi/tables and etc/table-loader
# (tests/data/acpi_fw_cfg_dump.c, the files vmm/boot/bios_boot.c serves); Linux
# (Debian's cloud kernel, a busybox /init) must find vmlet's FADT, DSDT and
# FACS through the XSDT OVMF builds, and enable ACPI. OVMF installs only
# tables that sum to zero after the loader script, computing checksums its
# own way; before acpi_loader.c zeroed the checksum bytes, it dropped the
# FADT: Linux printed "AcpiEnable failed", ran without ACPI and could not
# power off (what the nested OVMF scenarios saw). Independent of the host's
# KVM (kvm-pvm cannot run OVMF); about 30 s of TCG.
source "$(dirname "$0")/../lib/sh.sh"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
CODE=/usr/share/OVMF/OVMF_CODE_4M.fd VARS=/usr/share/OVMF/OVMF_VARS_4M.fd
[[ -f $CODE && -f $VARS ]] || skip "Debian's ovmf package is not installed"
[[ -f build/libvmlet.a ]] || skip "no build/libvmlet.a (make)"
command -v cpio >/dev/null || skip "no cpio"
busybox=$(command -v busybox) && ! readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter' ||
	skip "no static busybox (busybox-static)"
scripts/fetch-kernel >/dev/null 2>&1 || skip "cannot fetch linux-image-cloud-amd64"

gcc -std=gnu11 -O1 -I. -o "$TMPD/dump" tests/data/acpi_fw_cfg_dump.c build/libvmlet.a ||
	{ fail "cannot build tests/data/acpi_fw_cfg_dump.c"; finish; }
"$TMPD/dump" "$TMPD" || { fail "acpi_fw_cfg_dump"; finish; }

r=$TMPD/root
mkdir -p "$r/bin" "$r/proc" "$r/sys" "$r/dev"
cp "$busybox" "$r/bin/busybox"
cat >"$r/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
echo "@@ACPI-BEGIN"
dmesg | grep -E 'ACPI'
echo "@@ACPI-END"
poweroff -f
INIT
chmod +x "$r/init"
(cd "$r" && find . | cpio -o -H newc --quiet) >"$TMPD/initrd.img"
cp "$VARS" "$TMPD/vars.fd"
out=$TMPD/console
t0=$SECONDS
qemu-system-x86_64 -accel tcg -M q35,acpi=off -cpu max -m 512 -nodefaults -no-user-config \
	-nographic -display none -no-reboot -serial "file:$out" \
	-drive "if=pflash,format=raw,readonly=on,file=$CODE" -drive "if=pflash,format=raw,file=$TMPD/vars.fd" \
	-kernel build/vmlinuz -initrd "$TMPD/initrd.img" -append "console=ttyS0 rdinit=/init" \
	-fw_cfg "name=etc/table-loader,file=$TMPD/loader" -fw_cfg "name=etc/acpi/tables,file=$TMPD/tables" \
	-fw_cfg "name=etc/acpi/rsdp,file=$TMPD/rsdp" >"$TMPD/qemu.log" 2>&1 &
pid=$!
# (no power-off to wait for: QEMU's ICH9 does not take vmlet's S5 type)
for ((i = 0; i < 300; i++)); do
	grep -aq '@@ACPI-END' "$out" 2>/dev/null && break
	kill -0 $pid 2>/dev/null || break
	sleep 1
done
kill $pid 2>/dev/null
wait $pid 2>/dev/null
echo "QEMU + OVMF + Linux: $((SECONDS - t0)) s"
a=$(sed -n '/@@ACPI-BEGIN/,/@@ACPI-END/p' "$out" | tr -d '\r')
[[ -n $a ]] || { fail "Linux did not report (console: $(tail -c 600 "$out" | tr -d '\r'))"; finish; }
grep -E 'ACPI: (RSDP|XSDT|FACP|DSDT|FACS|APIC|MCFG) ' <<<"$a" | sed 's/^/  | /'
for t in FACP DSDT APIC MCFG; do
	grep -qE "ACPI: $t 0x[0-9A-F]+ [0-9A-F]+ \(v[0-9]+ VMLET " <<<"$a" &&
		ok "OVMF installed vmlet's $t" || fail "no vmlet $t in Linux's table list"
done
grep -qE 'ACPI: FACS 0x' <<<"$a" && ok "the FACS through the FADT" || fail "no FACS"
grep -q 'AcpiEnable failed' <<<"$a" && fail "Linux: AcpiEnable failed" || ok "no 'AcpiEnable failed'"
grep -q 'ACPI: Interpreter enabled' <<<"$a" && ok "Linux enabled ACPI" || fail "ACPI interpreter not enabled"
grep -q 'ACPI: PM: (supports S0 S5)' <<<"$a" && ok "S5 (soft off) offered" || fail "no S5 in Linux's PM line"
finish
