#!/usr/bin/env bash
# vmlet resolve on bad input: FILE:LINE:COL: FIELD.PATH: message on stderr,
# exit 1, nothing on stdout, never a crash or a hang (also under ASan).
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
bins=("$VMLET")
[[ -x $VMLET_SAN ]] && bins+=("$VMLET_SAN")
export ASAN_OPTIONS=detect_leaks=1:exitcode=99

vm() { # $1: domain lines (indented 8), written to $TMPD/vm.yaml
	cat >"$TMPD/vm.yaml" <<EOT
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: bad
spec:
  template:
    spec:
      domain:
$1
  runStrategy: Always
EOT
}

expect_err() { # $1 name, $2 expected stderr regex; resolves $TMPD/*.yaml
	local b rc
	for b in "${bins[@]}"; do
		timeout 20 "$b" resolve -f "$TMPD/vm.yaml" ${EXTRA:-} >"$TMPD/out" 2>"$TMPD/err"
		rc=$?
		if [[ $rc != 1 ]]; then fail "$1 ($b): exit $rc: $(head -3 "$TMPD/err")"; continue; fi
		[[ -s $TMPD/out ]] && fail "$1 ($b): stdout not empty"
		grep -qE "$2" "$TMPD/err" && ok "$1 ($b)" || fail "$1 ($b): stderr lacks /$2/: $(head -3 "$TMPD/err")"
	done
}

vm "        cpu:
          sockets: two"
expect_err "wrong type" "vm.yaml:10:20: spec.template.spec.domain.cpu.sockets: .*must be an integer"
vm "        memory:
          guest: 4GB"
expect_err "bad quantity" "vm.yaml:10:18: spec.template.spec.domain.memory.guest: .*quantity"
vm "        memory:
          guest: 99999999999999999999Ei"
expect_err "huge quantity" "spec.template.spec.domain.memory.guest"
vm "        devices: {
          disks: ["
expect_err "invalid yaml" "vm.yaml:[0-9]+:[0-9]+: invalid YAML"
vm "        devices: {}
  instancetype:
    name: nope"
sed -i 's/^  instancetype:/  instancetype:/' "$TMPD/vm.yaml"
cat >"$TMPD/vm.yaml" <<'EOT'
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: bad
spec:
  instancetype:
    name: nope
  template:
    spec:
      domain:
        devices: {}
EOT
expect_err "missing instancetype" 'vm.yaml:7:11: spec.instancetype.name: virtualmachineclusterinstancetypes.instancetype.kubevirt.io "nope" not found'
# strict decoding against KubeVirt's schema (spec/schema/swagger.json)
vm "        devices: {}
        cpu:
          socket: 2"
expect_err "unknown field" 'vm.yaml:11:11: spec.template.spec.domain.cpu.socket: unknown field "socket"'
vm "        devices:
          networkInterfaceMultiQueue: true"
expect_err "misspelled key" 'vm.yaml:10:11: spec.template.spec.domain.devices.networkInterfaceMultiQueue: unknown field'
vm "        devices:
          autoattachSerialConsole: \"no\""
expect_err "string for a boolean" 'vm.yaml:10:36: spec.template.spec.domain.devices.autoattachSerialConsole: invalid value "no" \(a string\): must be a boolean'
vm "        devices: {}
        rebootPolicy: Sometimes"
expect_err "bad enum" 'vm.yaml:10:23: spec.template.spec.domain.rebootPolicy: unsupported value "Sometimes": must be one of "Reboot", "Terminate"'
vm "        cpu:
          cores: 2"
expect_err "required" 'vm.yaml:9:9: spec.template.spec.domain.devices: Required value'
printf '\x00\x01\xff\xfe garbage: [' >"$TMPD/vm.yaml"
expect_err "binary garbage" "vm.yaml"
printf 'kind: ConfigMap\napiVersion: v1\n' >"$TMPD/vm.yaml"
expect_err "no VM" "no VirtualMachine"
EXTRA="-f $TMPD/does-not-exist" expect_err "missing file" "cannot open .*does-not-exist"
vm "        devices:
          disks:
          - {name: d, disk: {bus: virtio}}
          - {name: e, disk: {bus: virtio}, errorPolicy: pause}
        memory: {guest: 64Mi}
      volumes:
      - {name: d, emptyDisk: {capacity: 1Mi}}
      - {name: e, emptyDisk: {capacity: 1Mi}}"
EXTRA="-o config" expect_err "unknown errorPolicy" \
	'vm.yaml:12:57: spec.template.spec.domain.devices.disks\[1\].errorPolicy: spec.template.spec.domain.devices.disks\[1\].errorPolicy has invalid value "pause"'
finish
