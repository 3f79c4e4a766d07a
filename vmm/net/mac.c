/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/net/mac.h"

/* FNV-1a, 64 bit: tiny, stable across hosts and releases, good spread. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; s && *s; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ULL;
	}
	/* a separator byte so ("ab","c") and ("a","bc") differ */
	h ^= 0xff;
	h *= 0x100000001b3ULL;
	return h;
}

void net_mac_derive(const char *ns, const char *vm, const char *iface, uint8_t mac[6])
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int i;

	h = fnv1a(h, "vmlet");
	h = fnv1a(h, ns);
	h = fnv1a(h, vm);
	h = fnv1a(h, iface);
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)(h >> (8 * i + 8));
	mac[0] = (uint8_t)((mac[0] & 0xfc) | 0x02); /* local, unicast */
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int net_mac_parse(const char *s, uint8_t mac[6])
{
	char sep;
	int i, hi, lo;
	uint8_t m[6], any = 0;

	if (!s || strlen(s) != 17)
		return -EINVAL;
	sep = s[2];
	if (sep != ':' && sep != '-')
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		hi = hexval(s[3 * i]);
		lo = hexval(s[3 * i + 1]);
		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != sep))
			return -EINVAL;
		m[i] = (uint8_t)(hi << 4 | lo);
		any |= m[i];
	}
	if (!any || net_mac_is_multicast(m))
		return -EINVAL;
	memcpy(mac, m, 6);
	return 0;
}

void net_mac_format(const uint8_t mac[6], char out[NET_MAC_STRLEN])
{
	snprintf(out, NET_MAC_STRLEN, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
}
