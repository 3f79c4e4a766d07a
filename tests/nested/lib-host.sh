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

# ---- snapshot and migration (scenarios snapshot, migrate) -----------------
# mig_host_prep: $SCN_DIR/vm.yaml, the scenario's SHAPE and MEM with a
# virtio disk (serial "data": $SCN_DIR/data.img, a 32 MiB empty ext4
# hostDisk, the same file for every vmlet of the scenario) and one
# interface "default" (bridge binding on the pod network, one queue pair
# per vCPU; L1 gives it a tap of its pod with --tap, lib-l1.sh's
# mig_vm_run)
mig_host_prep() {
	mke2fs -q -t ext4 -F "$SCN_DIR/data.img" 32M >/dev/null || return 1
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          networkInterfaceMultiqueue: true
          disks:
          - {name: data, serial: data, disk: {bus: virtio}}
          interfaces:
          - {name: default, bridge: {}}" "      - {name: data, hostDisk: {path: /scn/$SCN/data.img, type: Disk}}" |
		sed 's/^      domain:/      networks: [{name: default, pod: {}}]\n      domain:/' >"$SCN_DIR/vm.yaml"
}

# mig_check MARK WHAT: host_check of mig_workload (lib-l2.sh) across a move
# (the report's lines after "MARK" are the moved guest's): the disk read
# back whole after the move and never wrong, unmounted at the power-off,
# e2fsck -fn clean in L1, the file in the image the guest's last copy; the
# TCP stream to the node went on after the move, in order, unbroken; the
# CPUID, PCI config and sysfs hashes the same before and after.
mig_check() {
	local mark=$1 what=$2 n_after bad first tcp at img sum states cl pl sl
	n_after=$(sed -n "/^$mark\$/,\$ s/^disk [0-9]* ok\$/x/p" "$R" | grep -c x)
	first=$(sed -n "/^$mark\$/,\$ s/^disk //p" "$R" | head -n 1)
	bad=$(grep -c '^disk [0-9]* bad' "$R")
	[[ $bad == 0 && $n_after -ge 2 && $first == *' ok' ]] &&
		ok "disk: fsynced blocks read back whole from the disk after the $what ($n_after times, first: block $first)" ||
		fail "disk: $bad bad reads, $n_after good ones after the $what (first '$first')"
	[[ $(rep disk-umount) == ok ]] && ok "the guest unmounted its disk at the power-off" ||
		fail "disk unmount: '$(rep disk-umount)'"
	[[ $(rep e2fsck) == 0\ * ]] && ok "e2fsck -fn in L1 clean: $(rep e2fsck)" ||
		fail "e2fsck -fn in L1: '$(rep e2fsck)' $(rep e2fsck-out | tr '\n' ';')"
	img=$D/data.back
	if l1_get "scn/$SCN/data.img" "$img"; then
		sum=$(debugfs -R "cat /data" "$img" 2>/dev/null | md5sum | cut -d' ' -f1)
		[[ -n $(rep disk-final) && $sum == "$(rep disk-final)" ]] &&
			ok "the file in the image is the guest's last copy ($sum)" ||
			fail "the file in the image: $sum, the guest's copy: '$(rep disk-final)'"
		rm -f "$img"
	else
		fail "no data.img back from L1"
	fi
	[[ $(rep net-queues) == "2 2" ]] &&
		ok "eth0 has 2 queue pairs, the stream is sent from vCPU 1 (its own queue)" ||
		fail "eth0's tx queues and the stream's CPU: '$(rep net-queues)', want '2 2'"
	tcp=$(rep tcp-recv) at=$(rep tcp-at-move)
	[[ -n $tcp && -n $at && ${tcp#* } == 0 && ${tcp%% *} -ge $((at + 5)) && -z $(rep tcp-ended) ]] &&
		ok "TCP: one stream to the node, in order, $at lines before the $what, ${tcp%% *} in all" ||
		fail "TCP: received '$tcp' (lines, out of order), '$at' at the $what, ended: '$(rep tcp-ended)'"
	# (a line cut by the power-off, the kernel's last words in it, is no state)
	states=$(sed -n -E 's/^state [0-9]+ ([0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8}) ?$/\1/p' "$R" | sort -u)
	read -r cl pl sl <<<"$(rep state-lines)"
	[[ ${cl:-0} -ge 40 && ${pl:-0} -ge 3 && ${sl:-0} -ge 10 ]] &&
		ok "state read: $cl lines of raw CPUID, $pl PCI functions' config space, $sl lines of sysfs" ||
		fail "state: '$(rep state-lines)' lines of CPUID, PCI functions, sysfs (cpuid missing?)"
	[[ $(grep -c . <<<"$states") == 1 && -z $(rep state-diff) &&
		-n $(sed -n "/^$mark\$/q; /^state /p" "$R") && -n $(sed -n "/^$mark\$/,\$ {/^state /p}" "$R") ]] &&
		ok "CPUID, PCI config space, topology and devices the same before and after the $what ($states)" ||
		fail "state before/after the $what: $(tr '\n' ';' <<<"$states") $(rep state-diff | head -n 8 | tr '\n' ';')"
}

# tpm_nv_check VALUE: a guest's first "tpm-nv" report: the NV index defined
# and written. Under QEMU only, TPM_RC_HIERARCHY (0x185) is a note: SeaBIOS's
# TPM setup failed (a timeout of the emulated L1 under load) and its failure
# path disabled the owner hierarchy (tpm_set_failure); the oracle's firmware,
# not the device (seen once in ~28 runs at a load of 7)
tpm_nv_check() {
	if [[ $1 == "written 00000000 00000000" ]]; then
		ok "TPM2_NV_DefineSpace and NV_Write of \"vmlet-nv\" succeeded"
	elif [[ ${VMM:-} == qemu && $1 == "written 00000185 "* ]]; then
		echo "note: $SCN: NV refused, TPM_RC_HIERARCHY: SeaBIOS disabled the owner hierarchy ('$1')"
	else
		fail "NV: '$1'"
	fi
}

# tpm_check GET: host_check of tpm_report (lib-l2.sh), the part every TPM
# scenario shares; GET KEY reads a report value (rep, or the first run's
# where the guest ran twice)
tpm_check() {
	local get=$1
	[[ $($get tpm-dev) == "/dev/tpm0 /dev/tpmrm0 " ]] && ok "L2 has /dev/tpm0 and /dev/tpmrm0" ||
		fail "TPM devices: '$($get tpm-dev)' (tpm dmesg: $($get tpm-dmesg | head -3))"
	[[ $($get tpm-version) == 2 && $($get tpm-hid) == MSFT0101 ]] &&
		ok "a TPM 2.0 on ACPI MSFT0101" ||
		fail "TPM version '$($get tpm-version)', ACPI id '$($get tpm-hid)'"
	[[ $($get tpm-getrandom) == "800100000014000000000008 41" ]] &&
		ok "TPM2_GetRandom through /dev/tpm0: success, 8 bytes" ||
		fail "TPM2_GetRandom: '$($get tpm-getrandom)'"
}

# tpm_compare GET MODEL: the TPM as Linux sees it equals what the report
# of scenario $COMPARE (QEMU's -device MODEL) says, when there is one
tpm_compare() {
	local get=$1 model=$2 k mine theirs other=${COMPARE:-}
	[[ -n $other && -f ${R%/*/*}/$other/report ]] || return 0
	for k in tpm-dev tpm-version tpm-hid tpm-banks tpm-getrandom; do
		mine=$($get "$k")
		theirs=$(sed -n "s/^$k //p" "${R%/*/*}/$other/report")
		[[ $mine == "$theirs" ]] && ok "$k as QEMU's $model" || fail "$k: vmlet '$mine', QEMU '$theirs'"
	done
}
