#!/usr/bin/env bash
# The tree is clang-formatted (.clang-format) and cppcheck finds nothing:
# the same checks as `make check`, so a change that breaks them fails CI.
source "$(dirname "$0")/../lib/sh.sh"
command -v clang-format >/dev/null || skip "no clang-format"
command -v cppcheck >/dev/null || skip "no cppcheck"
scripts/check-format.sh 2>&1 | head -20 >"$TMPD/format.out"
[[ -s $TMPD/format.out ]] && { cat "$TMPD/format.out"; fail "clang-format: files not formatted (run clang-format -i)"; }
scripts/check-cppcheck.sh || fail "cppcheck findings"
finish
