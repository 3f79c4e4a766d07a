#!/usr/bin/env bash
# Persistent EFI variables and the boot order, end to end under vmlet. Two
# ESP disks (a, then b) both hold tests/efi/vars.c as BOOTX64.EFI and as
# \EFI\VMLET\VARS2.EFI; the app prints the PCI device it came from, its
# load options and the NV counter VmletCount, bumps the counter and, on its
# first run, adds Boot0007 (-> VARS2.EFI with data "from-boot0007") and
# BootOrder. Checked:
#   1. disk b has bootOrder: 1, so the firmware boots b (00:02) first;
#   2. efi.persistent: the second run sees the counter and boots Boot0007,
#      even with a torn record appended to the store (crash in a save);
#   3. without --efi-vars the store is <name>.efivars next to the manifest;
#   4. without persistent nothing survives, and without bootOrder disk a
#      (00:01) boots first;
#   5. without persistent the variables live as long as KubeVirt's VMI:
#      through a guest reboot that vmlet restarts (the second boot follows
#      the BootOrder the first one set), not into the new start after a
#      power-off under runStrategy Always.
source "$(dirname "$0")/../lib/sh.sh"
source tests/efi/lib.sh

have_kvm || skip "no usable /dev/kvm"
[[ -z $(efi_tools) ]] || skip "$(efi_tools)"
tests/efi/build-efi.sh tests/efi/vars.c "$TMPD/vars.efi" || exit 1
ESP_MB=2 ESP_EXTRA="$TMPD/vars.efi:/EFI/VMLET/VARS2.EFI" tests/efi/mkesp.sh "$TMPD/vars.efi" "$TMPD/a.img"
cp "$TMPD/a.img" "$TMPD/b.img"

run() { # out manifest [args]
	local out=$1 m=$2
	shift 2
	timeout 60 "$VMLET" run -f "$m" --console "file:$out" "$@" >"$out.log" 2>&1
	local rc=$?
	((rc == 0)) && grep -q '^vars: done' "$out" && return 0
	fail "run $(basename "$out"): status $rc"
	grep -av '^ *ok ' "$out" | tail -n 15
	tail -n 3 "$out.log"
	return 1
}
want() { # out "key=value ..." what
	local line
	for kv in $2; do
		line=$(grep -a "^${kv%%=*}=" "$1" | tr -d '\r' | head -n1)
		[[ $line == "$kv" ]] || { fail "$3: want $kv, got '$line'"; return 1; }
	done
	ok "$3 ($2)"
}

mkdir "$TMPD/m"
efi_vm_yaml efi-vars mem=64Mi persistent=true disk=a:$TMPD/a.img disk=b:$TMPD/b.img:1 \
	>"$TMPD/m/vm.yaml"
store=$TMPD/store.efivars
run "$TMPD/o1" "$TMPD/m/vm.yaml" --efi-vars "$store" &&
	want "$TMPD/o1" "vars.pci=2 vars.options= vars.count=0" "bootOrder: disk b boots first"
[[ -s $store ]] || fail "no variable store at $store"
head -c 100 /dev/urandom | sed 's/^/VMLETEV1/' >>"$store" # a torn save
run "$TMPD/o2" "$TMPD/m/vm.yaml" --efi-vars "$store" &&
	want "$TMPD/o2" "vars.pci=2 vars.options=from-boot0007 vars.count=1" \
		"variables persist and Boot0007 in BootOrder is honoured"
run "$TMPD/o3" "$TMPD/m/vm.yaml" --efi-vars "$store" &&
	want "$TMPD/o3" "vars.count=2" "the store keeps counting after the torn save"

run "$TMPD/o4" "$TMPD/m/vm.yaml" && want "$TMPD/o4" "vars.count=0" "default store"
[[ -s $TMPD/m/efi-vars.efivars ]] && ok "default store next to the manifest" ||
	fail "no $TMPD/m/efi-vars.efivars: $(ls "$TMPD/m")"

efi_vm_yaml efi-vars mem=64Mi disk=a:$TMPD/a.img disk=b:$TMPD/b.img >"$TMPD/plain.yaml"
run "$TMPD/o5" "$TMPD/plain.yaml" && run "$TMPD/o6" "$TMPD/plain.yaml" &&
	want "$TMPD/o6" "vars.pci=1 vars.options= vars.count=0" \
		"not persistent: nothing survives; disk order without bootOrder"

# 5. (the app resets instead of powering off when its load options are "reboot")
o=$TMPD/o7
timeout 60 "$VMLET" run -f "$TMPD/plain.yaml" --run-strategy RerunOnFailure --cmdline reboot \
	--console "file:$o" >"$o.log" 2>&1
rc=$?
got=$(grep -a -E '^vars\.(options|count)=|^vars: (reboot|done)' "$o" | tr -d '\r' | tr '\n' ' ')
[[ $rc == 0 && $got == "vars.options=reboot vars.count=0 vars: reboot vars.options=from-boot0007 vars.count=1 vars: done " ]] &&
	ok "not persistent: the variables and BootOrder survive the guest's reboot" ||
	fail "not persistent, a reboot under RerunOnFailure: status $rc, the app printed: $got"
o=$TMPD/o8
"$VMLET" run -f "$TMPD/plain.yaml" --run-strategy Always --cmdline reboot --console "file:$o" >"$o.log" 2>&1 &
pid=$!
for ((i = 0; i < 600; i++)); do # until the start after the power-off has printed its count
	n=$(grep -a -c '^vars\.count=' "$o" 2>/dev/null)
	((${n:-0} >= 3)) && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
kill -TERM $pid 2>/dev/null
wait $pid
rc=$?
got=$(grep -a '^vars\.count=' "$o" | tr -d '\r' | head -n 3 | tr '\n' ' ')
[[ $rc == 0 && $got == "vars.count=0 vars.count=1 vars.count=0 " ]] &&
	ok "not persistent: a new start after the power-off (Always) has none of them" ||
	fail "not persistent, Always: status $rc, counts: $got"
finish
