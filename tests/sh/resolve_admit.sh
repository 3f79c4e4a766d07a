#!/usr/bin/env bash
# KubeVirt's admission rules (docs/resolution.md §19) refuse alike in
# `resolve -o json`, `resolve -o config` and `run`: for every admission case
# of tests/conformance/vmlet-cases (v12 on), exit 1, every line of its
# expected-error.txt on stderr, nothing on stdout, and `run` starts no guest.
# Then the messages of issue 23 item 4 name the user's own value, once.
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
tiny_guests 5

n=0
for d in tests/conformance/vmlet-cases/v[0-9]*-*/; do
	id=$(basename "$d")
	num=${id%%-*}
	((10#${num#v} >= 12)) && [[ -f $d/expected-error.txt ]] || continue
	n=$((n + 1))
	for mode in json config run; do
		if [[ $mode == run ]]; then
			timeout 20 "$VMLET" run -f "$d/vm.yaml" --kernel "$TMPD/mode5.elf" \
				--log-format text >"$TMPD/out" 2>"$TMPD/err"
		else
			timeout 20 "$VMLET" resolve -o $mode -f "$d/vm.yaml" >"$TMPD/out" 2>"$TMPD/err"
		fi
		rc=$?
		bad=
		((rc == 1)) || bad="exit $rc"
		[[ -s $TMPD/out ]] && bad+=" stdout not empty"
		grep -q "tiny-guest" "$TMPD/out" "$TMPD/err" && bad+=" the guest started"
		while IFS= read -r line; do
			[[ -z $line ]] && continue
			grep -qF -- "$line" "$TMPD/err" || bad+=" lacks '$line'"
		done <"$d/expected-error.txt"
		grep -qE "^$d/?vm.yaml:[0-9]+:[0-9]+: " "$TMPD/err" || bad+=" no FILE:LINE:COL"
		[[ -z $bad ]] || fail "$id ($mode):$bad: $(head -2 "$TMPD/err")"
	done
done
((n >= 115)) && ok "$n admission cases refused by resolve -o json, -o config and run" ||
	fail "only $n admission cases"

# msg IO BINDING [VOLUME-LINE]: resolve -o config of a VM with one disk of
# that io mode and one interface of that binding plugin; stderr in $TMPD/err
msg() {
	cat >"$TMPD/m.yaml" <<EOT
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: m}
spec:
  runStrategy: Once
  template:
    spec:
      domain:
        memory: {guest: 64Mi}
        devices:
          disks: [{name: d, io: $1, disk: {bus: virtio}}]
          interfaces: [{name: default, binding: {name: $2}}]
      networks: [{name: default, pod: {}}]
      volumes:
      - {name: d, emptyDisk: {capacity: 1Mi}}
${3:-}
EOT
	"$VMLET" resolve -o config -f "$TMPD/m.yaml" >/dev/null 2>"$TMPD/err"
}
msg threads mybindplugin
grep -q 'interfaces\[0\].binding: binding plugin "mybindplugin" is not supported' "$TMPD/err" &&
	ok "binding plugin refusal names the plugin" || fail "binding plugin: $(cat "$TMPD/err")"
! grep -q 'disks\[0\].io' "$TMPD/err" && ok "io threads: no warning" || fail "io threads: $(cat "$TMPD/err")"
msg native passt
grep -q 'warning: spec.template.spec.domain.devices.disks\[0\].io: io native: ' "$TMPD/err" &&
	ok "io native: the warning names native" || fail "io native: $(cat "$TMPD/err")"
msg bogus passt
grep -q 'disks\[0\].io: .*not supported.*(got "bogus")' "$TMPD/err" && ! grep -q 'Linux AIO' "$TMPD/err" &&
	ok "io bogus: refused, naming bogus" || fail "io bogus: $(cat "$TMPD/err")"
msg threads passt '      - {name: ci, cloudInitNoCloud: {secretRef: {name: s1}, networkData: x}}'
(($(grep -ci 'secret' "$TMPD/err") == 1)) && grep -q 'volumes\[1\].cloudInitNoCloud.secretRef: ' "$TMPD/err" &&
	ok "cloud-init secretRef: one warning, on the field" || fail "secretRef: $(cat "$TMPD/err")"
finish
