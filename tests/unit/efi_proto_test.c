// SPDX-License-Identifier: MIT
/* efi_proto_test - the firmware's handle/protocol database and device-path
 * lookup (firmware/efi/proto.c) on the host. */
#include "tests/lib/test.h"

#include "firmware/efi/proto.c"

static const efi_guid g_a = EFI_GUID(0x11111111, 0x2222, 0x3333, 1, 2, 3, 4, 5, 6, 7, 8);
static const efi_guid g_b = EFI_GUID(0x11111111, 0x2222, 0x3333, 1, 2, 3, 4, 5, 6, 7, 9);
static const efi_guid g_c = EFI_GUID(0x99999999, 0x2222, 0x3333, 1, 2, 3, 4, 5, 6, 7, 8);

static void test_install_lookup(void)
{
	efi_handle h1 = NULL, h2 = NULL, buf[8];
	int x, y, z;
	void *p;
	uint64_t size;

	proto_reset();
	CHECK(proto_install(&h1, &g_a, &x) == EFI_SUCCESS && h1);
	CHECK(proto_install(&h1, &g_b, &y) == EFI_SUCCESS);
	CHECK(proto_install(&h1, &g_a, &z) == EFI_INVALID_PARAMETER); /* twice */
	CHECK(proto_install(&h2, &g_b, &z) == EFI_SUCCESS && h2 && h2 != h1);
	CHECK(proto_get(h1, &g_a, &p) == EFI_SUCCESS && p == &x);
	CHECK(proto_get(h1, &g_c, &p) == EFI_UNSUPPORTED && p == NULL);
	CHECK(proto_get(h2, &g_b, &p) == EFI_SUCCESS && p == &z);
	static struct handle fake = {.magic = HANDLE_MAGIC}; /* not one of ours */

	CHECK(proto_get(&fake, &g_a, &p) == EFI_INVALID_PARAMETER);
	CHECK(proto_get((uint8_t *)h1 + 8, &g_a, &p) == EFI_INVALID_PARAMETER);

	size = 0;
	CHECK(proto_locate_handles(ByProtocol, &g_b, &size, NULL) == EFI_BUFFER_TOO_SMALL);
	CHECK_EQ_U64(size, 2 * sizeof(efi_handle));
	CHECK(proto_locate_handles(ByProtocol, &g_b, &size, buf) == EFI_SUCCESS);
	CHECK(buf[0] == h1 && buf[1] == h2);
	size = sizeof(buf);
	CHECK(proto_locate_handles(ByProtocol, &g_c, &size, buf) == EFI_NOT_FOUND);
	CHECK(proto_locate_handles(AllHandles, NULL, &size, buf) == EFI_SUCCESS);
	CHECK_EQ_U64(size, 2 * sizeof(efi_handle));
	CHECK(proto_locate(&g_b, &p) == EFI_SUCCESS && p == &y);
	CHECK(proto_locate(&g_c, &p) == EFI_NOT_FOUND);

	const efi_guid *list[PROTO_PER_HANDLE];

	CHECK_EQ_U64(proto_list(h1, list), 2);
	CHECK(guid_eq(list[0], &g_a) && guid_eq(list[1], &g_b));

	CHECK(proto_reinstall(h1, &g_a, &y, &z) == EFI_NOT_FOUND);
	CHECK(proto_reinstall(h1, &g_a, &x, &z) == EFI_SUCCESS);
	CHECK(proto_get(h1, &g_a, &p) == EFI_SUCCESS && p == &z);
	CHECK(proto_uninstall(h1, &g_a, &x) == EFI_NOT_FOUND);
	CHECK(proto_uninstall(h1, &g_a, &z) == EFI_SUCCESS);
	CHECK(proto_uninstall(h1, &g_b, &y) == EFI_SUCCESS);
	CHECK(!proto_handle_valid(h1)); /* empty handles disappear */
	CHECK(proto_locate(&g_b, &p) == EFI_SUCCESS && p == &z);

	/* the table fills up cleanly */
	proto_reset();
	unsigned int made = 0;

	for (int i = 0; i < PROTO_MAX_HANDLES + 5; i++) {
		efi_handle h = NULL;

		if (proto_install(&h, &g_a, NULL) == EFI_SUCCESS)
			made++;
	}
	CHECK_EQ_U64(made, PROTO_MAX_HANDLES);
	proto_reset();
}

/* Device path nodes: a PCI node, a hard-drive-like node, a file node. */
static size_t mk_node(uint8_t *p, uint8_t type, uint8_t sub, uint16_t len, uint8_t fill)
{
	p[0] = type;
	p[1] = sub;
	p[2] = (uint8_t)len;
	p[3] = (uint8_t)(len >> 8);
	memset(p + 4, fill, len - 4);
	return len;
}

static void test_device_path(void)
{
	uint8_t disk[64], part[64], file[128], other[64];
	size_t n;
	efi_handle hd = NULL, hp = NULL, ho = NULL, dev;
	int bio;

	proto_reset();
	n = mk_node(disk, 1, 1, 6, 0x11);
	mk_node(disk + n, 0x7f, 0xff, 4, 0);
	n = mk_node(part, 1, 1, 6, 0x11);
	n += mk_node(part + n, 4, 1, 42, 0x22);
	mk_node(part + n, 0x7f, 0xff, 4, 0);
	n = mk_node(file, 1, 1, 6, 0x11);
	n += mk_node(file + n, 4, 1, 42, 0x22);
	n += mk_node(file + n, 4, 4, 20, 0x33);
	mk_node(file + n, 0x7f, 0xff, 4, 0);
	n = mk_node(other, 1, 1, 6, 0x55);
	mk_node(other + n, 0x7f, 0xff, 4, 0);
	CHECK_EQ_U64(dp_size((void *)file, 4096), 6 + 42 + 20 + 4);

	CHECK(proto_install(&hd, &efi_device_path_guid, disk) == EFI_SUCCESS);
	CHECK(proto_install(&hd, &g_a, &bio) == EFI_SUCCESS);
	CHECK(proto_install(&hp, &efi_device_path_guid, part) == EFI_SUCCESS);
	CHECK(proto_install(&hp, &g_a, &bio) == EFI_SUCCESS);
	CHECK(proto_install(&ho, &efi_device_path_guid, other) == EFI_SUCCESS);
	CHECK(proto_install(&ho, &g_a, &bio) == EFI_SUCCESS);

	const struct efi_device_path *dp = (void *)file;

	CHECK(proto_locate_device_path(&g_a, &dp, &dev) == EFI_SUCCESS);
	CHECK(dev == hp); /* the longest prefix wins */
	CHECK((const uint8_t *)dp == file + 48);
	dp = (void *)file;
	CHECK(proto_locate_device_path(&g_b, &dp, &dev) == EFI_NOT_FOUND);

	/* malformed paths: a zero-length node, or one running past the limit */
	uint8_t bad[16];

	mk_node(bad, 1, 1, 4, 0);
	bad[2] = 0;
	dp = (void *)bad;
	CHECK(proto_locate_device_path(&g_a, &dp, &dev) == EFI_INVALID_PARAMETER);
	CHECK(dp_size((void *)file, 30) == 0);
	proto_reset();
}

static int signalled;
static void sig(efi_event ev)
{
	signalled += ev == (efi_event)&signalled;
}

static void test_notify(void)
{
	efi_handle h = NULL;

	proto_reset();
	CHECK(proto_register_notify(&g_c, &signalled, sig) == EFI_SUCCESS);
	CHECK(proto_install(&h, &g_a, NULL) == EFI_SUCCESS);
	CHECK_EQ_U64(signalled, 0);
	CHECK(proto_install(&h, &g_c, NULL) == EFI_SUCCESS);
	CHECK_EQ_U64(signalled, 1);
	proto_reset();
}

int main(void)
{
	TEST_RUN(test_install_lookup);
	TEST_RUN(test_device_path);
	TEST_RUN(test_notify);
	return test_summary();
}
