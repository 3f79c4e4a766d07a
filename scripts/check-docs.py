#!/usr/bin/env python3
"""check-docs.py - the front door and the manual hold together.

usage: check-docs.py [ROOT]

Fails (exit 1, one line per problem) when a relative Markdown link in
README.md or docs/*.md names a file that does not exist, or when a test
(tests/unit/NAME_test.c, tests/sh/NAME.sh, tests/fuzz/NAME_fuzz.c,
tests/nested/scenarios*/NAME.sh) is not named in the test map of
docs/architecture.md (by its name in backquotes, or by a `PREFIX*` entry).
"""
import glob
import os
import re
import sys

LINK = re.compile(r'\]\(([^)\s]+)\)')


def check_links(root):
    errs = []
    for f in [os.path.join(root, 'README.md')] + sorted(glob.glob(os.path.join(root, 'docs', '*.md'))):
        for n, line in enumerate(open(f, encoding='utf-8'), 1):
            for target in LINK.findall(line):
                if re.match(r'^[a-z]+:', target) or target.startswith('#'):
                    continue
                path = target.split('#', 1)[0]
                if not os.path.exists(os.path.join(os.path.dirname(f), path)):
                    errs.append('%s:%d: link to a missing file: %s' % (os.path.relpath(f, root), n, target))
    return errs


def tests_of(root):
    t = os.path.join(root, 'tests')
    names = []
    for pat, cut in (('unit/*_test.c', '_test.c'), ('sh/*.sh', '.sh'), ('fuzz/*_fuzz.c', '.c'),
                     ('nested/scenarios*/*.sh', '.sh')):
        for p in glob.glob(os.path.join(t, pat)):
            names.append((os.path.basename(p)[:-len(cut)], os.path.relpath(p, root)))
    return sorted(names)


def check_test_map(root):
    doc = os.path.join(root, 'docs', 'architecture.md')
    text = open(doc, encoding='utf-8').read()
    m = re.search(r'^## Test map\n(.*?)(?=^## |\Z)', text, re.S | re.M)
    if not m:
        return ['docs/architecture.md: no "## Test map" section']
    named = set(re.findall(r'`([A-Za-z0-9_\-]+\*?)`', m.group(1)))
    prefixes = [n[:-1] for n in named if n.endswith('*')]
    errs = []
    for name, path in tests_of(root):
        if name not in named and not any(name.startswith(p) for p in prefixes):
            errs.append('docs/architecture.md: test map: %s is not named (add it to its room)' % path)
    return errs


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    errs = check_links(root) + check_test_map(root)
    for e in errs:
        print(e)
    return 1 if errs else 0


if __name__ == '__main__':
    sys.exit(main())
