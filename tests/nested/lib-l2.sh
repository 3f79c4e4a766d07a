# Sourced by the L2 /init (busybox ash): the report every scenario gets,
# and helpers for the scenarios' l2 parts. Every report line is
# "@R KEY VALUE..." on the console; few processes, few bytes (each console
# byte is an exit through two hypervisors, the outer one emulated).

# l2_arg KEY: the value of KEY=VALUE on the kernel command line
l2_arg() {
	sed -n "s/.*[ ^]$1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p" /proc/cmdline | head -n 1
}

# rep KEY VALUE...: one report line
rep() { echo "@R $*"; }

# r_common: kernel, CPUs (sysfs topology, /proc/cpuinfo), memory
r_common() {
	rep kernel "$(uname -r)"
	rep online "$(cat /sys/devices/system/cpu/online)"
	# "@R sys cpuN FILE VALUE" for each topology id and cpu list
	grep -H . /sys/devices/system/cpu/cpu[0-9]*/topology/*_id \
		/sys/devices/system/cpu/cpu[0-9]*/topology/*_list 2>/dev/null |
		sed 's|^/sys/devices/system/cpu/\(cpu[0-9]*\)/topology/\([a-z_]*\):|@R sys \1 \2 |'
	awk -F '\t*: ' '
		/^processor/ { p = $2 }
		/^vendor_id/ { v = $2 }
		/^physical id/ { ph = $2 }
		/^siblings/ { s = $2 }
		/^core id/ { ci = $2 }
		/^cpu cores/ { cc = $2 }
		/^apicid/ { a = $2 }
		/^initial apicid/ { ia = $2 }
		/^$/ { if (p != "") printf "@R cpuinfo %s vendor=%s apicid=%s initial_apicid=%s physical_id=%s siblings=%s core_id=%s cpu_cores=%s\n", p, v, a, ia, ph, s, ci, cc; p = "" }
	' /proc/cpuinfo
	rep mem "$(grep -m1 '^MemTotal' /proc/meminfo | tr -s ' ' | cut -d' ' -f2)"
	rep smp "$(dmesg | grep -m1 -o 'smp: Brought up.*')"
	# the timers Linux chose: per-CPU clock event devices (lapic, or a
	# broadcast one when the local APIC timer failed its check) and clocksource
	rep clockevents "$(cat /sys/devices/system/clockevents/clockevent*/current_device | sort | uniq -c | tr -s ' \n' ' ')"
	rep clocksource "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	rep timer-notes "$(dmesg | grep -E 'APIC timer disabled|APIC calibration|TSC.*unstable|clocksource.*unstable|Switched to clocksource' | sed 's/^\[[ 0-9.]*\] //' | tr '\n' ';')"
}

# r_dmesg: the kernel's complaints. "@R dmesg-bad" lines fail the scenario
# (unless QEMU's L2 shows the same), "@R dmesg-note" are known effects of
# the nested setup itself (see tests/nested/README).
r_dmesg() {
	dmesg >/tmp/dmesg
	# (the Speculative Return Stack Overflow "WARNING" is the emulated EPYC's
	# missing microcode, not a kernel warning)
	grep -E 'ACPI Error|ACPI BIOS Error|ACPI Warning|BUG:|WARNING:|Oops|Call Trace|general protection|segfault|APIC timer disabled' /tmp/dmesg |
		grep -v 'Speculative Return Stack Overflow: WARNING' | sed 's/^/@R dmesg-bad /'
	grep -E 'XSAVE consistency|TSC.*unstable|Speculative Return Stack Overflow: WARNING' /tmp/dmesg |
		sed 's/^/@R dmesg-note /'
}

# mod NAME...: load modules (and what they need) from the initramfs
mod() {
	for m; do
		modprobe "$m" 2>&1 | sed "s/^/@R modprobe-error $m /"
	done
}

# pwrbtn_open: the ACPI power button's input device (evdev, path in $dev)
# open on fd 3, so that no press from now on is lost; 1 and "@R
# pwrbtn-missing NAMES" when there is none
pwrbtn_open() {
	mod button evdev
	dev=
	for e in /sys/class/input/event*; do
		[ "$(cat "$e/device/name" 2>/dev/null)" = "Power Button" ] && dev=/dev/input/${e##*/}
	done
	[ -n "$dev" ] || { rep pwrbtn-missing "$(cat /sys/class/input/*/name 2>/dev/null | tr '\n' ,)"; return 1; }
	exec 3<"$dev"
}

# pwrbtn_press: read fd 3 (pwrbtn_open) until a press of KEY_POWER
pwrbtn_press() {
	# struct input_event: 16 bytes of time, type 1 (EV_KEY), code 116
	# (KEY_POWER), value 1 (pressed)
	while :; do
		ev=$(dd bs=24 count=1 <&3 2>/dev/null | od -An -tx1 | tr -d ' \n')
		case $ev in *0100740001000000) return 0 ;; esac
	done
}

# pwrbtn_wait: as L2_END (after the report): wait (evdev) for the ACPI
# power button's KEY_POWER; reports "@R pwrbtn-listening DEV" once its
# input device is open, then "@R power-button pressed", runs the function
# PWRBTN_BEFORE if set (e.g. unmount a disk) and powers off.
pwrbtn_wait() {
	pwrbtn_open || return 1
	rep pwrbtn-listening "$dev"
	pwrbtn_press
	rep power-button pressed
	[ -z "${PWRBTN_BEFORE:-}" ] || $PWRBTN_BEFORE
	poweroff -f
}

# disk_by_serial SERIAL: /dev/vdX of the virtio-blk disk with that serial
disk_by_serial() {
	for b in /sys/block/vd*; do
		[ "$(cat "$b/serial" 2>/dev/null)" = "$1" ] && echo "/dev/${b##*/}" && return 0
	done
	return 1
}

# dhcp_up IFACE: udhcpc on IFACE (up, with lo); the lease's address and
# default route are set; reports "@R dhcp ip=... mask=... router=..." (or
# "@R dhcp failed")
dhcp_up() {
	printf '%s\n' '#!/bin/sh' '[ "$1" = bound ] || exit 0' 'ip addr add "$ip/$mask" dev "$interface"' \
		'[ -z "$router" ] || ip route add default via "${router%% *}"' \
		'echo "@R dhcp ip=$ip mask=$mask router=$router" >/dev/console' >/tmp/dhcp.sh
	chmod +x /tmp/dhcp.sh
	ip link set lo up && ip link set "$1" up
	udhcpc -i "$1" -n -q -f -t 10 -T 2 -s /tmp/dhcp.sh >/dev/null 2>&1 || rep dhcp failed
}

# tcp_listen PORT FILE: a listener on PORT (background) that writes what
# it receives to FILE and then creates FILE.done; tcp_wait FILE [SECONDS]:
# wait (default 30 s of L2's uptime) for FILE.done. (Not `sleep | nc -l`:
# busybox nc -l ends only when its stdin does.)
tcp_listen() {
	: >"$2"
	(nc -l -p "$1" -e sh -c "cat >$2"; echo done >"$2.done") &
}
tcp_wait() {
	_end=$(($(cut -d. -f1 /proc/uptime) + ${2:-30}))
	while [ ! -f "$1.done" ] && [ "$(cut -d. -f1 /proc/uptime)" -lt $_end ]; do sleep 0.2; done
}

# pod_traffic: the guest's side of pod_traffic_run (lib-l1.sh): the NIC's
# driver loaded (NIC_MODS, virtio-net's by default), dhcp_up on eth0, then ping its default gateway ("@R ping-gw GW N packets received")
# and the node beyond the pod (10.201.0.1, "@R ping-out"), 1 MiB over TCP
# to the node's port 5000 ("@R tcp-sent MD5 BYTES"), then listeners on
# ports 8080 and 8081 ("@R guest-listening") and what each received from
# the node ("@R recv-8080 ...", "@R recv-8081 ...").
pod_traffic() {
	mod ${NIC_MODS:-virtio_pci virtio_net}
	dhcp_up eth0
	gw=$(ip route | sed -n 's/^default via \([^ ]*\).*/\1/p')
	rep ping-gw "$gw $(ping -c 3 -W 5 "$gw" 2>&1 | grep -o '[0-9]* packets received')"
	rep ping-out "$(ping -c 3 -W 5 10.201.0.1 2>&1 | grep -o '[0-9]* packets received')"
	dd if=/dev/urandom of=/tmp/blob bs=65536 count=16 2>/dev/null
	rep tcp-sent "$(md5sum </tmp/blob | cut -d' ' -f1) $(wc -c </tmp/blob)"
	nc -w 10 10.201.0.1 5000 </tmp/blob
	tcp_listen 8080 /tmp/in8080
	tcp_listen 8081 /tmp/in8081
	_end=$(($(cut -d. -f1 /proc/uptime) + 30))
	while [ "$(netstat -ltn 2>/dev/null | grep -c -E ':808[01] ')" != 2 ] &&
		[ "$(cut -d. -f1 /proc/uptime)" -lt $_end ]; do sleep 0.2; done
	rep guest-listening
	tcp_wait /tmp/in8080 60
	tcp_wait /tmp/in8081 5
	rep recv-8080 "$(cat /tmp/in8080)"
	rep recv-8081 "$(cat /tmp/in8081)"
}

# hv_report: what Linux makes of Hyper-V enlightenments (scenarios hyperv,
# hyperv-qemu): the hypervisor it detected, the privilege flags, hints and
# misc features it printed, the clocksources and clock event device, the
# Hyper-V vectors of /proc/interrupts with their counts on CPU0, the raw
# leaves 0x40000000.. and 0x40000100..
hv_report() {
	rep hv-detected "$(dmesg | grep -m1 -o 'Hypervisor detected: .*')"
	rep hv-flags "$(dmesg | grep -m1 -o 'Hyper-V: privilege flags.*')"
	cs=/sys/devices/system/clocksource/clocksource0
	rep hv-clocksource "$(cat $cs/current_clocksource)"
	rep hv-clocksources "$(cat $cs/available_clocksource)"
	rep hv-clockevent "$(cat /sys/devices/system/clockevents/clockevent0/current_device)"
	sleep 1
	# "NAME COUNT-OF-CPU0" for the Hyper-V vectors
	rep hv-irqs "$(grep -E '^ *(HYP|HRE|HVS):' /proc/interrupts | awk '{ printf "%s%s ", $1, $2 }')"
	rep hv-dmesg "$(dmesg | grep -i 'hyper-v' | sed 's/^\[[ 0-9.]*\] //' | tr '\n' ';' | cut -c1-600)"
	# the hypervisor leaves themselves (Debian's cpuid: L2_DEBS)
	for l in 0x40000000 0x40000001 0x40000002 0x40000003 0x40000004 0x40000005 0x40000006 \
		0x4000000a 0x40000100 0x40000101; do
		rep hv-cpuid "$l $(cpuid -1 -r -l $l 2>&1 | grep -o 'eax=.*')"
	done
}

# ---- snapshot and migration (scenarios snapshot, migrate) -----------------
# mig_workload: what a moved guest must keep doing, in the background:
# "@R count N UPTIME BAD" every 0.5 s, N kept in a tmpfs file (BAD: the
# kernel's clock, lockup and stall lines so far); a TCP stream to the node
# (10.200.0.1:5000, lib-l1.sh's pods: the guest is 10.200.0.2 on eth0),
# "tcp N" every 0.3 s from vCPU 1 (with one queue pair per vCPU its own
# pair: "@R net-queues TX-QUEUES CPU-MASK"), "@R tcp-ended STATUS" if it
# breaks; on the ext4 disk
# of serial "data" one 32 KiB block after another (64 in turn, rewritten
# in place) written and fsynced with the directory, the page cache dropped
# and the whole file read back from the disk against the copy in tmpfs:
# "@R disk N ok|bad"; every 3 s "@R state K CPUID PCI SYS" (mig_state).
# MIG_COUNT_MAX stops the counter (and nothing else) after that many.
mig_workload() {
	mod virtio_pci virtio_blk virtio_net
	ip link set lo up && ip addr add 10.200.0.2/24 dev eth0 && ip link set eth0 up ||
		rep net-failed "$(ip link 2>&1 | tr '\n' ' ')"
	mkdir -p /mnt/d
	mount -t ext4 -o noatime "$(disk_by_serial data)" /mnt/d || rep disk-mount-failed
	PWRBTN_BEFORE=mig_umount
	mig_state_init
	( i=0
	while :; do
		i=$((i + 1))
		echo "tcp $i"
		sleep 0.3
	done | taskset 2 nc 10.200.0.1 5000
	rep tcp-ended $? ) &
	# (nc on vCPU 1: its segments leave on the second queue pair)
	_n=0
	while [ -z "$(pidof nc)" ] && [ $_n -lt 50 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
	rep net-queues "$(ls -d /sys/class/net/eth0/queues/tx-* | wc -l)" \
		"$(taskset -p "$(pidof nc)" 2>/dev/null | sed -n 's/.*: *//p')"
	( i=0
	: >/tmp/expect
	while [ ! -f /tmp/disk.stop ]; do
		i=$((i + 1))
		b=$(((i - 1) % 64))
		dd if=/dev/urandom of=/tmp/blk bs=32k count=1 2>/dev/null
		dd if=/tmp/blk of=/tmp/expect bs=32k seek=$b conv=notrunc 2>/dev/null
		dd if=/tmp/blk of=/mnt/d/data bs=32k seek=$b conv=notrunc 2>/dev/null
		sync /mnt/d/data /mnt/d
		echo 3 >/proc/sys/vm/drop_caches
		cmp -s /mnt/d/data /tmp/expect && r=ok || r=bad
		rep disk $i $r
		sleep 0.5
	done
	: >/tmp/disk.stopped ) &
	( k=0
	while [ ! -f /tmp/disk.stop ]; do
		rep state $k "$(mig_state)"
		rep net $k "$(mig_net | tr '\n' ' ')"
		k=$((k + 1))
		sleep 3
	done ) &
	( n=0
	while :; do
		[ -f /tmp/counter ] && n=$(cat /tmp/counter)
		n=$((n + 1))
		echo $n >/tmp/counter
		bad=$(dmesg | grep -ciE 'clocksource|soft lockup|watchdog|hung task|rcu.*stall|unstable|backwards')
		echo "@R count $n $(cut -d' ' -f1 /proc/uptime) $bad"
		sleep 0.5
	done ) &
}

# mig_state: what the guest sees of its machine, live (not what the kernel
# cached at boot): CPUID of every vCPU (Debian's cpuid, raw: L2_DEBS), the
# first 256 bytes of every PCI function's config space (read from the
# device model), and sysfs' topology, PCI and virtio device lists, the
# virtio features and the online CPUs; three short hashes. When one differs
# from the first, "@R state-diff" lines say how. mig_state_init keeps the
# first and reports "@R state-lines CPUID-LINES PCI-FUNCTIONS SYS-LINES".
mig_state_files() {
	cpuid -r >"$1.cpuid" 2>&1
	for f in /sys/bus/pci/devices/*/config; do
		echo "${f%/config} $(dd if="$f" bs=256 count=1 2>/dev/null | od -An -v -tx1 | tr -d ' \n')"
	done >"$1.pci"
	{
		grep -H . /sys/devices/system/cpu/cpu*/topology/* /sys/devices/system/cpu/online \
			/sys/bus/virtio/devices/*/features /sys/bus/virtio/devices/*/device
		ls /sys/bus/pci/devices /sys/bus/virtio/devices
	} >"$1.sys" 2>&1
}
mig_state_init() {
	mig_state_files /tmp/state0
	rep state-lines "$(grep -c . /tmp/state0.cpuid) $(awk 'length($2) == 512' /tmp/state0.pci | grep -c .)" \
		"$(grep -c . /tmp/state0.sys)"
}
mig_state() {
	mig_state_files /tmp/state
	for x in cpuid pci sys; do
		cmp -s /tmp/state.$x /tmp/state0.$x ||
			diff /tmp/state0.$x /tmp/state.$x | grep '^[-+][^-+]' | head -n 8 | sed "s/^/@R state-diff $x /" >/dev/console
		md5sum </tmp/state.$x | cut -c1-8
	done | tr '\n' ' '
}

# mig_net: eth0's packet counts (rx tx), the interrupts of its queues, and
# the stream's socket: state, send:receive queue, retransmit timer
# (/proc/net/tcp, remote port 5000 = 1388); for the report, not checked
mig_net() {
	echo "rx=$(cat /sys/class/net/eth0/statistics/rx_packets) tx=$(cat /sys/class/net/eth0/statistics/tx_packets)"
	awk '/virtio.*-(input|output)/ { s = 0; for (i = 2; i < NF; i++) if ($i ~ /^[0-9]+$/) s += $i
		printf "%s=%d ", $NF, s }' /proc/interrupts
	awk '$3 ~ /:1388$/ { print "tcp st=" $4, "q=" $5, "tr=" $6, "retr=" $7 }' /proc/net/tcp
	echo "neigh=$(ip neigh show 10.200.0.1 | tr ' ' ,)"
}

# mig_umount: the disk workload stopped, its disk unmounted (PWRBTN_BEFORE)
mig_umount() {
	: >/tmp/disk.stop
	_n=0
	while [ ! -f /tmp/disk.stopped ] && [ $_n -lt 300 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
	rep disk-final "$(md5sum </tmp/expect | cut -d' ' -f1)"
	umount /mnt/d && rep disk-umount ok || rep disk-umount failed
}

# tpm_cmd BYTES: a raw TPM command (printf octal escapes) through
# /dev/tpm0; its response in hex
tpm_cmd() {
	exec 3<>/dev/tpm0 || return 1
	printf "$1" >&3
	dd bs=4096 count=1 <&3 2>/dev/null | od -An -tx1 | tr -d ' \n'
	exec 3>&-
}

# tpm_report: what Linux made of the TPM (scenarios tpm, tpm-tis and their
# QEMU oracles): /dev/tpm0 and /dev/tpmrm0, the version, the ACPI id, the
# device's name, the PCR banks, TPM2_GetRandom(8) through /dev/tpm0, the
# kernel's TPM lines, and an NV index read back where an earlier run wrote
# it ("tpm-nv found HEX"), else defined and written ("tpm-nv written RC RC")
tpm_report() {
	t=/sys/class/tpm/tpm0
	rep tpm-dev "$(ls /dev/tpm0 /dev/tpmrm0 2>/dev/null | tr '\n' ' ')"
	rep tpm-version "$(cat $t/tpm_version_major 2>/dev/null)"
	# tpm_tis's device is the ACPI node's platform device (MSFT0101:00):
	# the id is its firmware node's
	rep tpm-hid "$(cat $t/device/hid 2>/dev/null || cat $t/device/firmware_node/hid 2>/dev/null)"
	rep tpm-devname "$(basename "$(readlink $t/device)")"
	rep tpm-banks "$(ls -d $t/pcr-* 2>/dev/null | sed 's|.*/||' | tr '\n' ' ')"
	# TPM2_GetRandom(8): the header (success, 20 bytes) and the size 8
	r=$(tpm_cmd '\200\001\000\000\000\014\000\000\001\173\000\010')
	rep tpm-getrandom "$(echo "$r" | cut -c1-24) $(echo "$r" | wc -c)"
	dmesg | grep -i -E 'tpm|crb' | sed 's/^\[[ 0-9.]*\] //' | sed 's/^/@R tpm-dmesg /'
	# NV index 0x01500016, 8 bytes, owner/auth read and write, password
	# sessions (the kernel retries TPM_RC_RETRY): read it; where it is
	# not there yet, define it and write "vmlet-nv"
	r=$(tpm_cmd '\200\002\000\000\000\043\000\000\001\116\001\120\000\026\001\120\000\026\000\000\000\011\100\000\000\011\000\000\000\000\000\000\010\000\000')
	case $r in
	80020000001d00000000*) rep tpm-nv "found $(echo "$r" | cut -c33-48)" ;;
	*)
		d=$(tpm_cmd '\200\002\000\000\000\055\000\000\001\052\100\000\000\001\000\000\000\011\100\000\000\011\000\000\000\000\000\000\000\000\016\001\120\000\026\000\013\000\006\000\006\000\000\000\010')
		w=$(tpm_cmd '\200\002\000\000\000\053\000\000\001\067\001\120\000\026\001\120\000\026\000\000\000\011\100\000\000\011\000\000\000\000\000\000\010\166\155\154\145\164\055\156\166\000\000')
		rep tpm-nv "written $(echo "$d" | cut -c13-20) $(echo "$w" | cut -c13-20)"
		;;
	esac
}

# tpm_extend16 OCT: TPM2_PCR_Extend of PCR 16 (the debug PCR) in the
# SHA-256 bank with the digest of 32 bytes OCT (an octal byte, "166" for
# 'v'), password session; the response code in hex (00000000: success)
tpm_extend16() {
	_d= _i=0
	while [ $_i -lt 32 ]; do
		_d="$_d\\$1"
		_i=$((_i + 1))
	done
	tpm_cmd "\200\002\000\000\000\101\000\000\001\202\000\000\000\020\000\000\000\011\100\000\000\011\000\000\000\000\000\000\000\000\001\000\013$_d" |
		cut -c13-20
}

# tpm_pcr16: PCR 16 of the SHA-256 bank, as the kernel reads it (sysfs
# pcr-sha256/16, "-" where the kernel has no such file) and as
# TPM2_PCR_Read through /dev/tpm0 answers (its response code and digest),
# lower-case hex: "SYSFS RC DIGEST"
tpm_pcr16() {
	_s=$(tr A-F a-f 2>/dev/null </sys/class/tpm/tpm0/pcr-sha256/16)
	# the response: header (10), update counter (4), the selection (10),
	# the digest count (4), its size (2), the digest (32)
	_r=$(tpm_cmd '\200\001\000\000\000\024\000\000\001\176\000\000\000\001\000\013\003\000\000\001')
	echo "${_s:--} $(echo "$_r" | cut -c13-20) $(echo "$_r" | cut -c61-124)"
}
