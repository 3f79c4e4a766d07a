#!/usr/bin/env bash
# The ACPI tables arch_acpi_build() makes must disassemble with ACPICA's
# `iasl -d` without errors or warnings. The unit test arch_acpi_test writes
# every table of a few configurations (x2APIC + PCI, minimal, serial, a
# TPM's TIS) to a
# directory; each SDT is disassembled here. This iasl cannot read a lone
# RSDP (no SDT header), so the RSDP is checked field by field instead.
source "$(dirname "$0")/../lib/sh.sh"

command -v iasl >/dev/null || skip "iasl not installed (acpica-tools)"
bin=${BUILD:-build}/tests/unit/arch_acpi_test
[[ -x $bin ]] || skip "$bin not built"

dump=$TMPD/tables
mkdir -p "$dump"
VMLET_ACPI_DUMP_DIR=$dump "$bin" >"$TMPD/unit.log" 2>&1 || fail "arch_acpi_test failed: $(tail -3 "$TMPD/unit.log")"

for cfg in x2apic-pci min serial; do
	for sig in XSDT FACP FACS DSDT APIC; do
		[[ -f $dump/$cfg-$sig.dat ]] || fail "$cfg: no $sig table written"
	done
done
[[ -f $dump/x2apic-pci-MCFG.dat ]] || fail "x2apic-pci: no MCFG"
[[ -f $dump/min-MCFG.dat ]] && fail "min: MCFG without PCI"

n=0
for f in "$dump"/*.dat; do
	name=$(basename "$f" .dat)
	[[ $name == *-RSDP ]] && continue
	if ! (cd "$dump" && timeout 60 iasl -d "$(basename "$f")") >"$TMPD/iasl.log" 2>&1; then
		fail "iasl -d $name: $(grep -iE 'error|invalid' "$TMPD/iasl.log" | head -3)"
		continue
	fi
	dsl=${f%.dat}.dsl
	if [[ ! -s $dsl ]]; then
		fail "iasl -d $name: no output"
	elif grep -qiE 'error|warning|incorrect|invalid|\*\*\*\* ' "$dsl" "$TMPD/iasl.log"; then
		fail "iasl -d $name: $(grep -iE 'error|warning|incorrect|invalid|\*\*\*\* ' "$dsl" "$TMPD/iasl.log" | head -3)"
	else
		n=$((n + 1))
	fi
done
((n >= 16)) && ok "iasl -d disassembled $n tables cleanly" || fail "only $n tables disassembled"

# Specific decodings iasl reports.
grep -q 'Processor Local x2APIC' "$dump/x2apic-pci-APIC.dsl" || fail "no x2APIC entries decoded"
grep -q 'Name (\\_S5, Package' "$dump/min-DSDT.dsl" || fail "no \\_S5 in the DSDT"
grep -q 'EisaId ("PNP0501")' "$dump/serial-DSDT.dsl" || fail "no COM1 in the DSDT"
grep -q 'EisaId ("PNP0A08")' "$dump/x2apic-pci-DSDT.dsl" || fail "no PCI0 in the DSDT"
grep -q 'Hardware Reduced (V5) : 0' "$dump/min-FACP.dsl" || fail "FADT decode"
grep -q 'Start Method : 07' "$dump/min-TPM2.dsl" || fail "TPM2: no CRB start method"
grep -q 'Control Address : 00000000FED40040' "$dump/min-TPM2.dsl" || fail "TPM2: control area"
grep -q 'Name (_HID, "MSFT0101"' "$dump/min-DSDT.dsl" && grep -q 'Memory32Fixed (ReadWrite,' "$dump/min-DSDT.dsl" ||
	fail "no TPM device (MSFT0101, Memory32Fixed) in the DSDT"
# the TIS (tpm: {}): start method 6, no control area, the 0x5000 window
grep -q 'Start Method : 06' "$dump/tis-TPM2.dsl" && grep -q 'Control Address : 0000000000000000' "$dump/tis-TPM2.dsl" ||
	fail "TIS TPM2: start method or control area: $(grep -E 'Start Method|Control Address' "$dump/tis-TPM2.dsl" | tr '\n' ' ')"
grep -q '0x00005000, *// Address Length' "$dump/tis-DSDT.dsl" || fail "TIS: no 0x5000 window in the DSDT"

for f in "$dump"/*-RSDP.dat; do
	python3 - "$f" <<'PY' || fail "$(basename "$f"): bad RSDP"
import struct, sys
b = open(sys.argv[1], 'rb').read()
assert len(b) == 36 and b[:8] == b'RSD PTR ', 'signature/length'
assert sum(b[:20]) % 256 == 0 and sum(b) % 256 == 0, 'checksums'
rev, length, xsdt = b[15], struct.unpack_from('<I', b, 20)[0], struct.unpack_from('<Q', b, 24)[0]
assert rev == 2 and length == 36 and xsdt != 0, 'revision/length/xsdt'
PY
done
ok "RSDP checksums, revision and XSDT address"
finish
