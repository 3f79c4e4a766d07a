/* SPDX-License-Identifier: MIT */
/*
 * mac.h - guest MAC addresses: parse the `macAddress` of an interface, or
 * derive a stable one when it is unset.
 *
 * A derived address depends only on (namespace, VM name, interface name):
 * the same VM gets the same MAC on every start and on every host, so guest
 * network configuration keyed on the MAC (netplan, udev rules, DHCP
 * reservations) survives restarts. It is locally administered (bit 1 of the
 * first octet set) and unicast (bit 0 clear), as IEEE 802 requires of
 * addresses nobody assigned.
 */
#ifndef VMLET_NET_MAC_H
#define VMLET_NET_MAC_H

#include <stdbool.h>
#include <stdint.h>

#define NET_MAC_STRLEN 18 /* "02:00:00:00:00:00" and the NUL */

/* Derive the stable address. NULL strings count as "". */
void net_mac_derive(const char *ns, const char *vm, const char *iface, uint8_t mac[6]);

/*
 * Parse six hex octets separated by ':' or '-' (one separator kind, as
 * KubeVirt accepts: "de:ad:00:00:be:af", "DE-AD-00-00-BE-AF"). A multicast
 * or all-zero address is not a NIC address: -EINVAL, as for bad syntax.
 */
int net_mac_parse(const char *s, uint8_t mac[6]);

/* Lowercase colon form into out (NET_MAC_STRLEN bytes). */
void net_mac_format(const uint8_t mac[6], char out[NET_MAC_STRLEN]);

static inline bool net_mac_is_multicast(const uint8_t mac[6])
{
	return mac[0] & 1;
}

#endif /* VMLET_NET_MAC_H */
