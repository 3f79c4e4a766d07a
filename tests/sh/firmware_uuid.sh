#!/usr/bin/env bash
# The firmware UUID KubeVirt's VM controller gives a VM without one
# (CalculateLegacyUUID: UUID version 5 of the VM's name in namespace
# 6a1a24a1-4061-4607-8bf4-a3963d0c5895), issue 23 item 3:
# - resolve -o json: in the VM's template and the VMI, computed here
#   independently with Python's uuid.uuid5; a given one is kept; a VMI on
#   its own gets none (KubeVirt leaves its spec alone);
# - the probe guest reads it from SMBIOS type 1 (it read all zeros before),
#   directly and through SeaBIOS; a VMI on its own gets a random version 4;
# - QEMU's -uuid with the same UUID shows the probe the same text (the
#   byte order of the SMBIOS field, checked against an independent VMM);
# - cloud-init's meta-data (resolve -o config): NoCloud instance-id is that
#   UUID, ConfigDrive instance_id NAME.NAMESPACE and uuid that UUID.
source "$(dirname "$0")/../lib/sh.sh"
command -v python3 >/dev/null || skip "no python3"

vm() { # NAME KIND DOMAIN-LINES [VOLUME-LINES]
	printf 'apiVersion: kubevirt.io/v1\nkind: %s\nmetadata: {name: %s, namespace: ns1}\nspec:\n' "$2" "$1"
	local in='      '
	if [[ $2 == VirtualMachine ]]; then
		printf '  runStrategy: Always\n  template:\n    spec:\n'
	else
		in='  '
	fi
	printf '%sdomain:\n%s  memory: {guest: 64Mi}\n%s  devices: {autoattachPodInterface: false}\n' \
		"$in" "$in" "$in"
	[[ -n ${3:-} ]] && printf '%s\n' "$3" | sed "s/^/$in  /"
	[[ -n ${4:-} ]] && printf '%s\n' "$4" | sed "s/^/$in/"
	return 0
}
v5() { python3 -c 'import uuid,sys; print(uuid.uuid5(uuid.UUID("6a1a24a1-4061-4607-8bf4-a3963d0c5895"), sys.argv[1]))' "$1"; }
field() { # JSON-FILE PYTHON-EXPR on d (the document)
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null
}

WANT=$(v5 web-1.a)
vm web-1.a VirtualMachine >"$TMPD/vm.yaml"
"$VMLET" resolve --list -o json -f "$TMPD/vm.yaml" >"$TMPD/list.json" || fail "resolve failed"
vmu=$(field "$TMPD/list.json" '[i for i in d["items"] if i["kind"]=="VirtualMachine"][0]["spec"]["template"]["spec"]["domain"]["firmware"]["uuid"]')
vmiu=$(field "$TMPD/list.json" '[i for i in d["items"] if i["kind"]=="VirtualMachineInstance"][0]["spec"]["domain"]["firmware"]["uuid"]')
[[ $vmu == "$WANT" && $vmiu == "$WANT" ]] &&
	ok "resolve: firmware.uuid $WANT (uuid5 of the name) in the VM and the VMI" ||
	fail "firmware.uuid: VM '$vmu' VMI '$vmiu', want $WANT"
vm web-1.a VirtualMachine 'firmware: {uuid: 11111111-2222-3333-4444-555555555555}' >"$TMPD/given.yaml"
"$VMLET" resolve -o json -f "$TMPD/given.yaml" >"$TMPD/given.json"
[[ $(field "$TMPD/given.json" 'd["spec"]["domain"]["firmware"]["uuid"]') == 11111111-2222-3333-4444-555555555555 ]] &&
	ok "a given firmware.uuid is kept" || fail "given uuid: $(cat "$TMPD/given.json")"
vm lone VirtualMachineInstance >"$TMPD/vmi.yaml"
"$VMLET" resolve -o json -f "$TMPD/vmi.yaml" >"$TMPD/vmi.json" 2>/dev/null
[[ $(field "$TMPD/vmi.json" '(d["spec"]["domain"].get("firmware") or {}).get("uuid")') == None ]] &&
	ok "a VirtualMachineInstance on its own: spec untouched (no firmware.uuid)" ||
	fail "VMI spec: $(cat "$TMPD/vmi.json")"

# cloud-init meta-data, decided in resolution
sed -e 's/devices: {autoattachPodInterface: false}/devices:/' "$TMPD/vm.yaml" >"$TMPD/ci.yaml"
cat >>"$TMPD/ci.yaml" <<'EOF'
          autoattachPodInterface: false
          disks: [{name: ci, disk: {bus: virtio}}, {name: cd, disk: {bus: virtio}}]
      volumes:
      - {name: ci, cloudInitNoCloud: {userData: "#cloud-config"}}
      - {name: cd, cloudInitConfigDrive: {userData: "#cloud-config"}}
EOF
"$VMLET" resolve -o config -f "$TMPD/ci.yaml" >"$TMPD/ci.json"
got=$(field "$TMPD/ci.json" '[(x["instanceId"], x.get("uuid"), x["hostname"]) for x in d["disks"]]')
[[ $got == "[('$WANT', None, 'web-1'), ('web-1.a.ns1', '$WANT', 'web-1')]" ]] &&
	ok "resolve -o config: NoCloud instance-id = firmware UUID, ConfigDrive NAME.NS + uuid, hostname web-1" ||
	fail "cloud-init meta-data: $got"

have_kvm || {
	finish
}
probe_uuid() { # YAML: the guest's SMBIOS type 1 UUID (and match: in $TMPD/p.json)
	timeout 120 "$VMLET" probe -o json -f "$1" >"$TMPD/p.json" 2>"$TMPD/p.err"
	field "$TMPD/p.json" 'd["guest"].get("systemUuid")'
}
g=$(probe_uuid "$TMPD/vm.yaml")
[[ $g == "$WANT" && $(field "$TMPD/p.json" 'd["match"]') == True ]] &&
	ok "probe: the guest's SMBIOS system UUID is $WANT, match" ||
	fail "probe: guest '$g', want $WANT; $(tail -2 "$TMPD/p.err")"
vm web-1.a VirtualMachine 'firmware: {bootloader: {bios: {}}}' >"$TMPD/bios.yaml"
if [[ -f /usr/share/seabios/bios.bin ]]; then
	g=$(probe_uuid "$TMPD/bios.yaml")
	[[ $g == "$WANT" && $(field "$TMPD/p.json" 'd["guest"].get("biosVendor")') == SeaBIOS ]] &&
		ok "probe through SeaBIOS: the same system UUID" || fail "SeaBIOS: guest '$g'; $(tail -2 "$TMPD/p.err")"
fi
g1=$(probe_uuid "$TMPD/vmi.yaml")
g2=$(probe_uuid "$TMPD/vmi.yaml")
[[ $g1 =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ && $g1 != "$g2" ]] &&
	ok "a VMI on its own: a random version 4 system UUID per start ($g1, $g2)" ||
	fail "VMI system UUID: '$g1' '$g2'"

ELF=build/fw/probe.elf
if command -v qemu-system-x86_64 >/dev/null && [[ -f $ELF ]]; then
	U=$(v5 qemu-oracle)
	timeout 60 qemu-system-x86_64 -enable-kvm -m 128 -nodefaults -no-user-config -nographic \
		-display none -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=4 -M q35 \
		-kernel "$ELF" -uuid "$U" -serial "file:$TMPD/q.txt" 2>"$TMPD/q.err"
	q=$(sed -n 's/^systemUuid=//p' "$TMPD/q.txt")
	vm qemu-oracle VirtualMachine >"$TMPD/q.yaml"
	g=$(probe_uuid "$TMPD/q.yaml")
	[[ $q == "$U" && $g == "$U" ]] && ok "QEMU -uuid $U and vmlet show the probe the same UUID" ||
		fail "QEMU oracle: QEMU '$q', vmlet '$g', want $U; $(tail -2 "$TMPD/q.err")"
else
	echo "no qemu-system-x86_64 or $ELF: the QEMU comparison is not run"
fi
finish
