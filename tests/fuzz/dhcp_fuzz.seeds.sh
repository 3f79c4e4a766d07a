#!/usr/bin/env bash
# Seeds for dhcp_fuzz (input format in dhcp_fuzz.c): whole frames (an even
# first byte: sent to the server's MAC) with DHCP DISCOVER/REQUEST and an
# ARP request for the gateway; bare option lists (an odd first byte); and
# resolv.conf texts. $1: the seed directory.
set -eu
PYTHONPATH=$(dirname "$0") exec python3 - "$1" <<'PY'
import os, sys
import net_frames as nf

OUT = sys.argv[1]
SERVER = bytes.fromhex("020000000002")

def seed(name, b):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(b)

def to_server(frame):
    return SERVER + frame[6:]

seed("discover", to_server(nf.dhcp(1)))
seed("request", to_server(nf.dhcp(3, b"\x32\x04\x0a\x00\x02\x02\x36\x04\x0a\x00\x02\x01")))
seed("arp", to_server(nf.arp_gw()))
seed("opts-discover", b"\x01" + nf.dhcp_options(1, b"\x0c\x04host\x3d\x07\x01\x02\0\0\0\0\x42"))
seed("opts-request", b"\x01" + nf.dhcp_options(3, b"\x32\x04\x0a\x00\x02\x02\x37\x06\x01\x03\x06\x0f\x1a\x77"))
seed("opts-overload", b"\x01" + nf.dhcp_options(1, b"\x34\x01\x03\x39\x02\x05\xdc"))
seed("resolv", b"nameserver 10.0.0.10\nnameserver fd00::10\nsearch ns.svc.cluster.local svc.cluster.local\noptions ndots:5\n")
PY
