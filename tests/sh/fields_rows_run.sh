#!/usr/bin/env bash
# Rows of docs/fields.md that once said one thing while `run` did another
# (issue 23 item 2), each checked by running the VM:
# - persistentVolumeClaim.readOnly: true: the probe guest sees a read-only
#   disk, its write test is refused and the claim's image is unchanged;
# - hostDisk.type: Disk never creates a missing file (run fails, no file),
#   DiskOrCreate creates it sparse at its capacity (the guest sees that
#   size), a capacity with Disk and an unknown type are KubeVirt's errors;
# - lun and a cdrom on bus scsi: refused by resolve -o config and by run
#   before starting (a cdrom on sata runs: tests/sh/cdrom_run.sh);
# - clock.utc.offsetSeconds with clock.timezone: utc wins, as in KubeVirt's
#   converter (the tiny guest prints its CMOS RTC's hours and minutes).
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
command -v python3 >/dev/null || skip "no python3"
tiny_guests 5 7

vm() { # NAME DOMAIN-LINES DEVICES-LINES VOLUMES-LINES
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: %s, namespace: default}\n' "$1"
	printf 'spec:\n  runStrategy: Once\n  template:\n    spec:\n      domain:\n'
	printf '        memory: {guest: 64Mi}\n%s        devices:\n' "$2"
	printf '          autoattachPodInterface: false\n%s%s' "$3" "$4"
}
one_disk() { # DISK-TARGET VOLUME-SOURCE
	vm "$1" '' "          disks: [{name: d, $2}]
" "      volumes: [{name: d, $3}]
"
}
probe_json() { # FILE [ARGS...]: the probe's JSON report in $TMPD/probe.json
	local f=$1
	shift
	timeout 120 "$VMLET" probe -f "$f" -o json "$@" >"$TMPD/probe.json" 2>"$TMPD/probe.err"
}
jq_py() { # EXPR: evaluate EXPR on the report d
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$TMPD/probe.json"
}

# ---- persistentVolumeClaim.readOnly
head -c 1048576 /dev/urandom >"$TMPD/claim.img"
sum0=$(sha256sum <"$TMPD/claim.img")
one_disk pvc 'disk: {bus: virtio}' 'persistentVolumeClaim: {claimName: c, readOnly: true}' \
	>"$TMPD/pvc.yaml"
"$VMLET" resolve -f "$TMPD/pvc.yaml" -o config --volume "d=$TMPD/claim.img" >"$TMPD/cfg.json" &&
	python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["disks"][0]["readOnly"] is True' \
		"$TMPD/cfg.json" && ok "resolve -o config: a readOnly claim is a readOnly disk" ||
	fail "readOnly claim in the config: $(cat "$TMPD/cfg.json")"
probe_json "$TMPD/pvc.yaml" --volume "d=$TMPD/claim.img" --io-test d
prc=$?
[[ $(jq_py 'd["guest"]["disks"][0]["readOnly"]') == True ]] &&
	ok "persistentVolumeClaim.readOnly: the guest's disk is read-only" ||
	fail "guest disk: $(jq_py 'd["guest"].get("disks")') $(tail -2 "$TMPD/probe.err")"
((prc == 0)) && [[ $(sha256sum <"$TMPD/claim.img") == "$sum0" ]] &&
	ok "...and the guest's write test left the claim's image unchanged" ||
	fail "the guest wrote to a readOnly claim (probe exit $prc)"

# ---- hostDisk.type
rm -f "$TMPD/hd.img"
one_disk hd 'disk: {bus: virtio}' "hostDisk: {path: $TMPD/hd.img, type: Disk}" >"$TMPD/disk.yaml"
timeout 60 "$VMLET" run -f "$TMPD/disk.yaml" --kernel "$TMPD/mode5.elf" >"$TMPD/out" 2>"$TMPD/err"
rc=$?
((rc == 1)) && [[ ! -e $TMPD/hd.img ]] && ! grep -q tiny-guest "$TMPD/out" &&
	grep -q "hd.img" "$TMPD/err" && ok "hostDisk type Disk, file missing: an error naming it, nothing created" ||
	fail "Disk, missing file: exit $rc, $(ls "$TMPD") $(tail -2 "$TMPD/err")"
one_disk hd 'disk: {bus: virtio}' "hostDisk: {path: $TMPD/hd.img, type: DiskOrCreate, capacity: 3Mi}" \
	>"$TMPD/create.yaml"
probe_json "$TMPD/create.yaml"
[[ $(stat -c %s "$TMPD/hd.img" 2>/dev/null) == 3145728 ]] &&
	[[ $(jq_py 'd["guest"]["disks"][0]["capacityBytes"]') == 3145728 ]] &&
	ok "hostDisk DiskOrCreate: created at its capacity, the guest sees 3 MiB" ||
	fail "DiskOrCreate: $(stat -c %s "$TMPD/hd.img" 2>&1) $(jq_py 'd["guest"].get("disks")')"
sed 's/DiskOrCreate/Disk/' "$TMPD/create.yaml" >"$TMPD/cap.yaml"
sed 's/type: DiskOrCreate, capacity: 3Mi/type: Bogus/' "$TMPD/create.yaml" >"$TMPD/bogus.yaml"
P=spec.template.spec.volumes[0].hostDisk
for c in "cap:$P.capacity: $P.capacity is allowed to pass only with $P.type equal to 'DiskOrCreate'" \
	"bogus:$P.type: $P.type has invalid value 'Bogus', allowed are 'Disk' or 'DiskOrCreate'"; do
	y=$TMPD/${c%%:*}.yaml msg=${c#*:}
	"$VMLET" resolve -f "$y" -o config >/dev/null 2>"$TMPD/err"
	rc=$?
	timeout 60 "$VMLET" run -f "$y" --kernel "$TMPD/mode5.elf" >"$TMPD/out" 2>"$TMPD/err2"
	rc2=$?
	((rc == 1 && rc2 == 1)) && grep -qF "$y:13:" "$TMPD/err" && grep -qF ": $msg" "$TMPD/err" &&
		grep -qF ": $msg" "$TMPD/err2" && [[ ! -s $TMPD/out ]] &&
		ok "hostDisk ${c%%:*}: KubeVirt's error from resolve -o config and run (exit 1)" ||
		fail "hostDisk ${c%%:*}: exit $rc/$rc2, $(cat "$TMPD/err") / $(tail -2 "$TMPD/err2")"
done

# ---- lun and a cdrom on scsi: refused, as run refuses them
for k in cdrom lun; do
	# (a lun on a claim: KubeVirt's admission maps a lun to nothing else)
	src='emptyDisk: {capacity: 1Mi}' bus=scsi why="a CD-ROM on bus \"scsi\" is not supported"
	[[ $k == lun ]] && src='persistentVolumeClaim: {claimName: c}' bus=sata why="vmlet has no"
	one_disk "$k" "$k: {bus: $bus}" "$src" >"$TMPD/$k.yaml"
	"$VMLET" resolve -f "$TMPD/$k.yaml" -o config >/dev/null 2>"$TMPD/err"
	rc=$?
	timeout 60 "$VMLET" run -f "$TMPD/$k.yaml" --kernel "$TMPD/mode5.elf" >"$TMPD/out" 2>"$TMPD/err2"
	rc2=$?
	want="^$TMPD/$k.yaml:12:[0-9]+: spec.template.spec.domain.devices.disks\\[0\\].$k(.bus)?: $why"
	((rc == 1 && rc2 == 1)) && grep -qE "$want" "$TMPD/err" && grep -qE "$want" "$TMPD/err2" &&
		[[ ! -s $TMPD/out ]] && ok "$k: refused with FILE:LINE:COL by resolve -o config and run" ||
		fail "$k: exit $rc/$rc2, $(cat "$TMPD/err") / $(tail -2 "$TMPD/err2")"
done

# ---- clock: utc wins over timezone (minutes past midnight, mod a day)
rtc_offset() { # YAML: the guest RTC's offset from the host's UTC, in minutes
	local out h m now
	out=$(timeout 60 "$VMLET" run -f "$1" --kernel "$TMPD/mode7.elf" 2>"$TMPD/err" | sed -n 's/^rtc=//p')
	now=$(date -u +%H%M)
	[[ $out =~ ^[0-9]{4}$ ]] || return 1
	h=$((10#${out:0:2} * 60 + 10#${out:2:2})) m=$((10#${now:0:2} * 60 + 10#${now:2:2}))
	echo $(((h - m + 1440) % 1440))
}
near() { # A B: within a minute, mod a day (the minute may turn between the reads)
	local d=$((($1 - $2 + 1440) % 1440))
	((d <= 1 || d >= 1439))
}
vm clk '        clock: {timezone: Etc/GMT-9, utc: {offsetSeconds: 7200}}
' '' '' >"$TMPD/both.yaml"
vm clk '        clock: {timezone: Etc/GMT-9}
' '' '' >"$TMPD/tz.yaml"
vm clk '        clock: {timezone: Etc/GMT-9, utc: {}}
' '' '' >"$TMPD/utc0.yaml"
if [[ -e /usr/share/zoneinfo/Etc/GMT-9 ]]; then
	o=$(rtc_offset "$TMPD/tz.yaml") && near "$o" 540 && ok "timezone alone: the RTC runs 9 h ahead" ||
		fail "timezone alone: offset '$o' min, $(tail -2 "$TMPD/err")"
	o=$(rtc_offset "$TMPD/both.yaml") && near "$o" 120 &&
		ok "utc.offsetSeconds 7200 with a timezone: utc wins, the RTC runs 2 h ahead" ||
		fail "utc with timezone: offset '$o' min, $(tail -2 "$TMPD/err")"
	o=$(rtc_offset "$TMPD/utc0.yaml") && near "$o" 0 && ok "utc: {} with a timezone: the RTC runs in UTC" ||
		fail "utc {} with timezone: offset '$o' min, $(tail -2 "$TMPD/err")"
else
	echo "no /usr/share/zoneinfo/Etc/GMT-9: the clock rows are not run"
fi
finish
