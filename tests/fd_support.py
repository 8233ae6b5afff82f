"""What this process holds open, as the kernel lists it (/proc/self/fd): the tests of
`wild.store.files.make_spares` look at the unnamed files themselves, not at wild's own
bookkeeping of them."""

from __future__ import annotations

import os
from pathlib import Path


def unnamed_files(folder: Path) -> dict[int, int]:
    """The unnamed files (O_TMPFILE) this process holds in `folder`: descriptor → inode."""
    prefix = os.path.join(os.path.realpath(folder), "#")
    found: dict[int, int] = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the listing's own descriptor, closed by now
        if target.startswith(prefix) and target.endswith(" (deleted)"):
            found[int(name)] = int(target[len(prefix) : -len(" (deleted)")])
    return found
