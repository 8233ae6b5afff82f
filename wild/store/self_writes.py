"""What wild itself last wrote to each file, so that its own writes are not taken for a human's.

Two places ask: the folder watcher (a file event caused by wild's own write must not wake the
loop as if someone had edited the file) and the store's settled read (a file that holds what
wild wrote last is complete, so there is no need to wait for a writer to finish it). Both
compare content, not timestamps: an editor can save within the same clock tick.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from wild.digest import sha256_hex
from wild.procfs import real_path


class Resolved(str):
    """A path `real_path` gave a moment ago (a writer's target): its own key, not resolved
    again (three system calls each; a swap asks four times; issue 22 item 8)."""

    __slots__ = ()


def _key(path: str | os.PathLike[str]) -> str:
    """One spelling per file, so a path remembered by a writer matches a watcher's event path."""
    return path if type(path) is Resolved else real_path(path)


def content_hash(data: bytes | bytearray) -> str:
    """The sha256 hex digest of `data`: how wild knows bytes again (its own writes, a file's
    prefix under an offset)."""
    return sha256_hex(data)


class SelfWrites:
    """Size and hash of the last bytes wild wrote to each file; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, tuple[int, str]] = {}

    def remember(self, path: str | os.PathLike[str], data: bytes | bytearray) -> None:
        """Record `data`, the file's whole content once wild's write lands."""
        with self._lock:
            self._known[_key(path)] = (len(data), content_hash(data))

    def remember_digest(self, path: str | os.PathLike[str], size: int, digest: str) -> None:
        """`remember` for content written in parts: its size and sha256 hex digest."""
        with self._lock:
            self._known[_key(path)] = (size, digest)

    def remembering(self, path: str | os.PathLike[str]) -> Callable[[bytes], None]:
        """An `on_written` callback for writes to `path`."""
        return lambda data: self.remember(path, data)

    def holds(self, path: str | os.PathLike[str], data: bytes) -> bool:
        """Whether `data`, the file's whole content as just read, is what wild wrote last.

        The first mismatch forgets the file: someone else wrote since, so later changes to it
        are theirs, not ours.
        """
        key = _key(path)
        with self._lock:
            entry = self._known.get(key)
        if entry is None:
            return False
        # The size check spares hashing a large file that has obviously changed.
        if len(data) == entry[0] and content_hash(data) == entry[1]:
            return True
        self._forget(key, entry)
        return False

    def is_own(self, path: str | os.PathLike[str]) -> bool:
        """True when the file still holds exactly what wild wrote; the first mismatch forgets it."""
        key = _key(path)
        with self._lock:
            entry = self._known.get(key)
        if entry is None:
            return False
        try:
            if os.stat(key).st_size == entry[0]:
                with open(key, "rb") as handle:
                    return self.holds(key, handle.read())
        except OSError:
            pass
        self._forget(key, entry)
        return False

    def _forget(self, key: str, entry: tuple[int, str]) -> None:
        with self._lock:
            # Unless wild wrote again meanwhile: that newer entry stands.
            if self._known.get(key) == entry:
                del self._known[key]
