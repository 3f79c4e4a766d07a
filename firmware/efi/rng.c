// SPDX-License-Identifier: MIT
/*
 * rng.c - EFI_RNG_PROTOCOL from RDRAND (allowed at CPL0 on our hosts),
 * installed only when CPUID says RDRAND exists. Algorithm: "raw".
 * (virtio-rng, when the virtio library lands, is the other source.)
 */
#include "firmware/efi/fw.h"
#include "firmware/lib/io.h"

static struct efi_rng rng;
static efi_handle rng_handle;

static bool rdrand64(uint64_t *v)
{
	for (int tries = 0; tries < 32; tries++) {
		uint8_t ok;

		__asm__ volatile("rdrand %0; setc %1" : "=r"(*v), "=qm"(ok));
		if (ok)
			return true;
	}
	return false;
}

static efi_status EFIAPI rng_info(struct efi_rng *self, uint64_t *size, efi_guid *algs)
{
	(void)self;
	if (!size)
		return EFI_INVALID_PARAMETER;
	if (*size < sizeof(efi_guid)) {
		*size = sizeof(efi_guid);
		return EFI_BUFFER_TOO_SMALL;
	}
	if (!algs)
		return EFI_INVALID_PARAMETER;
	algs[0] = efi_rng_raw_guid;
	*size = sizeof(efi_guid);
	return EFI_SUCCESS;
}

static efi_status EFIAPI rng_get(struct efi_rng *self, const efi_guid *alg, uint64_t len,
				 uint8_t *out)
{
	(void)self;
	if (!out || !len)
		return EFI_INVALID_PARAMETER;
	if (alg && !guid_eq(alg, &efi_rng_raw_guid))
		return EFI_UNSUPPORTED;
	while (len) {
		uint64_t v;
		uint64_t n = len < 8 ? len : 8;

		if (!rdrand64(&v))
			return EFI_DEVICE_ERROR;
		memcpy(out, &v, n);
		out += n;
		len -= n;
	}
	return EFI_SUCCESS;
}

static bool have_rdrand;

void efi_rng_probe(void)
{
	struct fw_cpuid r;

	fw_cpuid(1, 0, &r);
	have_rdrand = r.c & (1u << 30);
}

void efi_rng_init(void)
{
	if (!have_rdrand)
		return;
	rng.get_info = rng_info;
	rng.get_rng = rng_get;
	proto_install(&rng_handle, &efi_rng_guid, &rng);
}
