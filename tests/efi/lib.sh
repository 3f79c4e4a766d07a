# Sourced by the tests/sh/efi_*.sh tests (after tests/lib/sh.sh).
#
# efi_tools: why gnu-efi apps and ESP images cannot be built here (empty
# when they can).
efi_tools() {
	[[ -f /usr/lib/crt0-efi-x86_64.o ]] || { echo "gnu-efi not installed"; return; }
	command -v sgdisk >/dev/null && command -v mcopy >/dev/null || echo "no gdisk/mtools"
}
#
# efi_refused NAME STATUS PATTERN COMMAND...: COMMAND must exit STATUS
# with PATTERN in its output (ok/fail lines).
efi_refused() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	timeout 60 "$@" >"$TMPD/refused.log" 2>&1
	rc=$?
	if ((rc == want)) && grep -q -- "$pat" "$TMPD/refused.log"; then
		ok "$name refused: $(grep -o -- "$pat.*" "$TMPD/refused.log" | head -n1 | cut -c1-90)"
	else
		fail "$name: status $rc"
		cat "$TMPD/refused.log"
	fi
}
#
# efi_vm_yaml NAME [KEY=VALUE ...]: an EFI VirtualMachine manifest on
# stdout (runStrategy Once). Keys: sb (secureBoot, default false; true
# also enables SMM, which KubeVirt requires for it), persistent, serial,
# uuid, mem (default 128Mi), disk=NAME:PATH[:BOOTORDER] (repeatable,
# in disk order; each a hostDisk, on bus virtio unless) bus=NAME:BUS says
# another (none: no bus, KubeVirt's default, SATA; cdrom: a cdrom disk,
# no bus: SATA).
efi_vm_yaml() {
	local name=$1 sb=false persistent= serial= uuid= mem=128Mi disks=() kv bus
	local -A buses=()
	shift
	for kv in "$@"; do
		case $kv in
		sb=*) sb=${kv#*=} ;;
		persistent=*) persistent=${kv#*=} ;;
		serial=*) serial=${kv#*=} ;;
		uuid=*) uuid=${kv#*=} ;;
		mem=*) mem=${kv#*=} ;;
		disk=*) disks+=("${kv#*=}") ;;
		bus=*:*) bus=${kv#*=} && buses[${bus%%:*}]=${bus#*:} ;;
		*) echo "efi_vm_yaml: unknown $kv" >&2; return 1 ;;
		esac
	done
	printf 'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: %s\n' "$name"
	printf 'spec:\n  runStrategy: Once\n  template:\n    spec:\n      domain:\n'
	[[ $sb == true ]] && printf '        features:\n          smm:\n            enabled: true\n'
	printf '        memory:\n          guest: %s\n        firmware:\n' "$mem"
	[[ -n $serial ]] && printf '          serial: %s\n' "$serial"
	[[ -n $uuid ]] && printf '          uuid: %s\n' "$uuid"
	printf '          bootloader:\n            efi:\n              secureBoot: %s\n' "$sb"
	[[ -n $persistent ]] && printf '              persistent: %s\n' "$persistent"
	printf '        devices:\n          disks:\n'
	for kv in "${disks[@]}"; do
		bus=${buses[${kv%%:*}]:-virtio}
		if [[ $bus == cdrom ]]; then
			printf '          - name: %s\n            cdrom: {}\n' "${kv%%:*}"
		else
			printf '          - name: %s\n            disk:' "${kv%%:*}"
			[[ $bus == none ]] && printf ' {}\n' || printf '\n              bus: %s\n' "$bus"
		fi
		[[ $kv == *:*:* ]] && printf '            bootOrder: %s\n' "${kv##*:}"
	done
	printf '      volumes:\n'
	for kv in "${disks[@]}"; do
		local path=${kv#*:}
		printf '      - name: %s\n        hostDisk:\n          path: %s\n          type: Disk\n' \
			"${kv%%:*}" "${path%%:*}"
	done
}
