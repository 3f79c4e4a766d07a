# devices.downwardMetrics read from the guest (issue 25 part 4): Linux's
# virtio_console shows the vhostmd port org.github.vhostmd.1; L2 writes
# "GET /metrics/XML" and an empty line to it, as vhostmd's vm-dump-metrics
# does, and reads the document vmlet-dmetrics (in L1, on the port's socket
# next to --api-socket) answers; then a bad request, which must get
# "INVALID REQUEST". The host parses the document: KubeVirt's metrics, the
# VM's vCPUs and memory as the manifest says, the vCPU time above zero.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,1,1 MEM=256Mi
host_prep() {
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          downwardMetrics: {}" >"$SCN_DIR/vm.yaml"
}
l1() { vmlet_run --api-socket /tmp/api.sock; }
l2() {
	mod virtio_pci virtio_console
	dev=
	n=0
	while [ -z "$dev" ] && [ $n -lt 100 ]; do # the ports come after the driver's handshake
		for p in /sys/class/virtio-ports/*; do
			[ "$(cat "$p/name" 2>/dev/null)" = org.github.vhostmd.1 ] && dev=/dev/${p##*/}
		done
		[ -n "$dev" ] || sleep 0.1
		n=$((n + 1))
	done
	rep dm-port "$dev"
	[ -n "$dev" ] || return 0
	exec 3<>"$dev"
	printf 'GET /metrics/XML\n\n' >&3
	: >/tmp/m.xml
	n=0
	while [ $n -lt 200 ] && read -t 20 -r l <&3; do
		echo "$l" >>/tmp/m.xml
		n=$((n + 1))
		case $l in *"</metrics>"*) break ;; esac
	done
	rep dm-doc "$(tr '\n' ' ' </tmp/m.xml | head -c 12000)"
	read -t 5 -r l <&3 # the empty line that ends the answer
	rep dm-end "[$l]"
	printf 'GET /etc/shadow\n\n' >&3
	read -t 20 -r l <&3
	rep dm-invalid "$l"
	exec 3>&-
}
host_check() {
	[[ $(rep dm-port) == /dev/vport* ]] && ok "the vhostmd port in the guest: $(rep dm-port)" ||
		fail "no org.github.vhostmd.1 port in L2"
	python3 - "$(rep dm-doc)" <<'PY' && ok "the guest read KubeVirt's metrics document" ||
import sys, xml.etree.ElementTree as E
m = E.fromstring(sys.argv[1])
got = {(x.get("context"), x.findtext("name")): x.findtext("value") for x in m}
for k in ["HostName", "HostSystemInfo", "VirtualizationVendor", "VirtProductInfo",
          "NumberOfPhysicalCPUs", "TotalCPUTime", "FreePhysicalMemory", "FreeVirtualMemory",
          "MemoryAllocatedToVirtualServers", "UsedVirtualMemory", "PagedInMemory",
          "PagedOutMemory", "Time"]:
    assert ("host", k) in got, k
assert got[("host", "VirtualizationVendor")] == "kubevirt.io", got
assert got[("vm", "ResourceProcessorLimit")] == "1", got
assert got[("vm", "PhysicalMemoryAllocatedToVirtualSystem")] == str(256 * 1024), got
assert got[("vm", "ResourceMemoryLimit")] == str(256 * 1024), got
assert float(got[("vm", "TotalCPUTime")]) > 0, got
print("vm cpu %s s, host free %s KiB" % (got[("vm", "TotalCPUTime")], got[("host", "FreePhysicalMemory")]))
PY
		fail "the document L2 read: $(rep dm-doc | head -c 800)"
	[[ $(rep dm-end) == "[]" ]] && ok "the answer ends with an empty line" || fail "end: $(rep dm-end)"
	[[ $(rep dm-invalid) == "INVALID REQUEST" ]] && ok "a bad request: INVALID REQUEST" ||
		fail "bad request answered: $(rep dm-invalid)"
}
