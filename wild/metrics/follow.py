"""A run's metrics followed as its trackers write them: one `RunMetrics` per run holds a
`FileFollower` per metric file, each keeping its offset, so a refresh reads only the bytes
appended since the last (a rewritten file, or a `whole` format that changed, is read again
from the start). Early stopping and the dashboard keep one `RunMetrics` per live run."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from wild.metrics.readers import MetricReader, metric_readers
from wild.metrics.sources import Found, discover, roots
from wild.parsers.metric_formats import Decoded, Decoder
from wild.parsers.metric_summary import RunSummary, Series, objective_of, summarize
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths
from wild.record import record
from wild.store.files import Signature as FileSignature
from wild.store.files import stat_signature

HEAD = 4096  # the first bytes of an appended file: when they change, the file was rewritten
READ_CAP = 256 * 1024 * 1024  # one refresh reads at most this much of one file


@record
class MetricsView:
    """A run's metrics as read so far: each key's (step, value) series in logged order, the
    final numbers its `metrics.json` states, the files read and what was wrong in them."""

    series: Mapping[str, Series]
    final: Mapping[str, float] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    total_steps: int | None = None


class FileFollower:
    """One metric file: its reader's state, and where in the file it has read to."""

    def __init__(self, path: str, reader: MetricReader) -> None:
        self.path = path
        self.reader = reader
        self.signature: FileSignature | None = None
        self._restart()

    def _restart(self) -> None:
        self.offset = 0
        self.head = b""
        self.inode: int | None = None
        self.decoder: Decoder | None = (
            self.reader.appended(self.path) if self.reader.appended else None
        )
        self.series: dict[str, list[tuple[float, float]]] = {}
        self.final: dict[str, float] = {}
        self.problems: list[str] = []
        self.total_steps: int | None = None

    def read(self) -> bool:
        """Read what changed; whether anything did."""
        found = stat_signature(self.path)
        if found == self.signature:
            return False
        self.signature = found
        try:
            # Never through a link (one planted at a run's metrics.jsonl could show any file's
            # lines on the dashboard): O_NOFOLLOW, as wild's writes (wild.store.write_guard).
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as source:
                self._read(source)
        except OSError as error:
            self._restart()
            why = (
                "a symbolic link; metrics are never read through one"
                if error.errno == errno.ELOOP
                else f"cannot be read ({error.strerror or error})"
            )
            self.problems.append(f"{self.path}: {why}")
        return True

    def _read(self, source: Any) -> None:
        info = os.fstat(source.fileno())
        if self.reader.whole is not None or self.decoder is None:
            self._restart()
            if self.reader.whole is not None:
                self._take(self.reader.whole(source.read(READ_CAP), self.path))
            return
        head = source.read(HEAD)
        rewritten = info.st_ino != self.inode or info.st_size < self.offset
        if rewritten or head[: len(self.head)] != self.head:
            self._restart()
        self.inode, self.head = info.st_ino, head
        source.seek(self.offset)
        data = source.read(READ_CAP)
        self.offset += len(data)
        self._take(self.decoder.feed(data))

    def _take(self, decoded: Decoded) -> None:
        for sample in decoded.samples:
            self.series.setdefault(sample.key, []).append((sample.step, sample.value))
        self.final.update(decoded.final)
        self.problems.extend(decoded.problems[:20])
        del self.problems[:-20]  # a garbled file is named, not quoted line by line forever
        if decoded.total_steps is not None:
            self.total_steps = decoded.total_steps


class RunMetrics:
    """One run's metric files, followed: `refresh()` finds files that came (only when a
    folder changed) and reads what was appended to each."""

    def __init__(
        self,
        paths: WildPaths,
        run: RunRecord,
        spec: Mapping[str, Any] | None,
        readers: tuple[MetricReader, ...] | None = None,
    ) -> None:
        self.readers = metric_readers() if readers is None else readers
        self.roots = roots(paths, run, spec, self.readers)
        self.found: Found | None = None
        self.followers: dict[str, FileFollower] = {}

    def refresh(self) -> MetricsView:
        self.read()
        return self.view()

    def read(self) -> None:
        """Find the files that came and read what was appended to each (no view built: early
        stopping takes each follower's new points itself)."""
        if self.found is None or not self.found.unchanged():
            self.found = discover(self.roots, self.readers)
            by_name = {reader.name: reader for reader in self.readers}
            self.followers = {
                path: self.followers.get(path) or FileFollower(path, by_name[name])
                for path, name in self.found.files
            }
        for follower in self.followers.values():
            follower.read()

    def counted(self) -> list[FileFollower]:
        """The followers whose files count (a rewritten format's newest file only)."""
        return _counted(list(self.followers.values()))

    def view(self) -> MetricsView:
        counted = self.counted()
        series: dict[str, list[tuple[float, float]]] = {}
        final: dict[str, float] = {}
        total = None
        for follower in counted:
            for key, points in follower.series.items():
                series[key] = series[key] + points if key in series else points
            final.update(follower.final)
            total = follower.total_steps or total
        if len(counted) > 1:  # several files hold one key: in step order (a stable sort)
            series = {key: sorted(points, key=lambda p: p[0]) for key, points in series.items()}
        return MetricsView(
            series,
            final,
            tuple(f.path for f in counted),
            tuple(p for f in counted for p in f.problems),
            total,
        )

    def inputs(self) -> list[list[Any]]:
        """What the summary was read from: every folder walked and file read, with their
        signatures (the kept summary is good while all of them hold)."""
        folders = self.found.folders if self.found is not None else ()
        return [[p, list(s) if s else None] for p, s in folders] + [
            [f.path, list(f.signature) if f.signature else None] for f in self.followers.values()
        ]


def _counted(followers: Sequence[FileFollower]) -> list[FileFollower]:
    """The followers whose files count: every appended one, and of each rewritten format
    only the newest file (a checkpoint's trainer_state.json repeats the history)."""
    newest: dict[str, FileFollower] = {}
    out = []
    for follower in followers:
        if follower.reader.whole is None:
            out.append(follower)
            continue
        mtime = follower.signature[2] if follower.signature else -1
        held = newest.get(follower.reader.name)
        if held is None or mtime > (held.signature[2] if held.signature else -1):
            newest[follower.reader.name] = follower
    return out + list(newest.values())


def run_summary(paths: WildPaths, run: RunRecord, spec: Mapping[str, Any] | None) -> RunSummary:
    """`run`'s summary read afresh from its files (the objective from its sweep's `spec`)."""
    view = RunMetrics(paths, run, spec).refresh()
    objective = objective_of(spec) if spec is not None else None
    return summarize(view.series, view.final, objective, view.total_steps)
