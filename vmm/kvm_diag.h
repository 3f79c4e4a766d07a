/* SPDX-License-Identifier: MIT */
/*
 * kvm_diag.h - why the KVM device cannot be opened, and what to do.
 *
 * When open() of the KVM device fails, kvm_diag_explain() names the cause
 * from what the host shows under a root directory ("/" for the real host,
 * a directory of plain files in tests/unit/kvm_diag_test.c):
 *
 *   ROOT/DEV                   the device node (its mode and group)
 *   ROOT/sys/class/misc/kvm/   present: a KVM driver registered the device;
 *                              dev: its "MAJOR:MINOR"
 *   ROOT/sys/module/NAME       present: module NAME is loaded or built in
 *   ROOT/proc/modules          loaded modules (first word of each line)
 *   ROOT/proc/cpuinfo          the first "flags" line: svm, vmx, hypervisor
 *   ROOT/dev/kmsg              the kernel log, when this process may read it
 *                              (kvm-pvm's "itself a kvm-pvm guest",
 *                              "disabled by BIOS")
 *   ROOT/etc/group             the name of the node's group
 *
 * Causes, in the order they are decided:
 *   KVM_DIAG_NO_PERMISSION  EACCES / EPERM: the node's group (kvm), or a
 *                           container's device rules
 *   KVM_DIAG_NO_NODE        a KVM driver is registered, the node is missing
 *   KVM_DIAG_PVM_GUEST      kvm-pvm is there but does not bind: this kernel
 *                           is itself a kvm-pvm guest (no KVM on this host)
 *   KVM_DIAG_FW_DISABLED    svm/vmx, and the kernel log says the firmware
 *                           turned it off
 *   KVM_DIAG_NO_MODULE      svm/vmx, kvm_amd / kvm_intel not loaded
 *   KVM_DIAG_NO_NESTED      no svm/vmx in a virtual machine ("hypervisor"):
 *                           its hypervisor offers no nested virtualization
 *   KVM_DIAG_NO_HW          no svm/vmx on bare metal
 *   KVM_DIAG_UNKNOWN        none of these can be told (another errno, an
 *                           unreadable /proc...)
 *
 * Every file read is untrusted input (bounded reads; only checked words,
 * numbers and group names are copied into the text). Never fails.
 */
#ifndef VMLET_KVM_DIAG_H
#define VMLET_KVM_DIAG_H

#include <stdbool.h>

enum kvm_diag_cause {
	KVM_DIAG_UNKNOWN = 0,
	KVM_DIAG_NO_PERMISSION,
	KVM_DIAG_NO_NODE,
	KVM_DIAG_PVM_GUEST,
	KVM_DIAG_FW_DISABLED,
	KVM_DIAG_NO_MODULE,
	KVM_DIAG_NO_NESTED,
	KVM_DIAG_NO_HW,
	KVM_DIAG_COUNT,
};

struct kvm_diag {
	enum kvm_diag_cause cause;
	char what[320]; /* the cause, one sentence without the final stop */
	char todo[480]; /* what to do about it */
};

/* The cause of open(DEV) failing with errno ERR (positive), judged from the
 * files under ROOT (see above); DEV is an absolute path, looked up under
 * ROOT. Fills *out. */
void kvm_diag_explain(const char *root, const char *dev, int err, struct kvm_diag *out);

/* Whether the host's KVM is kvm-pvm (ROOT/sys/module/kvm_pvm or a line of
 * ROOT/proc/modules): it runs the probe and vmlet's own firmware but not
 * every instruction of a stock kernel at CPL0 (docs/hosts.md). */
bool kvm_diag_host_pvm(const char *root);

/* A short stable name of a cause ("no-node", "pvm-guest"...). */
const char *kvm_diag_cause_name(enum kvm_diag_cause c);

#endif /* VMLET_KVM_DIAG_H */
