#!/usr/bin/env bash
# Seeds for migrate_fuzz (the stream a source sends, docs/migration.md):
# a whole migration (hello with the target's config, pages into both RAM
# regions, the state of tests/fuzz/corpus/snapshot_fuzz/tiny-guest-state,
# the commit, and once paused), the same with another config, a page record straddling a
# region's end, one too long, and the state without its commit. $1: the
# seed directory.
set -eu
exec python3 - "$1" tests/fuzz/corpus/snapshot_fuzz/tiny-guest-state <<'PY'
import os, struct, sys

OUT, STATE = sys.argv[1], sys.argv[2]
HELLO, PAGES, STATE_REC, COMMIT = 1, 2, 3, 4
rec = lambda t, b: struct.pack("<II", t, len(b)) + b
hello = lambda cfg: rec(HELLO, b"VMLTMIGR" + struct.pack("<I", 1) + cfg)
pages = lambda gpa, n, fill=0x5a: rec(PAGES, struct.pack("<Q", gpa) + bytes([fill]) * (4096 * n))
state = open(STATE, "rb").read() if os.path.exists(STATE) else b"VMLTSNAP"

def seed(name, b):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(b)

whole = hello(b"CONFIG") + pages(0, 2) + pages(1 << 20, 1) + rec(STATE_REC, state)
seed("whole", whole + rec(COMMIT, struct.pack("<I", 0)))
seed("whole-paused", whole + rec(COMMIT, struct.pack("<I", 1)))
seed("other-config", hello(b"OTHER") + pages(0, 1))
seed("straddle", hello(b"CONFIG") + pages((64 << 10) - 4096, 2))
seed("long", hello(b"CONFIG") + struct.pack("<IIQ", PAGES, 8 + 4096 * 257, 0) + bytes(64))
seed("no-commit", whole)
PY
