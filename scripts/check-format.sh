#!/bin/sh
# clang-format check of our C sources (config: .clang-format).
set -u
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h')
[ -z "$files" ] && exit 0
# shellcheck disable=SC2086
clang-format --dry-run -Werror $files
