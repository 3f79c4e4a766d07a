# The oracle for hyperv: QEMU -enable-kvm -cpu host with the hv-* flags
# libvirt gives for that manifest, and kvm=off (features.kvm.hidden), in
# the same L1; hyperv compares its guest's view with this one's.
GROUP=devices # tests/sh/nested_devices.sh
SHAPE=1,2,1 MEM=256Mi VMM=qemu
L2_DEBS="cpuid:usr/bin/cpuid"
QEMU_CPU_EXTRA=hv-relaxed,hv-vapic,hv-spinlocks=0x1fff,hv-vpindex,hv-runtime,hv-synic,hv-stimer,hv-stimer-direct,hv-reset,hv-frequencies,hv-reenlightenment,hv-tlbflush,hv-ipi,hv-time,kvm=off
l2() { hv_report; }
host_check() {
	. "$sdir/hyperv.sh"
	hv_check
}
