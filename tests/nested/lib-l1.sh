# Sourced by the L1 /init (busybox ash): running scenarios. Each scenario
# runs in a subshell that sources /nested/scenarios/NAME.sh; its files
# (what host_prep made) are in $D = /scn/NAME. The default l1 part is
# vm_run: the L2 kernel and initramfs under vmlet (VMM=vmlet) or QEMU
# (VMM=qemu), with $D/vm.yaml.

up() { cut -d' ' -f1 /proc/uptime; }

# l2_cmdline: the L2 kernel command line for this scenario
# (no soft-lockup or RCU stall reports: a loaded host that does not run the
# emulated L1 for a while is no guest problem, QEMU's L2 reports them too)
l2_cmdline() {
	echo "console=ttyS0 quiet panic=-1 rdinit=/init nosoftlockup rcupdate.rcu_cpu_stall_suppress=1" \
		"nested.scn=$SCN${L2_APPEND:+ $L2_APPEND} $(cat /nested/l2-append)"
}

# l2_dir: where the scenario's L2 kernel and initramfs are (L2_FLAVOR)
l2_dir() { [ "${L2_FLAVOR:-cloud}" = generic ] && echo /l2/generic || echo /l2; }

# vmlet_run [ARGS...]: vmlet run with $D/vm.yaml, the L2 kernel and
# initramfs (l2_dir), the console on stdout, vmlet's log in $D/vmm.log; its exit
# status. TIMEBOX (default 300 s) bounds it; NETNS=PID runs it in the
# network namespace of process PID (NETNS_FLAGS="-m -p -n": its mount, pid
# and network namespaces; the time box's signal then reaches nsenter, not
# vmlet: end such a run by its pod, mig_pod_kill); BOOT=efi boots vm.yaml's ESP through
# vmlet's firmware (the kernel and initramfs on it, see scenarios/efi.sh).
vmlet_run() {
	if [ "${BOOT:-}" = efi ]; then # the firmware boots the ESP of vm.yaml
		set -- --cmdline "initrd=\\initrd.img $(l2_cmdline)" "$@"
	else
		set -- --kernel "$(l2_dir)/vmlinuz" --initrd "$(l2_dir)/initrd.img" --cmdline "$(l2_cmdline)" "$@"
	fi
	# (at TIMEBOX SIGTERM, not SIGKILL: vmlet presses the power button, and
	# after the grace period stops a hung guest itself, exit 5, logging where
	# vCPU 0 was stuck; SIGKILL 60 s later if even that does not end it)
	timeout -s TERM -k 60 "${TIMEBOX:-300}" ${NETNS:+nsenter -t "$NETNS" ${NETNS_FLAGS:--n}} vmlet run -f "$D/vm.yaml" \
		--console stdio --log-format text ${VENDOR:+--cpu-vendor $VENDOR} "$@" 2>"$D/vmm.log"
}

# qemu_run [ARGS...]: QEMU -enable-kvm (QEMU_MACHINE: q35 with SeaBIOS, the
# default, or microvm with qboot) with the shape and
# memory host_prep wrote to $D/qemu.smp and $D/qemu.mem, the same kernel,
# initramfs and command line.
qemu_run() {
	case ${QEMU_MACHINE:-q35} in
	microvm) set -- -M microvm,acpi=on,rtc=on,x-option-roms=off "$@" ;;
	*) set -- -M q35 "$@" ;;
	esac
	timeout -s KILL "${TIMEBOX:-300}" /d/sys/qemu -L /d/sys/share -enable-kvm \
		-cpu "$(qemu_cpu)" \
		-smp "$(cat "$D/qemu.smp")" -m "$(cat "$D/qemu.mem")" \
		-nodefaults -no-user-config -nographic -display none -no-reboot -serial stdio \
		-kernel "$(l2_dir)/vmlinuz" -initrd "$(l2_dir)/initrd.img" -append "$(l2_cmdline)" "$@" 2>"$D/vmm.log"
}

vendor_id() { case $1 in intel) echo GenuineIntel ;; *) echo AuthenticAMD ;; esac; }

# qemu_cpu: QEMU's -cpu for VENDOR (without one: host and QEMU_CPU_EXTRA's
# flags, e.g. the hyperv-qemu scenario's hv-*). A guest of the other
# vendor than L1's gets no hypercall-based PV features, as under vmlet (its CPUID does the
# same): Linux would issue that vendor's hypercall instruction (VMCALL on
# AMD), which KVM patches into the guest's read-only kernel text, an oops
# (seen in QEMU's L2: "BUG: unable to handle page fault" at the VMCALL in
# __send_ipi_mask, 1 of 3 runs of topo-2s3c2t-intel-qemu).
qemu_cpu() {
	[ -n "${VENDOR:-}" ] || { echo "host${QEMU_CPU_EXTRA:+,$QEMU_CPU_EXTRA}"; return; }
	_v=$(vendor_id "$VENDOR")
	if grep -q "^vendor_id.*$_v" /proc/cpuinfo; then
		echo "host,vendor=$_v"
	else
		echo "host,vendor=$_v,-kvm-pv-ipi,-kvm-pv-unhalt,-kvm-pv-sched-yield"
	fi
}

# kvmtool_run [ARGS...]: kvmtool's lkvm (scripts/fetch-kvmtool; a peer of
# scripts/bench-linux) with the vCPU count and memory of $D/qemu.smp and
# $D/qemu.mem, the same kernel, initramfs and command line, nothing else
# (--nodefaults: no command line of its own, no network, no 9p root). It
# has no ACPI on x86 (MP table): a powered-off guest would halt, so its
# scenarios end with L2_END=reboot (Linux's keyboard-controller reset ends
# lkvm). Its stdin is a FIFO open read-write (never EOF: lkvm's console
# thread polls stdin and would spin on /dev/null); HOME=$D for its socket.
kvmtool_run() {
	_c=$(sed 's/[a-z]*=//g; s/,/ /g' "$D/qemu.smp")
	_n=1
	for _x in $_c; do _n=$((_n * _x)); done
	rm -f "$D/lkvm.in" && mkfifo "$D/lkvm.in"
	HOME=$D timeout -s KILL "${TIMEBOX:-300}" /d/sys/lkvm run --nodefaults --network mode=none \
		-c "$_n" -m "$(cat "$D/qemu.mem")" -k "$(l2_dir)/vmlinuz" -i "$(l2_dir)/initrd.img" \
		-p "$(l2_cmdline)" "$@" 2>"$D/vmm.log" 0<>"$D/lkvm.in"
}

vm_run() {
	case ${VMM:-vmlet} in
	qemu) qemu_run "$@" ;;
	kvmtool) kvmtool_run "$@" ;;
	*) vmlet_run "$@" ;;
	esac
}

# run_scn NAME: one scenario, framed for the host, in a session of its
# own under a watchdog: a scenario whose l1 part outlives its TIMEBOX by
# 120 s (stuck outside vm_run's own time box, e.g. in a `vmlet ctl` that
# never answers) has every process of its session killed and ends with
# rc=124, which tests/nested/check.py counts as a hang (tests/sh/nested_linux.sh
# reruns those once); the scenarios after it still run.
run_scn() {
	_lim=$(. "/scn/$1/meta" && echo "${TIMEBOX:-300}")
	_end=$(($(cut -d. -f1 /proc/uptime) + _lim + 120))
	setsid sh -c '. /nested/lib-l1.sh && scn_body "$1"' scn "$1" &
	_sid=$!
	while kill -0 "$_sid" 2>/dev/null; do
		if [ "$(cut -d. -f1 /proc/uptime)" -ge "$_end" ] && [ "$_sid" -gt 1 ]; then
			echo "@@WATCHDOG $1 up=$(up): still running $((_lim + 120)) s after its start, its processes killed"
			kill -s KILL "-$_sid" 2>/dev/null # its session: pgid = $_sid > 1
			wait "$_sid"
			echo "@@END $1 rc=124 up=$(up)"
			return
		fi
		sleep 1
	done
	wait "$_sid"
}

# scn_body NAME: the scenario itself (run_scn's session): its l1 part, else
# vm_run, between "@@BEGIN" and "@@END NAME rc=..."
scn_body() {
	SCN=$1
	D=/scn/$1
	. "$D/meta"
	. "/nested/scenarios/$1.sh"
	t0=$(up)
	echo "@@BEGIN $SCN up=$t0"
	if type l1 >/dev/null 2>&1; then
		l1 </dev/null
	else
		vm_run </dev/null
	fi
	rc=$?
	echo "@@END $SCN rc=$rc up=$(up) t0=$t0"
	[ -f "$D/vmm.log" ] && sed 's/^/@V /' "$D/vmm.log"
}

# vm_run_on PATTERN ACTION [ARGS...]: vm_run with its console copied to
# stdout and its stdin a pipe that fd 4 writes to; ACTION is run by sh -c
# once, when a console line contains PATTERN (e.g. 'kill -TERM $(pidof
# vmlet)' or 'echo hello >&4'; it sees fd 4 and exported variables, not
# the caller's other ones). vm_run's exit status.
# awk reads the lines, not ash's `read`: when a signal interrupts busybox
# ash's `read` (SIGCHLD: a background child of the shell exits), it starts
# the line again and drops what it had read of it. That is how net-bridge
# once lost a character: the node's nc exited as the guest printed
# "@R console-ready", and the shell read "R console-ready"
# (tests/sh/nested_console_reader.sh).
vm_run_on() {
	rm -f /tmp/con /tmp/in && mkfifo /tmp/con /tmp/in
	exec 4<>/tmp/in
	_pat=$1 _act=$2
	shift 2
	vm_run "$@" </tmp/in >/tmp/con &
	_bg=$!
	VM_RUN_PAT=$_pat VM_RUN_ACT=$_act awk '
		{ print; fflush() }
		!hit && index($0, ENVIRON["VM_RUN_PAT"]) { hit = 1; system(ENVIRON["VM_RUN_ACT"]) }
	' </tmp/con
	exec 4>&-
	wait $_bg
}

# pod_up: L1 plays a pod on a node, as KubeVirt's pod network looks: a
# network namespace (NETNS, the pid of a process in it; `pod CMD...` runs
# CMD there) whose eth0 (10.200.0.2/24, default route via the node) is a
# veth to L1's own namespace, "the node": node0 10.200.0.1/24, and
# 10.201.0.1 on its lo, an address beyond the pod's subnet. Exports NETNS
# (vmlet_run runs in it) and VMLET_POD_INTERFACE=eth0. pod_down ends it.
pod_up() {
	for m in veth tun bridge; do modprobe $m || return 1; done
	unshare -n sleep 600 &
	NETNS=$!
	while [ "$(readlink /proc/$NETNS/ns/net)" = "$(readlink /proc/1/ns/net)" ]; do sleep 0.1; done
	ip link add eth0 type veth && ip link set eth0 netns "$NETNS" && ip link set veth0 name node0 || return 1
	ip addr add 10.200.0.1/24 dev node0 && ip link set node0 up || return 1
	ip link set lo up && ip addr add 10.201.0.1/32 dev lo || return 1
	pod ip link set lo up && pod ip addr add 10.200.0.2/24 dev eth0 && pod ip link set eth0 up &&
		pod ip route add default via 10.200.0.1 || return 1
	export VMLET_POD_INTERFACE=eth0 NETNS
}
pod() { nsenter -t "$NETNS" -n "$@"; }
pod_down() {
	kill "$NETNS" 2>/dev/null
	ip addr del 10.201.0.1/32 dev lo 2>/dev/null
	ip link del node0 2>/dev/null
	return 0
}

# pod_traffic_run [ARGS...]: vm_run in the pod of pod_up with the node's
# side of pod_traffic (lib-l2.sh): a listener on the node's port 5000
# ("@R node-recv MD5 BYTES": what arrived) and, once the guest listens,
# "to-8081" and then "to-8080" sent from the node to the pod's address
# 10.200.0.2 on those ports. "@R node-route-to-guest": how the node would
# route to 10.0.2.2, a masquerade guest's own address. pod_down after it.
pod_traffic_run() {
	echo "@R node-route-to-guest $(ip route get 10.0.2.2 2>&1 | head -n 1)"
	sleep 600 | nc -l -p 5000 >/tmp/recv &
	_ncpid=$!
	vm_run_on "@R guest-listening" \
		'(for p in 8081 8080; do echo to-$p | nc -w 5 10.200.0.2 $p; done) >/dev/null 2>&1 &' "$@"
	_rc=$?
	echo "@R node-recv $(md5sum </tmp/recv | cut -d' ' -f1) $(wc -c </tmp/recv)"
	kill "$_ncpid" $(pidof sleep) 2>/dev/null
	pod_down
	return $_rc
}

# ---- pods for snapshot and migration (scenarios snapshot, migrate) --------
# Each pod is a mount, pid and network namespace of its own, as a
# Kubernetes pod's; they share L1's files (the disk image, the migration
# socket's directory /tmp/mig, the control sockets). The node:
# bridge brn, 10.200.0.1/24 (mig_node_up). A pod (mig_pod_up NAME): eth0 a
# veth whose peer n-NAME is a port of brn, and in the pod a bridge br0 of
# eth0 and the VM's tap (tap0: vmlet makes it, mig_pod_tap adds it), so
# the guest (10.200.0.2, its own MAC) is on the node's segment from
# whichever pod runs it. mig_pod_up sets POD_NAME (the pid of the pod's
# init, in L1's numbering); `pod_run NAME CMD...` runs CMD in it;
# mig_pod_kill NAME ends every process of the pod (its init dies).
mig_node_up() {
	for m in veth tun bridge; do modprobe $m || return 1; done
	# (a MAC of its own: a bridge without one takes its ports' lowest,
	# and a pod that goes away would change the node's MAC under the
	# guest's ARP cache, cutting the guest off until that entry expires)
	ip link add brn type bridge && ip link set brn address 02:00:0a:c8:00:01 &&
		ip addr add 10.200.0.1/24 dev brn && ip link set brn up
}
# mig_node_down: the node's bridge and listener gone (the pods first)
mig_node_down() {
	[ -n "${MIG_NC:-}" ] && [ "$MIG_NC" -gt 1 ] && kill "$MIG_NC" 2>/dev/null
	ip link del brn 2>/dev/null
	return 0
}
mig_pod_up() {
	unshare -m -p -n -f --mount-proc sleep 3000 &
	_u=$! _p="" _n=0
	while [ -z "$_p" ] && [ $_n -lt 100 ]; do
		for _s in /proc/[0-9]*/stat; do
			[ "$(cut -d' ' -f4 "$_s" 2>/dev/null)" = "$_u" ] && _p=${_s#/proc/} && _p=${_p%/stat}
		done
		[ -n "$_p" ] || sleep 0.1
		_n=$((_n + 1))
	done
	[ -n "$_p" ] || return 1
	while [ "$(readlink /proc/$_p/ns/net)" = "$(readlink /proc/1/ns/net)" ]; do sleep 0.1; done
	eval "POD_$1=$_p"
	ip link add eth0 type veth && ip link set eth0 netns "$_p" && ip link set veth0 name "n-$1" &&
		ip link set "n-$1" master brn && ip link set "n-$1" up || return 1
	pod_run "$1" sh -c 'ip link set lo up && ip link add br0 type bridge &&
		ip link set eth0 master br0 && ip link set eth0 up && ip link set br0 up'
}
pod_pid() { eval "echo \${POD_$1}"; }
pod_run() {
	_p=$(pod_pid "$1")
	shift
	nsenter -t "$_p" -m -p -n "$@"
}
# mig_pod_tap NAME: wait (60 s) for vmlet's tap0 in pod NAME, add it to br0
mig_pod_tap() {
	_n=0
	while ! pod_run "$1" ip link show tap0 >/dev/null 2>&1 && [ $_n -lt 600 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
	pod_run "$1" ip link set tap0 master br0
}
mig_pod_kill() {
	_p=$(pod_pid "$1")
	[ -n "$_p" ] && [ "$_p" -gt 1 ] && kill -KILL "$_p" 2>/dev/null
	ip link del "n-$1" 2>/dev/null
	return 0
}
# mig_vm_run POD ARGS...: vm_run in that pod with its tap0 for the
# interface "default" (vmlet answers no DHCP: the guest sets its address)
mig_vm_run() {
	_pod=$1
	shift
	NETNS=$(pod_pid "$_pod") NETNS_FLAGS="-m -p -n" vm_run --tap default=tap0 "$@"
}
# mig_listen: the node's end of the guest's TCP stream (mig_workload in
# lib-l2.sh): port 5000, what arrives in /tmp/tcp.recv (nc's pid: MIG_NC). mig_tcp_report:
# "@R tcp-recv LINES BAD": the lines that arrived and how many of them are
# not "tcp N" in order (a gap, a repeat, a new stream).
mig_listen() {
	: >/tmp/tcp.recv
	sleep 3000 | nc -l -p 5000 >/tmp/tcp.recv &
	MIG_NC=$!
}
mig_tcp_report() {
	echo "@R tcp-recv $(awk '$1 != "tcp" || $2 != NR { b++ } END { print NR, b + 0 }' /tmp/tcp.recv)"
}
# mig_fsck: e2fsck -fn of the guest's disk $D/data.img, in L1, once the
# guest powered off: "@R e2fsck STATUS LAST-LINE"
mig_fsck() {
	e2fsck -fn "$D/data.img" >/tmp/fsck.out 2>&1
	echo "@R e2fsck $? $(tail -n 1 /tmp/fsck.out)"
	[ "$(grep -c . /tmp/fsck.out)" -le 8 ] || sed 's/^/@R e2fsck-out /' /tmp/fsck.out | head -n 20
}

# qemu_run_swtpm MODEL: qemu_run with QEMU's -device MODEL (tpm-crb,
# tpm-tis) on a swtpm started here (-tpmdev emulator), its state in
# /tmp/swtpm-$SCN (scenarios tpm-qemu, tpm-tis-qemu)
qemu_run_swtpm() {
	mkdir -p "/tmp/swtpm-$SCN"
	swtpm socket --tpm2 --tpmstate "dir=/tmp/swtpm-$SCN" \
		--ctrl "type=unixio,path=/tmp/swtpm-$SCN/sock" --daemon --terminate || return 1
	qemu_run -chardev "socket,id=chrtpm,path=/tmp/swtpm-$SCN/sock" \
		-tpmdev emulator,id=tpm0,chardev=chrtpm -device "$1,tpmdev=tpm0"
}

# mig_sample SOCKET...: every 2 s until /tmp/sample.stop, for the report
# (not checked): "@R sample UPTIME LINES" and per node port n-* its rx/tx
# frames (rx: from the pod), L1's neighbour entry of the guest, and each
# SOCKET's vmlet_net_{rx,tx}_packets_total (its control socket is busy
# while a migration runs: "-")
mig_sample() {
	rm -f /tmp/sample.stop
	while [ ! -f /tmp/sample.stop ]; do
		_l="$(up) $(grep -c . /tmp/tcp.recv)"
		for _i in /sys/class/net/n-*; do
			[ -e "$_i" ] && _l="$_l ${_i##*/}=$(cat "$_i/statistics/rx_packets")/$(cat "$_i/statistics/tx_packets")"
		done
		_l="$_l brn=$(cat /sys/class/net/brn/address) neigh=$(ip neigh show 10.200.0.2 | tr ' ' ,)"
		for _s; do
			_m=$(timeout 1 vmlet ctl "$_s" metrics 2>/dev/null | sed -n 's/^vmlet_net_\([rt]x\)_packets_total{.*} /\1=/p' | tr '\n' ,)
			_l="$_l ${_s##*/}:${_m:--}"
		done
		echo "@R sample $_l"
		sleep 2
	done
}

# con_follow FILE: print FILE's lines (a VMM's console, written in the
# background) not printed yet, each once: its "@R" lines reach the report,
# the others the scenario's console. $_seen counts them (0 for a new FILE).
con_follow() {
	_n=$(wc -l <"$1")
	[ "$_n" -gt "$_seen" ] && sed -n "$((_seen + 1)),${_n}p" "$1"
	_seen=$_n
}

# con_wait FILE PATTERN SECONDS: con_follow FILE until it has PATTERN, the
# VMM ($vmpid) ended or SECONDS passed; 0 when PATTERN came
con_wait() {
	_w=0
	while ! grep -q "$2" "$1" && kill -0 "$vmpid" 2>/dev/null && [ $_w -lt $(($3 * 5)) ]; do
		con_follow "$1"
		sleep 0.2
		_w=$((_w + 1))
	done
	con_follow "$1"
	grep -q "$2" "$1"
}

# vm_button_off SOCKET FILE: once the guest on FILE's console listens for
# the power button ("@R pwrbtn-listening", 60 s), press it through SOCKET
# (a press before that is lost), then vm_wait_off
vm_button_off() {
	con_wait "$2" '@R pwrbtn-listening' 60
	vmlet ctl "$1" power-button >/dev/null
	vm_wait_off
}

# vm_wait_off: after a power-button press, wait (30 s) for the VMM ($vmpid)
# to end, else SIGTERM every vmlet (it presses the button again, then stops
# the guest after its grace period); the VMM's exit status
vm_wait_off() {
	_w=0
	while kill -0 "$vmpid" 2>/dev/null && [ $_w -lt 150 ]; do sleep 0.2; _w=$((_w + 1)); done
	if kill -0 "$vmpid" 2>/dev/null; then
		for _p in $(pidof vmlet); do [ "$_p" -gt 1 ] && kill -TERM "$_p"; done
	fi
	wait $vmpid
}

# snap_stop SOCKET DIR: vmlet ctl SOCKET snapshot DIR --stop, again (up to
# 5 tries) while vmlet refuses with EAGAIN, "Resource temporarily
# unavailable" (a TPM command in flight or being written: docs/snapshot.md
# "The TPM"); "@R snapshot-rc RC TRIES [ERROR]"
snap_stop() {
	_t=0
	while :; do
		_t=$((_t + 1))
		vmlet ctl "$1" snapshot "$2" --stop >/dev/null 2>/tmp/snap.err
		_rc=$?
		[ $_rc != 0 ] && [ $_t -lt 5 ] && grep -q 'temporarily unavailable' /tmp/snap.err || break
		sleep 1
	done
	echo "@R snapshot-rc $_rc $_t $(head -c 200 /tmp/snap.err | tr '\n' ' ')"
}
