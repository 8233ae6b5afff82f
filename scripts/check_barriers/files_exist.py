#!/usr/bin/env python3
"""Barrier check: at least COUNT files match a glob pattern.

usage: files_exist.py PATTERN [COUNT]

PATTERN is a glob relative to the current folder (a barrier check runs in the project root);
`**` matches any depth and `~` is the home folder. COUNT defaults to 1. Files whose name
starts with a dot match only a pattern that names the dot. Exit 0 when at least COUNT paths
match, 1 when fewer do, 2 on a usage error; one line of output says why.
"""

from __future__ import annotations

import glob
import os
import sys

USAGE = "usage: files_exist.py PATTERN [COUNT]"


def judge(argv: list[str]) -> tuple[int, str]:
    if argv[:1] in (["-h"], ["--help"]):
        return 0, USAGE
    if not 1 <= len(argv) <= 2 or not argv[0]:
        return 2, USAGE
    pattern = argv[0]
    count_text = argv[1] if len(argv) == 2 else "1"
    if not count_text.isdigit():
        return 2, f"files_exist.py: COUNT must be a whole number, not {count_text!r}"
    need = int(count_text)
    found = len(glob.glob(os.path.expanduser(pattern), recursive=True))
    if found >= need:
        return 0, f"{found} match {pattern!r} (need {need})"
    return 1, f"{found} of {need} match {pattern!r}"


if __name__ == "__main__":
    code, line = judge(sys.argv[1:])
    print(line, file=sys.stderr if code == 2 else sys.stdout)
    sys.exit(code)
