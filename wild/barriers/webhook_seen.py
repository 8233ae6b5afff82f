"""The webhook's spent ids (signatures, delivery ids), kept in `.wild/` across restarts.

Every spend is appended (one write, fsynced) before the caller goes on, so a replay after a
crash or a restart is still refused. Ids leave when their window closes: the file is
rewritten atomically with the live ones when it is opened and whenever the dead lines
outnumber the live ones, so it stays as small as the traffic of one window.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from wild.errors import WildError
from wild.parsers import webhook_seen
from wild.store.files import atomic_write, read_bytes
from wild.store.jsonl import append_bytes

# Below this many lines the file is never rewritten: not worth a rename per request.
_COMPACT_AT = 256


class SeenIds:
    """Spent ids and when each may be forgotten; one owner (the webhook, under its lock)."""

    def __init__(self, path: Path, now: float) -> None:
        self._path = path
        try:
            data = read_bytes(path)
        except OSError as exc:
            # Serving without them would reopen the replay window: refuse to start instead.
            raise WildError(
                f"{path}: cannot read the webhook's spent ids ({exc.strerror or exc}); "
                "fix or remove that file, then start again"
            ) from exc
        everything = webhook_seen.parse(data)
        self._spent = webhook_seen.live(everything, now)
        self._lines = len(everything)
        if len(self._spent) < len(everything):
            self._rewrite()

    def __contains__(self, key: object) -> bool:
        return key in self._spent

    def __len__(self) -> int:
        return len(self._spent)

    def spend(self, spent: Iterable[tuple[str, float]], now: float) -> None:
        """Remember each (key, until); durable on disk before this returns."""
        lines = b""
        for key, until in spent:
            self._spent[key] = max(until, self._spent.get(key, until))
            lines += webhook_seen.encode(key, until)
            self._lines += 1
        if not lines:
            return
        append_bytes(self._path, lines, durable=True)
        self._spent = webhook_seen.live(self._spent, now)
        if self._lines > max(_COMPACT_AT, 2 * len(self._spent)):
            self._rewrite()

    def _rewrite(self) -> None:
        # Only a compaction: the appended file is right as it is, just longer, so a folder
        # that refuses the rewrite (read-only, full) must not refuse requests or the start.
        try:
            atomic_write(self._path, webhook_seen.render(self._spent))
        except (OSError, WildError):
            return
        self._lines = len(self._spent)
