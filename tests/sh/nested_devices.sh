#!/usr/bin/env bash
# Real Linux guests on a real KVM, the second group of nested scenarios
# (those whose file says GROUP=devices: SATA and CD-ROM through Linux's
# ahci/sr, Hyper-V enlightenments, vsock, the guest agent's credentials and
# downward metrics, snapshot and restore), in an L1 boot of their own so
# that each group fits its time box. Everything else, the rerun rule
# included, is tests/sh/nested_linux.sh's.
NESTED_GROUP=devices exec bash "$(dirname "$0")/nested_linux.sh"
