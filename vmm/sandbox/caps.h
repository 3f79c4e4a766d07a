/* SPDX-License-Identifier: MIT */
/*
 * caps.h - what capabilities the calling thread has, asked of the kernel
 * (capget(2)) and not of libcap-ng: libcap-ng's state is process-wide and
 * remembers the process that filled it, so filling it in a parent would
 * make a jail worker (a child made by clone(CLONE_NEWPID), where no atfork
 * handler resets it) apply its capability drop to the parent, which fails
 * with EPERM. Nothing else here: the network setup asks too, without
 * pulling in the sandbox.
 */
#ifndef VMLET_SANDBOX_CAPS_H
#define VMLET_SANDBOX_CAPS_H

#include <stdbool.h>

/* Whether cap (CAP_*) is in the calling thread's effective set; false
 * when the kernel cannot say. */
bool sandbox_have_cap(unsigned int cap);

#endif /* VMLET_SANDBOX_CAPS_H */
