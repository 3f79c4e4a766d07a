#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in peer of vmlet's live migration stream (docs/migration.md) for
tests/sh/migrate.sh and migrate_tcp.sh. Records are u32 type, u32 length,
the bytes. LISTEN and TARGET are unix socket paths, or tcp:HOST:PORT
(tcp:[HOST]:PORT for IPv6; a TCP LISTEN creates the file $MIG_PEER_READY,
if set, once it listens; a TCP TARGET is connected to from the address
$MIG_PEER_BIND, if set).

  record LISTEN TARGET FILE   forward one source on unix LISTEN to unix TARGET,
                              the source's bytes also into FILE
  cut LISTEN N                a destination that takes the hello, reads N more
                              bytes and dies (closes)
  refuse LISTEN               a destination that takes everything and refuses
                              the state
  replay TARGET FILE          a source that sends FILE's bytes, prints the
                              answers (code and message), then closes
  records FILE                print FILE's records: type length
  slow LISTEN TARGET KBPS     forward one source on LISTEN to TARGET, its
                              bytes at about KBPS KiB/s (TCP: a receive
                              buffer of 64 KiB, as a slow link's)
  trickle TARGET FILE         a source that sends FILE's hello, announces a
                              state of 200 MiB and then sends one byte of it
                              every 0.2 s (for at most 120 s)
  send TARGET HEX             a source that sends the bytes HEX, prints the
                              answers, then closes
  silent TARGET SECONDS       a source that connects and sends nothing for
                              SECONDS
  freeport HOST               print a TCP port free on HOST now
"""
import os
import socket
import struct
import sys
import threading
import time

HELLO, PAGES, STATE, COMMIT, REPLY = 1, 2, 3, 4, 16


def tcp_addr(spec):
    """tcp:HOST:PORT or tcp:[HOST]:PORT as (family, (host, port))"""
    host, port = spec[4:].rsplit(":", 1)
    if host.startswith("["):
        return socket.AF_INET6, (host[1:-1], int(port))
    return socket.AF_INET, (host, int(port))


def listen(path, rcvbuf=0):
    if path.startswith("tcp:"):
        fam, addr = tcp_addr(path)
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if rcvbuf:  # before listen(): a slow link, not a deep buffer
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.bind(addr)
        s.listen(1)
        if os.environ.get("MIG_PEER_READY"):  # the caller waits for it
            open(os.environ["MIG_PEER_READY"], "w").close()
        c, _ = s.accept()
        s.close()
        return c
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # bound and listening under another name first: a socket that exists
    # but does not listen yet refuses the test's connection
    s.bind(path + ".new")
    s.listen(1)
    os.rename(path + ".new", path)
    c, _ = s.accept()
    s.close()
    os.unlink(path)
    return c


def connect(target):
    if target.startswith("tcp:"):
        fam, addr = tcp_addr(target)
        c = socket.socket(fam, socket.SOCK_STREAM)
        if os.environ.get("MIG_PEER_BIND"):  # another peer address
            c.bind((os.environ["MIG_PEER_BIND"], 0))
        c.connect(addr)
        return c
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(target)
    return c


def read_n(c, n):
    b = bytearray()
    while len(b) < n:
        got = c.recv(n - len(b))
        if not got:
            raise EOFError
        b += got
    return bytes(b)


def read_rec(c):
    t, n = struct.unpack("<II", read_n(c, 8))
    return t, read_n(c, n)


def reply(c, code, msg):
    m = msg.encode()
    c.sendall(struct.pack("<IIi", REPLY, 4 + len(m), code) + m)


def pump(a, b, log, kbps=0):
    try:
        while True:
            d = a.recv(16 << 10 if kbps else 1 << 16)
            if not d:
                break
            if log:
                log.write(d)
            b.sendall(d)
            if kbps:
                time.sleep(len(d) / 1024 / kbps)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main(argv):
    mode = argv[1]
    if mode == "record":
        src = listen(argv[2])
        dst = connect(argv[3])
        with open(argv[4], "wb") as log:
            t = threading.Thread(target=pump, args=(dst, src, None))
            t.start()
            pump(src, dst, log)
            t.join()
    elif mode == "slow":
        src = listen(argv[2], 64 << 10)
        dst = connect(argv[3])
        t = threading.Thread(target=pump, args=(dst, src, None))
        t.start()
        pump(src, dst, None, int(argv[4]))
        t.join()
    elif mode == "cut":
        c = listen(argv[2])
        read_rec(c)
        reply(c, 0, "ready")
        left = int(argv[3])
        while left > 0:
            d = c.recv(min(left, 1 << 16))
            if not d:
                break
            left -= len(d)
        c.close()
    elif mode == "refuse":
        c = listen(argv[2])
        t, _ = read_rec(c)
        reply(c, 0, "ready")
        while t != STATE:
            t, _ = read_rec(c)
        reply(c, -22, "refused by the test")
        try:
            while c.recv(1 << 16):
                pass
        except OSError:
            pass
    elif mode == "replay":
        c = connect(argv[2])
        data = open(argv[3], "rb").read()
        try:
            c.sendall(data)
            c.shutdown(socket.SHUT_WR)
            while True:
                t, b = read_rec(c)
                code = struct.unpack("<i", b[:4])[0]
                print("reply", code, b[4:].decode(errors="replace"))
        except (EOFError, OSError):
            pass
    elif mode == "trickle":
        c = connect(argv[2])
        data = open(argv[3], "rb").read()
        n = struct.unpack("<II", data[:8])[1]
        try:
            c.sendall(data[:8 + n])
            read_rec(c)
            c.sendall(struct.pack("<II", STATE, 200 << 20))
            for _ in range(600):
                c.sendall(b"\0")
                time.sleep(0.2)
        except (EOFError, OSError):
            pass
    elif mode == "send":
        c = connect(argv[2])
        try:
            c.sendall(bytes.fromhex(argv[3]))
            c.shutdown(socket.SHUT_WR)
            while True:
                t, b = read_rec(c)
                print("reply", struct.unpack("<i", b[:4])[0], b[4:].decode(errors="replace"))
        except (EOFError, OSError, struct.error):
            pass
    elif mode == "silent":
        c = connect(argv[2])
        c.settimeout(float(argv[3]))
        try:
            c.recv(1)
        except OSError:
            pass
    elif mode == "freeport":
        fam = socket.AF_INET6 if ":" in argv[2] else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.bind((argv[2], 0))
        print(s.getsockname()[1])
    elif mode == "records":
        data = open(argv[2], "rb").read()
        off = 0
        while off + 8 <= len(data):
            t, n = struct.unpack("<II", data[off:off + 8])
            print(t, n, off)
            off += 8 + n
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
