#!/usr/bin/env bash
# The layering rules hold (scripts/check-layering.sh).
source "$(dirname "$0")/../lib/sh.sh"
scripts/check-layering.sh || fail "layering rules broken"
finish
