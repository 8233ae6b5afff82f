"""What this process holds open, as the kernel lists it (/proc/self/fd): the tests look at
the descriptors themselves (`wild.store.files.make_spares`' unnamed files, a log a pump lets
go), not at wild's own bookkeeping of them."""

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


def descriptors_of(path: Path) -> list[int]:
    """The descriptors this process holds open on the file at `path`."""
    target = os.path.realpath(path)
    found: list[int] = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") == target:
                found.append(int(name))
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return found
