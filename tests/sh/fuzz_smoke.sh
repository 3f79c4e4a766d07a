#!/usr/bin/env bash
# A short libFuzzer run (20 s) of the manifest parse+resolve path (scripts/fuzz.sh);
# `make fuzz` runs it longer.
source "$(dirname "$0")/../lib/sh.sh"
scripts/fuzz.sh "${FUZZ_SMOKE_SECONDS:-20}" resolve_fuzz
rc=$?
((rc == 77)) && skip "clang not installed"
((rc == 0)) || fail "fuzzer found a problem (see build/fuzz/)"
finish
