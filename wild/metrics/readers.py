"""The metric readers: one per file format, each a `MetricReader` naming the files it reads
and how. wild's own formats are built in; a site package adds more (W&B offline files,
MLflow's `mlruns/`) by registering a `MetricReader` under the `wild.metric_readers` entry
points (docs/metrics.md)."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from functools import cache

from wild.parsers.metric_formats import (
    CsvDecoder,
    Decoded,
    Decoder,
    JsonLinesDecoder,
    TfEventsDecoder,
    final_numbers,
    trainer_state,
)
from wild.record import record

ENTRY_POINT_GROUP = "wild.metric_readers"


@record
class MetricReader:
    """A file format: the file names it reads (`names`, fnmatch patterns), where it looks in
    a run's folder by default (`search`, globs relative to it, `**` for any folders), and
    either `appended` (a decoder fed only the new bytes of a growing file) or `whole` (the
    file decoded whole each time it changes; when a run has several such files, only the
    newest counts: a rewritten format carries the whole history, as a checkpoint's does)."""

    name: str
    names: tuple[str, ...]
    search: tuple[str, ...]
    appended: Callable[[str], Decoder] | None = None
    whole: Callable[[bytes, str], Decoded] | None = None

    def reads(self, file_name: str) -> bool:
        return any(fnmatch.fnmatchcase(file_name, pattern) for pattern in self.names)


JSONL = MetricReader("wild-jsonl", ("*.jsonl",), ("metrics.jsonl",), appended=JsonLinesDecoder)
FINAL = MetricReader("wild-json", ("metrics.json",), ("metrics.json",), whole=final_numbers)
LIGHTNING_CSV = MetricReader("lightning-csv", ("*.csv",), ("**/metrics.csv",), appended=CsvDecoder)
HF_TRAINER_STATE = MetricReader(
    "hf-trainer-state", ("trainer_state.json",), ("**/trainer_state.json",), whole=trainer_state
)
TENSORBOARD = MetricReader(
    "tensorboard",
    ("events.out.tfevents.*",),
    ("**/events.out.tfevents.*",),
    appended=TfEventsDecoder,
)
# Also registered in setup.cfg; listed here so a source checkout without installed metadata
# (or an older install's) still reads every built-in format.
BUILT_IN = (JSONL, FINAL, LIGHTNING_CSV, HF_TRAINER_STATE, TENSORBOARD)


@cache
def metric_readers() -> tuple[MetricReader, ...]:
    """The built-in readers, then every plug-in's (a plug-in of a built-in's name replaces
    it); a plug-in that fails to load is left out, never fatal to reading the others."""
    # Imported here: importlib.metadata costs ~15 ms that a command reading no metric skips.
    from importlib.metadata import entry_points  # noqa: PLC0415

    found = {reader.name: reader for reader in BUILT_IN}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            reader = point.load()
        except Exception:  # noqa: S112  (a broken plug-in must not hide the others)
            continue
        if isinstance(reader, MetricReader):
            found[reader.name] = reader
    return tuple(found.values())


def reader_for(file_name: str, readers: tuple[MetricReader, ...]) -> MetricReader | None:
    """The first reader that reads files of this name."""
    return next((reader for reader in readers if reader.reads(file_name)), None)
