#!/usr/bin/env bash
# Secure boot end to end on a real KVM (issues 13 part 3 and 21 part 3):
# tests/nested/scenarios-ovmf in one L1 whose emulator (L0) is QEMU built
# from Debian's source with tests/nested/qemu-l0's fix (scripts/build-qemu-l0;
# every Debian QEMU aborts when an L2 runs OVMF). Under vmlet on L1's
# kvm_amd, Debian's OVMF with Microsoft's and Debian's keys:
#  - ovmf-secureboot: Microsoft-signed shim -> Debian-signed GRUB -> signed
#    kernel to userspace with SecureBoot=1, twice on one --efi-vars file (a
#    variable written in the first run is read in the second), exit 0 at
#    the guest's power-off;
#  - ovmf-refused: a shim with one byte changed is refused (Access Denied),
#    the next disk boots;
#  - ovmf-cdrom: the same chain from an ISO on vmlet's CD-ROM drive (OVMF's
#    own ATAPI and El Torito drivers), the generic kernel's sr_mod reading
#    the CD back;
#  - ovmf-qemu: the oracle, QEMU -enable-kvm with the same OVMF and disk in
#    the same L1, to the same checks.
# It needs the patched L0 (build/qemu-l0/patched, or $QEMU_L0_BUILD_DIR),
# about 5 CPU-minutes to build. So it runs where that L0 is built
# (scripts/build-qemu-l0), or with VMLET_TEST_NESTED_OVMF=run, which builds
# it first (tests/run.sh starts that build at its start and runs this test
# last; CI sets it: .ci/run); otherwise it skips and says so. A host that
# cannot build it skips with the reason. Runs on any host, the KVM it needs
# is L1's: about 6-9 min of one CPU here. VMLET_TEST_NESTED_OVMF=skip
# leaves it out.
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"
[[ ${VMLET_TEST_NESTED_OVMF:-} != skip ]] || skip "VMLET_TEST_NESTED_OVMF=skip"
[[ ${VMLET_TEST_NESTED_OVMF:-} == run || -x ${QEMU_L0_BUILD_DIR:-build/qemu-l0/patched}/qemu-system-x86_64 ]] ||
	skip "the patched L0 is not built (scripts/build-qemu-l0, ~5 CPU-minutes; VMLET_TEST_NESTED_OVMF=run builds it and runs this test)"
# the L1's time box: the four scenarios took 881 s of L1 at a load of 7-12,
# past tests/nested/run's 840 (tests/run.sh gives this test 1500 s)
tests/nested/run --l0 patched --scenarios tests/nested/scenarios-ovmf --timeout 1400 ${NESTED_OVMF_ARGS:-}
