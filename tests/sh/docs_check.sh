#!/usr/bin/env bash
# The front door and the manual hold together (scripts/check-docs.py): every
# relative link in README.md and docs/*.md names a file that exists, and
# every test is named in docs/architecture.md's test map. Then each kind of
# break is planted in a copy and must be found.
source "$(dirname "$0")/../lib/sh.sh"
command -v python3 >/dev/null || skip "no python3"

out=$(scripts/check-docs.py . 2>&1) && ok "links resolve, every test is in the test map" ||
	fail "check-docs: $out"

# a copy with what the check reads: README.md, docs/, the test files' names
copy() {
	rm -rf "$TMPD/t" && mkdir -p "$TMPD/t" && cp -r README.md docs "$TMPD/t/" &&
		(find tests/unit tests/sh tests/fuzz tests/nested -type f | while read -r f; do
			mkdir -p "$TMPD/t/$(dirname "$f")" && : >"$TMPD/t/$f"
		done)
}
copy && scripts/check-docs.py "$TMPD/t" >/dev/null && ok "the copy passes" || fail "the copy does not pass"

copy && echo 'See [gone](docs/gone.md).' >>"$TMPD/t/README.md"
out=$(scripts/check-docs.py "$TMPD/t" 2>&1)
[[ $? -ne 0 && $out == *"README.md:"*"docs/gone.md"* ]] && ok "a broken link in README.md fails, naming it" ||
	fail "a broken README link passed: $out"

copy && echo 'See [gone](../README.md#x) and [also](nothere.md#y).' >>"$TMPD/t/docs/disks.md"
out=$(scripts/check-docs.py "$TMPD/t" 2>&1)
[[ $? -ne 0 && $out == *"docs/disks.md:"*"nothere.md#y"* && $out != *"../README.md"* ]] &&
	ok "a broken link in docs/ fails; a good one with an anchor passes" ||
	fail "docs/ links misjudged: $out"

copy && : >"$TMPD/t/tests/sh/zz_unmapped.sh" && : >"$TMPD/t/tests/unit/zz_unmapped_test.c"
out=$(scripts/check-docs.py "$TMPD/t" 2>&1)
[[ $? -ne 0 && $out == *"tests/sh/zz_unmapped.sh"* && $out == *"tests/unit/zz_unmapped_test.c"* ]] &&
	ok "a test missing from the test map fails, naming it" || fail "an unmapped test passed: $out"

copy && : >"$TMPD/t/tests/unit/blk_zz_test.c"
scripts/check-docs.py "$TMPD/t" >/dev/null && ok "a PREFIX* entry of the map covers a new test" ||
	fail "blk_* did not cover tests/unit/blk_zz_test.c"
finish
