#!/bin/sh
# clang-format check of our C sources (config: .clang-format).
set -u
cd "$(dirname "$0")/.."
# (the tracked files; outside a git checkout, e.g. an exported tree, the
# sources found there)
files=$(git ls-files '*.c' '*.h' 2>/dev/null) ||
	files=$(find . -path ./build -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print)
[ -z "$files" ] && exit 0
# shellcheck disable=SC2086
clang-format --dry-run -Werror $files
