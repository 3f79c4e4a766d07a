#!/usr/bin/env bash
# Per-device counters (vmm/vm/device.h device_counters): the probe guest reads
# the first MiB of its disk and sends frames on its NIC, and vmlet's
# end-of-run summary counts those requests, frames and bytes; a running VM's `vmlet ctl metrics` exports the same
# counters per disk and interface as Prometheus counter families, and the
# memory balloon's.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
"$VMLET" run --help 2>&1 | grep -q -- '--api-socket' || skip "vmlet run has no --api-socket yet"
tiny_guests 0
truncate -s 4M "$TMPD/root.raw"

# the probe reads 1 MiB of the disk: counted at the end of the run
# (with the default pod interface: its counters are logged too)
if command -v passt >/dev/null; then
	vm_manifest counters 128Mi Once "root=$TMPD/root.raw" | sed '/autoattachPodInterface/d'
else
	vm_manifest counters 128Mi Once "root=$TMPD/root.raw"
fi >"$TMPD/probe.yaml"
timeout 60 "$VMLET" probe -f "$TMPD/probe.yaml" --log-format text --log-level info \
	>/dev/null 2>"$TMPD/err"
line=$(grep "disk 'root': .* requests" "$TMPD/err")
if [[ $line =~ \'root\':\ ([0-9]+)\ requests\ \(0\ failed\),\ ([0-9]+)\ bytes\ read,\ 0\ written ]] &&
	((BASH_REMATCH[1] > 0 && BASH_REMATCH[2] >= 1048576)); then
	ok "probe: $line"
else
	fail "probe disk counters: '$line'"; tail -3 "$TMPD/err"
fi
# the probe guest sends on its NIC (DHCP through passt): counted, with bytes
line=$(grep "interface 'default': .* frames" "$TMPD/err")
if ! command -v passt >/dev/null; then
	echo "note: no passt: the NIC counters are not checked"
elif [[ $line =~ \(([0-9]+)\ bytes\)\ received,\ ([0-9]+)\ \(([0-9]+)\ bytes\)\ sent ]] &&
	((BASH_REMATCH[2] > 0 && BASH_REMATCH[3] >= 42 * BASH_REMATCH[2])); then
	ok "probe: $line"
else
	fail "probe interface counters: '$line'"
fi
# and the balloon's totals (the probe has no balloon driver)
grep -q "balloon: 0 free page reports, 0 bytes released; guest statistics received 0 times" "$TMPD/err" &&
	ok "probe: the balloon's totals are logged" || fail "probe: no balloon line: $(grep balloon "$TMPD/err")"

# a running VM: the counter families, one sample per disk
vm_manifest counters 128Mi Once "root=$TMPD/root.raw" >"$TMPD/run.yaml"
SOCK=$TMPD/api.sock
"$VMLET" run -f "$TMPD/run.yaml" --kernel "$TMPD/mode0.elf" --api-socket "$SOCK" \
	--log-format text >"$TMPD/out" 2>"$TMPD/err" &
PID=$!
# (generous: a loaded host can take seconds to start a VM)
for _ in $(seq 600); do
	grep -q "tiny-guest: up" "$TMPD/out" && [[ -S $SOCK ]] && break
	kill -0 $PID 2>/dev/null || break
	sleep 0.05
done
[[ -S $SOCK ]] || fail "vmlet did not start: $(tail -3 "$TMPD/err")"
"$VMLET" ctl "$SOCK" metrics >"$TMPD/metrics"
for fam in requests errors read_bytes written_bytes; do
	grep -q "^# TYPE vmlet_blk_${fam}_total counter$" "$TMPD/metrics" &&
		grep -qE "^vmlet_blk_${fam}_total\{disk=\"root\"\} [0-9]+$" "$TMPD/metrics" ||
		fail "metrics: no vmlet_blk_${fam}_total for disk root"
done
grep -q '^vmlet_blk_requests_total{disk="root"}' "$TMPD/metrics" && ok "metrics: block counters per disk" ||
	head -30 "$TMPD/metrics"
# the memory balloon every VM gets: its counters, zero (the tiny guest
# has no balloon driver, so no guest statistics either)
for fam in free_page_reports released_bytes stats_updates; do
	grep -q "^# TYPE vmlet_balloon_${fam}_total counter$" "$TMPD/metrics" &&
		grep -qx "vmlet_balloon_${fam}_total 0" "$TMPD/metrics" ||
		fail "metrics: no vmlet_balloon_${fam}_total 0"
done
stats='^vmlet_guest_(swap_|major_|minor_|memory_(free|total|available|cached)_)'
! grep -qE "$stats" "$TMPD/metrics" && ok "metrics: the balloon's counters, no guest statistics unsent" ||
	fail "metrics: guest statistics without a driver: $(grep -E "$stats" "$TMPD/metrics")"
"$VMLET" ctl "$SOCK" power-button >/dev/null
timeout 60 tail --pid="$PID" -f /dev/null
kill -KILL "$PID" 2>/dev/null
wait "$PID"
rc=$?
[[ $rc == 0 ]] && ok "exit 0" || fail "exit $rc"
finish
