# The oracle for hyperv-pass: QEMU -cpu host,hv-passthrough (Debian 12's
# 7.2 includes the synthetic debugger, which QEMU leaves out since 9.2 and
# vmlet too: hyperv-pass allows that difference and no other).
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,2,1 MEM=256Mi VMM=qemu
L2_DEBS="cpuid:usr/bin/cpuid"
QEMU_CPU_EXTRA=hv-passthrough
l2() {
	hv_report
	rep kvm-clock "$(dmesg | grep -m1 -o 'kvm-clock: Using msrs.*')"
}
