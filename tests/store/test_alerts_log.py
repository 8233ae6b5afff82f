"""alerts.jsonl on disk: safe appends, incremental reads by byte offset, the loop's log."""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.parsers.alert_samples import ids, line
from wild import clock
from wild.errors import describe_os_error
from wild.parsers.alerts import INCOMPLETE
from wild.parsers.alerts_file import AlertCursor
from wild.parsers.lines import Problem
from wild.store import alerts_log
from wild.store.alerts_log import AlertLog, append_alert, read_new


@given(st.lists(st.binary(max_size=40), max_size=8), st.integers(min_value=0, max_value=400))
def test_reading_in_two_steps_equals_reading_once(chunks: list[bytes], cut: int) -> None:
    content = b"\n".join(chunks) + b'\n{"id":"a"}\n{"id":"b"'
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "alerts.jsonl"
        path.write_bytes(content[:cut])
        first = read_new(path, None)
        with path.open("ab") as handle:
            handle.write(content[cut:])
        second = read_new(path, first.cursor)
        whole = read_new(path, None)
    assert not second.reset
    seen = [(a.line, dict(a.raw)) for a in first.entries + second.entries]
    assert seen == [(a.line, dict(a.raw)) for a in whole.entries]
    assert second.cursor == whole.cursor
    assert second.problems[-1] == Problem("alerts.jsonl", whole.cursor.line_count + 1, INCOMPLETE)


def test_append_creates_the_file_and_seals_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    append_alert(path, {"id": "a", "severity": "info"})
    with path.open("ab") as handle:
        handle.write(b'{"id":"torn","desc')  # a writer died here
    append_alert(path, {"id": "b", "severity": "info"})
    assert path.read_bytes() == (
        b'{"id":"a","severity":"info"}\n{"id":"torn","desc\n{"id":"b","severity":"info"}\n'
    )
    result = read_new(path, None)
    assert ids(result.entries) == [("a", "pending", 1), ("b", "pending", 3)]
    assert [str(p) for p in result.problems] == [
        'alerts.jsonl:2: not valid JSON, skipped; fix or delete the line: {"id":"torn","desc'
    ]


def test_append_to_a_missing_folder_says_what_to_do(tmp_path: Path) -> None:
    # The OSError goes up as it is (the loop waits out a full disk); one mapping words it.
    path = tmp_path / "nowhere" / "alerts.jsonl"
    with pytest.raises(FileNotFoundError) as caught:
        append_alert(path, {"id": "a"})
    assert describe_os_error(caught.value) == (
        f"{path}: No such file or directory; check that the path exists"
    )


def _append_many(path: str, worker: int, count: int, pad: int, start: Any) -> None:
    start.wait()
    for i in range(count):
        pad_text = chr(97 + worker) * pad
        append_alert(
            path, {"id": f"w{worker}-{i}", "severity": "info", "context": {"pad": pad_text}}
        )


def test_concurrent_appenders_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    workers, count, pad = 4, 200, 6000  # lines above 4 KiB (PIPE_BUF) on purpose
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(workers)
    procs = [
        ctx.Process(target=_append_many, args=(str(path), w, count, pad, start))
        for w in range(workers)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    assert [proc.exitcode for proc in procs] == [0] * workers
    result = read_new(path, None)
    assert result.problems == ()
    assert len(result.entries) == workers * count
    for worker in range(workers):
        mine = [a for a in result.entries if a.id.startswith(f"w{worker}-")]
        assert [a.id for a in mine] == [f"w{worker}-{i}" for i in range(count)]
        assert {a.context["pad"] for a in mine} == {chr(97 + worker) * pad}


# ---------------------------------------------------------------------------------- reading


def test_a_torn_last_line_waits_until_it_is_finished(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + b'{"id":"b","severity":"info","sta')
    first = read_new(path, None)
    assert ids(first.entries) == [("a", "pending", 1)]
    assert first.problems == (Problem("alerts.jsonl", 2, INCOMPLETE),)
    assert str(first.problems[0]) == (
        "alerts.jsonl:2: incomplete last line, waiting for the writer to finish it"
    )
    assert (first.cursor.offset, first.cursor.line_count) == (len(line("a")), 1)
    again = read_new(path, first.cursor)
    assert (again.entries, again.problems, again.cursor) == ((), first.problems, first.cursor)
    with path.open("ab") as handle:
        handle.write(b'tus":"resolved"}\n')
    done = read_new(path, again.cursor)
    assert (ids(done.entries), done.problems, done.reset) == ([("b", "resolved", 2)], (), False)
    assert done.cursor.offset == path.stat().st_size


def test_incremental_reads_return_only_new_lines(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + b"oops\n")
    first = read_new(path, None)
    assert first.problems == (
        Problem("alerts.jsonl", 2, "not valid JSON, skipped; fix or delete the line: oops"),
    )
    with path.open("ab") as handle:
        handle.write(line("b") + b"\n" + line("a", "resolved"))
    second = read_new(path, first.cursor)
    assert ids(second.entries) == [("b", "pending", 3), ("a", "resolved", 5)]
    assert (second.problems, second.reset) == ((), False)
    assert second.cursor.offset == path.stat().st_size
    assert second.cursor.line_count == 5
    assert read_new(path, second.cursor).entries == ()


def test_truncation_is_a_reset(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + line("b"))
    cursor = read_new(path, None).cursor
    with path.open("r+b") as handle:
        handle.truncate(0)
        handle.write(line("c"))
    result = read_new(path, cursor)
    assert (ids(result.entries), result.reset) == ([("c", "pending", 1)], True)


def test_replacement_by_rename_is_a_reset(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a"))
    cursor = read_new(path, None).cursor
    other = tmp_path / "other.jsonl"
    other.write_bytes(line("a") + line("b"))  # same head, longer: only the inode differs
    os.replace(other, path)
    result = read_new(path, cursor)
    assert (ids(result.entries), result.reset) == ([("a", "pending", 1), ("b", "pending", 2)], True)


def test_an_in_place_rewrite_of_the_same_inode_is_a_reset(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + line("b"))
    cursor = read_new(path, None).cursor
    path.write_bytes(line("x") + line("y") + line("z"))  # same inode, grown, new head
    result = read_new(path, cursor)
    assert (len(result.entries), result.reset) == (3, True)


def test_a_rewrite_that_keeps_the_head_is_caught_by_the_tail(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + line("b", "pending"))
    cursor = read_new(path, None).cursor
    path.write_bytes(line("a") + line("b", "pendinG") + line("d"))  # an edit near the cursor
    result = read_new(path, cursor)
    assert (len(result.entries), result.reset) == (3, True)


def test_a_missing_file_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    empty = read_new(path, None)
    assert (empty.entries, empty.problems, empty.reset, empty.cursor.offset) == ((), (), False, 0)
    path.write_bytes(line("a"))
    cursor = read_new(path, empty.cursor).cursor
    path.unlink()
    assert read_new(path, cursor).reset is True


def test_cursor_survives_state_json(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a"))
    cursor = read_new(path, None).cursor
    stored = orjson.loads(orjson.dumps({"alertsFilePosition": cursor.to_json()}))
    assert set(stored["alertsFilePosition"]) == {
        "dev",
        "ino",
        "offset",
        "lineCount",
        "head",
        "tail",
    }
    assert AlertCursor.from_json(stored["alertsFilePosition"]) == cursor
    assert AlertCursor.from_json(4096) is None  # the seed's bare offset names no file
    assert AlertCursor.from_json({**cursor.to_json(), "offset": -1}) is None
    assert AlertCursor.from_json({**cursor.to_json(), "offset": True}) is None
    assert AlertCursor.from_json({**cursor.to_json(), "head": None}) is None


def test_alert_log_reports_changes_and_problems(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + b"junk\n")
    log = AlertLog(path)
    assert ids(log.refresh()) == [("a", "pending", 1)]
    with path.open("ab") as handle:
        handle.write(line("b") + line("a", "in-progress") + b'{"id":')
    assert ids(log.refresh()) == [("b", "pending", 3), ("a", "in-progress", 4)]
    assert [str(p) for p in log.problems] == [
        "alerts.jsonl:2: not valid JSON, skipped; fix or delete the line: junk",
        f"alerts.jsonl:5: {INCOMPLETE}",
    ]
    assert ids(log.index.active()) == [("a", "in-progress", 4), ("b", "pending", 3)]
    assert log.refresh() == ()


def test_alert_log_resumes_from_a_stored_cursor(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a") + line("b"))
    stored = AlertCursor.from_json(read_new(path, None).cursor.to_json())
    with path.open("ab") as handle:
        handle.write(line("c") + line("a", "resolved"))
    log = AlertLog(path, since=stored)
    assert ids(log.refresh()) == [("a", "resolved", 4), ("c", "pending", 3)]
    assert ids(log.index.active()) == [("b", "pending", 2), ("c", "pending", 3)]
    path.write_bytes(line("z"))  # a different file: everything in it is news
    assert ids(AlertLog(path, since=stored).refresh()) == [("z", "pending", 1)]


def test_a_settled_file_unchanged_since_the_last_read_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a file whose times were over RACY_NS old when its stamp was taken (git's racy
    rule): one changed within a timestamp tick of the read may change again unseen."""
    path = tmp_path / "alerts.jsonl"
    path.write_bytes(line("a", "pending"))
    reads: list[object] = []
    real = alerts_log.read_new

    def counted(*args: Any, **kwargs: Any) -> alerts_log.ReadResult:
        reads.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(alerts_log, "read_new", counted)
    log = AlertLog(path)
    log.refresh()
    log.refresh()  # written just now: racy, read again
    assert len(reads) == 2
    monkeypatch.setattr(clock, "RACY_NS", -(10**18))  # every stamp settled from here on
    log.refresh()
    assert log.refresh() == () and len(reads) == 3  # settled and unchanged: not read again
    append_alert(path, {"id": "b", "status": "pending"})
    assert [a.id for a in log.refresh()] == ["b"] and len(reads) == 4
    size = path.stat().st_size
    path.write_bytes(line("c", "pending")[:-1].ljust(size - 1) + b"\n")  # a rewrite, same size
    os.utime(path, ns=(0, 10**9))  # its times moved (set here: the tick may be the append's)
    assert path.stat().st_size == size
    assert [a.id for a in log.refresh()] == ["c"] and len(reads) == 5
