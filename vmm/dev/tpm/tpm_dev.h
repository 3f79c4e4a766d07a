/* SPDX-License-Identifier: MIT */
/*
 * tpm_dev.h - the TPM 2.0 device (`devices.tpm`) at ARCH_TPM_CRB_GPA, with
 * the interface KubeVirt's libvirt domain has: the TIS/FIFO window
 * (tpm_tis.h) for tpm: {} (tpm-tis), the CRB window (tpm_crb.h) for
 * cfg->tpm_persistent (tpm-crb); backed by swtpm (tpm_swtpm.h), which the
 * ACPI tables describe (a TPM2 table and the MSFT0101 device).
 *
 * create() opens the state (cfg->tpm_persistent: the directory
 * fw->tpm_state, made 0700 when missing, a symbolic link refused, one that
 * exists refused unless mode 0700 (no group/other bits) and this user's or
 * --user's; else the
 * file fw->tpm_state_fd that lives through the guest's reboots when the
 * run may restart, else an unnamed file of this run), starts swtpm and a THREAD_HELPER worker that
 * carries each command the guest starts to swtpm and its response back.
 * vCPU threads never touch swtpm's sockets (their sandbox cannot): START
 * (CRB) or tpmGo (TIS) kicks the worker through an eventfd. When swtpm goes away (its socket
 * hangs up, a command cannot be sent, a response does not hold together)
 * the worker logs it with swtpm's exit status, the CRB reports a fatal
 * error (the TIS answers TPM_RC_FAILURE), and the VM ends as crashed: no guest runs on with a dead
 * TPM. The worker also stops swtpm at teardown (CMD_SHUTDOWN, then reaps it). With vmlet's --user,
 * swtpm runs as that user (its --runas) and the state is given to it first (the directory and its
 * regular files with one link each; any other entry, a planted hard link above all, is refused): no
 * root process serves the guest. The snapshot (tpm_snap.h, docs/snapshot.md): freeze() holds the
 * worker between two commands (one swtpm runs finishes first, up to 5 s: -EAGAIN after) and wants
 * an interface with no command in it (-EAGAIN); save() writes the registers and swtpm's three state
 * blobs, read from the running TPM; load() checks them, then CMD_STOP, the blobs, CMD_INIT (a
 * refused blob refuses the restore); a persistent TPM restores only onto a state directory whose
 * permanent state is the saved one (-ESTALE: "... is not the TPM state of the snapshot").
 */
#ifndef VMLET_DEV_TPM_DEV_H
#define VMLET_DEV_TPM_DEV_H

#include "vmm/vm/device.h"

extern const struct device_type tpm_device;

#endif /* VMLET_DEV_TPM_DEV_H */
