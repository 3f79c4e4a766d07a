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
}

# r_dmesg: the kernel's complaints. "@R dmesg-bad" lines fail the scenario
# (unless QEMU's L2 shows the same), "@R dmesg-note" are known effects of
# the nested setup itself (see tests/nested/README).
r_dmesg() {
	dmesg >/tmp/dmesg
	grep -E 'ACPI Error|ACPI BIOS Error|ACPI Warning|BUG:|WARNING:|Oops|Call Trace|general protection|segfault' /tmp/dmesg |
		sed 's/^/@R dmesg-bad /'
	grep -E 'XSAVE consistency|TSC.*unstable' /tmp/dmesg | sed 's/^/@R dmesg-note /'
}

# mod NAME...: load modules (and what they need) from the initramfs
mod() {
	for m; do
		modprobe "$m" 2>&1 | sed "s/^/@R modprobe-error $m /"
	done
}
