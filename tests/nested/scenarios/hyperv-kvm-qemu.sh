# The oracle for hyperv-kvm: hyperv-qemu's hv-* flags without kvm=off.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,2,1 MEM=256Mi VMM=qemu
L2_DEBS="cpuid:usr/bin/cpuid"
QEMU_CPU_EXTRA=hv-relaxed,hv-vapic,hv-spinlocks=0x1fff,hv-vpindex,hv-runtime,hv-synic,hv-stimer,hv-stimer-direct,hv-reset,hv-frequencies,hv-reenlightenment,hv-tlbflush,hv-ipi,hv-time
l2() {
	hv_report
	rep kvm-clock "$(dmesg | grep -m1 -o 'kvm-clock: Using msrs.*')"
}
