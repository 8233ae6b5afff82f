"""Where a run's metric files are: its folder (`.wild/runs/<id>/`, what `$WILD_RUN_DIR`
names) searched with every reader's default globs, folders of its workdir that one of its
parameters names (`--output_dir=out/lr0.1`), and the globs its sweep gives under
`"metrics"` (relative to the run folder or the workdir, `{run_id}` and `{param}` filled).

Finding them walks folders; the walk's folders are kept with their stat signatures, so a
later look knows without walking that no file came or went (a new file changes its
folder's signature)."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wild.metrics.readers import MetricReader, reader_for
from wild.parsers.metric_summary import fill_placeholders
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths
from wild.record import record
from wild.store.files import Signature as FileSignature
from wild.store.files import stat_signature

MAX_DEPTH = 8  # `**` reaches this many folders down: a tracker nests two or three
MAX_ENTRIES = 20_000  # a walk stops here: a glob over a dataset folder must not hang a command
_WILD = ".wild"
_SKIPPED = frozenset({".git", "__pycache__", "node_modules", ".venv", _WILD})
_EARLIER_ATTEMPT = re.compile(r"attempt-\d+")  # a rerun moves its last attempt's files there

Signature = FileSignature | None  # `stat_signature`; None: missing


@record
class Root:
    """A folder and the globs to match under it; `reader` names the reader of what matches
    (None: the reader whose file names match)."""

    folder: Path
    globs: tuple[tuple[str, str | None], ...]


@record
class Found:
    """The metric files of a run (path, reader name), in a stable order, and every folder
    walked to find them with its signature."""

    files: tuple[tuple[str, str], ...]
    folders: tuple[tuple[str, Signature], ...]

    def unchanged(self) -> bool:
        """Whether no file can have come or gone since (every folder's signature holds)."""
        return all(stat_signature(folder) == sig for folder, sig in self.folders)


def roots(
    paths: WildPaths,
    run: RunRecord,
    spec: Mapping[str, Any] | None,
    readers: Sequence[MetricReader],
) -> tuple[Root, ...]:
    """Where to look for `run`'s metrics (its sweep's `spec` gives the `metrics` globs)."""
    defaults = tuple((glob, reader.name) for reader in readers for glob in reader.search)
    given = spec.get("metrics") if spec is not None else None
    globs = tuple(
        (fill_placeholders(glob, run.id, run.params), None)
        for glob in (given if isinstance(given, list) else [])
        if isinstance(glob, str)
    )
    workdir = paths.project / run.workdir
    found = [Root(paths.run_dir(run.id), defaults + globs)]
    if globs:
        found.append(Root(workdir, globs))
    for value in run.params.values():
        # A parameter naming a folder of the workdir is where that run writes its outputs.
        if isinstance(value, str) and value.strip() and "\0" not in value:
            folder = workdir / value
            if not Path(value).is_absolute() and ".." not in Path(value).parts and folder.is_dir():
                found.append(Root(folder, defaults))
    return tuple(found)


@functools.lru_cache(maxsize=256)
def _regex(glob: str) -> re.Pattern[str]:
    """A glob as a regex over '/'-separated relative paths: `*` and `?` within a folder's
    name, `**` for any folders. Kept per glob: every run ended looks its metrics up by the
    same few globs (built afresh, 0.1 ms a run at 10,000 runs)."""
    out = []
    parts = glob.strip("/").split("/")
    for index, part in enumerate(parts):
        if part == "**":
            out.append("(?:[^/]+/)*" if index < len(parts) - 1 else ".*")
            continue
        text = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in part)
        out.append(text + ("/" if index < len(parts) - 1 else ""))
    return re.compile("".join(out))


def _base(glob: str) -> tuple[str, int]:
    """The literal folder a glob starts in, and how deep under it a match can be."""
    parts = glob.strip("/").split("/")
    literal = 0
    while literal < len(parts) - 1 and not any(c in parts[literal] for c in "*?["):
        literal += 1
    rest = parts[literal:]
    depth = MAX_DEPTH if "**" in rest else len(rest) - 1
    return "/".join(parts[:literal]), depth


def discover(found_roots: Sequence[Root], readers: Sequence[MetricReader]) -> Found:
    """Walk each root once (no deeper than its globs reach) and match its globs."""
    by_name = {reader.name: reader for reader in readers}
    files: dict[str, str] = {}
    folders: dict[str, Signature] = {}
    for root in found_roots:
        compiled = [(_regex(glob), reader) for glob, reader in root.globs]
        starts: dict[str, int] = {}
        for glob, _ in root.globs:
            base, depth = _base(glob)
            starts[base] = max(starts.get(base, -1), depth)
        for base, depth in starts.items():
            start = root.folder / base if base else root.folder
            for relative in _walk(start, depth, folders, top=not base):
                path = f"{base}/{relative}" if base else relative
                for pattern, reader_name in compiled:
                    if not pattern.fullmatch(path):
                        continue
                    reader = by_name.get(reader_name) if reader_name else None
                    reader = reader or reader_for(path.rsplit("/", 1)[-1], tuple(readers))
                    if reader is not None:
                        files.setdefault(str(root.folder / path), reader.name)
                        break
    return Found(tuple(sorted(files.items())), tuple(sorted(folders.items())))


def _walk(start: Path, depth: int, folders: dict[str, Signature], *, top: bool) -> list[str]:
    """Every file under `start` as a relative path, `depth` folders deep at most; each folder
    entered is recorded with its signature."""
    out: list[str] = []
    pending: list[tuple[Path, str, int]] = [(start, "", 0)]
    while pending and len(out) < MAX_ENTRIES:
        folder, prefix, level = pending.pop()
        folders[str(folder)] = stat_signature(folder)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # not there (yet): its recorded signature None tells when it comes
        for entry in entries:
            name = prefix + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                earlier = top and not prefix and _EARLIER_ATTEMPT.fullmatch(entry.name)
                if level < depth and entry.name not in _SKIPPED and not earlier:
                    pending.append((Path(entry.path), name + "/", level + 1))
            else:
                out.append(name)
    return out


def watched_folders(found_roots: Sequence[Root]) -> set[Path]:
    """The folders a change to the run's metric files shows in: where each glob starts
    (a watcher follows them recursively; one not there yet is left out)."""
    out = set()
    for root in found_roots:
        for glob, _ in root.globs:
            base, _ = _base(glob)
            folder = root.folder / base if base else root.folder
            if folder.is_dir():
                out.add(folder)
    return out
