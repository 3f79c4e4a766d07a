// SPDX-License-Identifier: MIT
/*
 * caps.c - the calling thread's effective capabilities (caps.h).
 */
#include <linux/capability.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmm/sandbox/caps.h"

bool sandbox_have_cap(unsigned int cap)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {{0}};

	if (cap >= 32 * _LINUX_CAPABILITY_U32S_3 || syscall(SYS_capget, &h, d) < 0)
		return false;
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}
