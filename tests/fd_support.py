"""What this process holds open, as the kernel lists it (/proc/self/fd): the tests look at
the descriptors themselves (`wild.store.files.make_spares`' unnamed files, a log a pump lets
go), not at wild's own bookkeeping of them."""

from __future__ import annotations

import os
from pathlib import Path


def _open_files() -> dict[int, str]:
    """What each descriptor this process holds leads to (`/proc/self/fd/N`'s link)."""
    found: dict[int, str] = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return found


def unnamed_files(folder: Path) -> dict[int, int]:
    """The unnamed files (O_TMPFILE) this process holds in `folder`: descriptor → inode."""
    prefix = os.path.join(os.path.realpath(folder), "#")
    return {
        fd: int(target[len(prefix) : -len(" (deleted)")])
        for fd, target in _open_files().items()
        if target.startswith(prefix) and target.endswith(" (deleted)")
    }


def descriptors_of(path: Path) -> list[int]:
    """The descriptors this process holds open on the file at `path`."""
    target = os.path.realpath(path)
    return [fd for fd, leads_to in _open_files().items() if leads_to == target]
