"""The one offset reader (alerts.jsonl, runs.jsonl): one way with a file it cannot read.

The two copies it replaced disagreed: the alerts reader let the OSError go up (`wild --status`
failed, naming only the folder), the runs reader made it a problem but emptied its index, so
the loop and the dashboard forgot every run until the file could be read again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from wild.parsers.lines import Problem
from wild.parsers.runs import RunRecord, SweepRecord
from wild.store.alerts_log import AlertLog, append_alert, read_new
from wild.store.runs_log import RunLog, append_records

SWEEP = SweepRecord(id="s1", name="n", spec={"name": "n"}, status="active", run_ids=("s1-001",))
RUN = RunRecord(
    id="s1-001", sweep="s1", params={"lr": 1}, resolved_instruction="true", status="queued"
)
FOLDER = "Is a directory; a folder stands where a file should be (or the reverse); move it aside"


@dataclass(frozen=True)
class Reader:
    """A log reader as a test drives it: read on, the ids it knows, its problems."""

    refresh: Callable[[], object]
    known: Callable[[], list[str]]
    problems: Callable[[], list[str]]


def _alerts(path: Path) -> Reader:
    log = AlertLog(path)
    append_alert(path, {"id": "a1", "severity": "warning", "source": "s", "type": "t"})
    return Reader(
        log.refresh,
        lambda: sorted(a.id for a in log.index.all()),
        lambda: [str(p) for p in log.problems],
    )


def _runs(path: Path) -> Reader:
    log = RunLog(path)
    append_records(path, [SWEEP, RUN])
    return Reader(
        log.refresh, lambda: sorted(log.index.runs), lambda: [str(p) for p in log.problems]
    )


@pytest.mark.parametrize("make", [_alerts, _runs], ids=["alerts.jsonl", "runs.jsonl"])
def test_a_file_turned_unreadable_is_one_problem_and_what_was_read_is_kept(
    tmp_path: Path, make: Callable[[Path], Reader]
) -> None:
    path = tmp_path / "log.jsonl"
    reader = make(path)
    reader.refresh()
    before = reader.known()
    assert before and reader.problems() == []
    aside = tmp_path / "aside"
    path.rename(aside)
    path.mkdir()  # a folder where the file belongs
    named = str(path) if make is _runs else path.name  # each log names its file as before
    for _ in range(2):  # said once, however often it is read
        reader.refresh()
        assert reader.known() == before
        assert reader.problems() == [f"{named}:1: {FOLDER}"]
    path.rmdir()
    aside.rename(path)  # the same file again: read on from where the reads stopped
    reader.refresh()
    assert reader.known() == before
    assert reader.problems() == []


def test_an_unreadable_file_leaves_the_cursor_where_it_was(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    append_alert(path, {"id": "a1", "severity": "info"})
    first = read_new(path, None)
    path.unlink()
    path.mkdir()
    again = read_new(path, first.cursor)
    assert (again.entries, again.cursor, again.reset) == ((), first.cursor, False)
    assert again.unreadable == Problem("alerts.jsonl", 1, FOLDER)
