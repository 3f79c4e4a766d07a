# Sourced by tests/nested/run (bash, on the host): building the L1 and L2
# initramfs images and the helpers scenarios use in host_prep/host_check.

# mods_pick SRC DST MOD...: copy the kernel modules MOD (names, - or _) and
# everything they depend on from the module tree SRC (lib/modules/VERSION,
# with a modules.dep) into DST, with a modules.dep of just those, so that
# busybox modprobe in the guest finds them. Built-in ones are skipped.
mods_pick() {
	local src=$1 dst=$2 m line f
	shift 2
	mkdir -p "$dst"
	: >"$dst/modules.dep.new"
	for m; do
		m=${m//-/_}
		line=$(awk -v m="$m" -F: '{ n = $1; sub(/.*\//, "", n); sub(/\.ko.*$/, "", n); gsub(/-/, "_", n)
			if (n == m) { print; exit } }' "$src/modules.dep")
		if [[ -z $line ]]; then # built into the kernel: nothing to load
			grep -q -E "/${m//_/[-_]}\.ko" "$src/modules.builtin" 2>/dev/null && continue
			echo "mods_pick: no module $m in $src" >&2
			return 1
		fi
		for f in ${line//:/}; do
			[[ -f $dst/$f ]] && continue
			mkdir -p "$dst/$(dirname "$f")"
			cp "$src/$f" "$dst/$f"
			grep -m1 "^$f:" "$src/modules.dep" >>"$dst/modules.dep.new"
		done
	done
	sort -u "$dst/modules.dep.new" >"$dst/modules.dep" && rm "$dst/modules.dep.new"
}

# cpio_img DIR OUT: DIR as a newc cpio (an initramfs), not compressed: the
# guest kernels would inflate it emulated, at every boot
cpio_img() {
	(cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$2"
}

# copy_prog DST PROG: a dynamic program and the libraries it loads, by the
# same paths, under DST (for L1, whose initramfs has no libc of its own)
copy_prog() {
	local dst=$1 p l
	p=$(command -v "$2") || return 1
	mkdir -p "$dst/bin"
	cp -L "$p" "$dst/bin/"
	for l in $(ldd "$p" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		[[ -e $dst$l ]] && continue
		mkdir -p "$dst$(dirname "$l")"
		cp -L "$l" "$dst$l"
	done
}

# vm_yaml NAME SOCKETS,CORES,THREADS MEMORY [DOMAIN-DEVICES-YAML [VOLUMES-YAML]]:
# a VirtualMachine (runStrategy Once, grace period 30 s, no pod network
# unless the devices say otherwise) on stdout. DOMAIN-DEVICES-YAML: lines
# for spec.template.spec.domain.devices, indented 10 spaces; VOLUMES-YAML:
# lines for spec.template.spec.volumes, indented 6.
vm_yaml() {
	local name=$1 s c t
	IFS=, read -r s c t <<<"$2"
	cat <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: $name, namespace: default}
spec:
  runStrategy: Once
  template:
    spec:
      terminationGracePeriodSeconds: 30
      domain:
        cpu: {sockets: $s, cores: $c, threads: $t}
        memory: {guest: $3}
        devices:
${4:-          autoattachPodInterface: false}
EOF
	[[ -z ${5:-} ]] || printf '      volumes:\n%s\n' "$5"
}

# vm_yaml_pod NAME S,C,T MEMORY INTERFACE: vm_yaml with one interface on
# the pod network; INTERFACE is its flow-style entry, e.g. "{name: default,
# masquerade: {}}" (the network is named default)
vm_yaml_pod() {
	vm_yaml "$1" "$2" "$3" "          interfaces:
          - $4" | sed 's/^      domain:/      networks: [{name: default, pod: {}}]\n      domain:/'
}

# bzimage_version FILE: the kernel release of a bzImage (its setup header's
# kernel_version string, "6.1.0-56-cloud-amd64 (...)"), for /lib/modules
bzimage_version() {
	local off
	off=$(od -An -tu2 -j 526 -N 2 "$1" | tr -d ' ')
	[[ -n $off && $off != 0 ]] || return 1
	dd if="$1" bs=1 skip=$((off + 512)) count=64 2>/dev/null | tr '\0' ' ' | cut -d' ' -f1
}

# pod_traffic_check DHCP GW: host_check of pod_traffic (lib-l2.sh): the
# lease the guest got ("ip=... mask=... router=..."), its gateway GW
# answering pings, the node beyond the pod reached by ping and by 1 MiB of
# TCP, port 8080 forwarded inward to the guest, 8081 (not in ports) not.
pod_traffic_check() {
	[[ $(rep dhcp) == "$1" ]] && ok "DHCP: $1" || fail "DHCP: '$(rep dhcp)', want '$1'"
	[[ $(rep ping-gw) == "$2 3 packets received" ]] && ok "ping the gateway $2" ||
		fail "ping the gateway: '$(rep ping-gw)', want '$2 3 packets received'"
	[[ $(rep ping-out) == "3 packets received" ]] && ok "ping the node beyond the pod (10.201.0.1)" ||
		fail "ping 10.201.0.1: '$(rep ping-out)'"
	[[ -n $(rep tcp-sent) && $(rep tcp-sent) == "$(rep node-recv)" ]] &&
		ok "1 MiB over TCP to the node beyond the pod arrived intact" ||
		fail "TCP out: sent '$(rep tcp-sent)', the node got '$(rep node-recv)'"
	[[ $(rep recv-8080) == to-8080 ]] && ok "port 8080 (in ports) forwarded inward to the guest" ||
		fail "port 8080: the guest got '$(rep recv-8080)', want to-8080"
	[[ -z $(rep recv-8081) && -n $(rep recv-8080) ]] && ok "port 8081 (not in ports) not forwarded" ||
		fail "port 8081: the guest got '$(rep recv-8081)', want nothing"
}
