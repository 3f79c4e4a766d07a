# SPDX-License-Identifier: MIT
"""Ethernet frames for the network fuzzers' seed scripts
(virtio_net_fuzz.seeds.sh, dhcp_fuzz.seeds.sh): a guest's DHCP messages, an
ARP request for its gateway, plain frames. The guest is 02:00:00:00:00:42,
its gateway 10.0.2.1."""
import struct

MAC = bytes.fromhex("020000000042")


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def eth(dst, typ, payload, src=MAC):
    return dst + src + struct.pack("!H", typ) + payload


def ipv4_udp(src, dst, sport, dport, payload):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + udp


def dhcp_options(msg, extra=b""):
    """The options after the BOOTP header: cookie, message type, extra, end."""
    return b"\x63\x82\x53\x63" + bytes([53, 1, msg]) + extra + b"\xff"


def dhcp(msg, extra=b"\x37\x04\x01\x03\x06\x0f"):
    """A DHCP message of type msg (1 DISCOVER, 3 REQUEST, 7 RELEASE...)."""
    b = struct.pack("!BBBBIHH4s4s4s4s16s64s128s", 1, 1, 6, 0, 0x1234, 0, 0x8000, bytes(4),
                    bytes(4), bytes(4), bytes(4), MAC, b"", b"")
    return eth(b"\xff" * 6, 0x0800,
               ipv4_udp(bytes(4), b"\xff" * 4, 68, 67, b + dhcp_options(msg, extra)))


def arp_gw():
    a = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, MAC, bytes([10, 0, 2, 2]), bytes(6),
                    bytes([10, 0, 2, 1]))
    return eth(b"\xff" * 6, 0x0806, a)


def plain(n, seed=1):
    return eth(bytes.fromhex("020000000099"), 0x88B5, bytes((seed + i) & 0xFF for i in range(n)))
