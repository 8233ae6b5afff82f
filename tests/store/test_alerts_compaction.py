"""Compaction of alerts.jsonl: crash-safe, and no line lost to appenders that take no lock."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.parsers.alert_samples import SEED, ids, line
from wild.parsers.alerts import AlertIndex, encode_alert
from wild.store import alerts_compaction, files
from wild.store.alerts_compaction import CompactionReport, compact
from wild.store.alerts_log import AlertLog, append_alert, read_new


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def test_compaction_moves_resolved_alerts_and_readers_reset(tmp_path: Path) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    path.write_bytes(SEED + b"junk\n" + line("c") + line("c", "resolved") + line("d"))
    log = AlertLog(path)
    log.refresh()
    before = log.index.active()
    report = compact(path, archive, lock)
    assert report == CompactionReport(2, 5, 0, 3, 0)
    seed = SEED.splitlines(keepends=True)
    assert lines_of(archive) == [seed[0], seed[2], seed[3], line("c"), line("c", "resolved")]
    assert lines_of(path) == [seed[1], b"junk\n", line("d")]
    assert log.refresh() == ()  # same alerts, so nothing changed for the loop
    assert [dict(a.raw) for a in log.index.active()] == [dict(a.raw) for a in before]
    assert read_new(path, log.cursor).reset is False
    assert compact(path, archive, lock) == CompactionReport(0, 0, 0, 3, 0)


def test_an_existing_cursor_resets_after_compaction(tmp_path: Path) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    path.write_bytes(line("a") + line("b") + line("b", "resolved"))
    cursor = read_new(path, None).cursor
    compact(path, archive, lock)
    result = read_new(path, cursor)
    assert (ids(result.entries), result.reset) == ([("a", "pending", 1)], True)


def test_a_crash_between_archive_and_rewrite_loses_and_duplicates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    archive.write_bytes(line("old", "resolved"))
    path.write_bytes(line("a") + line("b") + line("a", "resolved"))
    real_write = files.atomic_write_parts

    def crash(target: Path, parts: Iterable[bytes]) -> None:
        raise RuntimeError("killed")

    monkeypatch.setattr(files, "atomic_write_parts", crash)
    with pytest.raises(RuntimeError):
        compact(path, archive, lock)
    assert lines_of(archive) == [line("old", "resolved"), line("a"), line("a", "resolved")]
    monkeypatch.setattr(files, "atomic_write_parts", real_write)
    with path.open("ab") as handle:
        handle.write(line("b", "resolved") + line("c"))
    assert compact(path, archive, lock) == CompactionReport(2, 2, 2, 1, 0)
    assert lines_of(archive) == [
        line("old", "resolved"),
        line("a"),
        line("a", "resolved"),
        line("b"),
        line("b", "resolved"),
    ]
    assert lines_of(path) == [line("c")]


def test_a_torn_archive_tail_is_sealed_and_completed(tmp_path: Path) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    path.write_bytes(line("a") + line("a", "resolved"))
    archive.write_bytes(line("a") + line("a", "resolved")[:9])  # died while appending
    assert compact(path, archive, lock) == CompactionReport(1, 1, 1, 0, 0)
    assert lines_of(archive) == [
        line("a"),
        line("a", "resolved")[:9] + b"\n",
        line("a", "resolved"),
    ]
    assert path.read_bytes() == b""


def _run_first(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, first: Callable[[], None]
) -> None:
    real = getattr(owner, name)

    def wrapper(*args: Any) -> Any:
        first()
        return real(*args)

    monkeypatch.setattr(owner, name, wrapper)


def test_lines_appended_during_compaction_are_carried_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    path.write_bytes(line("a") + line("a", "resolved") + line("b") + b'{"id":"c",')

    def job_appends_without_any_lock() -> None:
        with path.open("ab") as handle:  # also finishes the torn line
            handle.write(b'"status":"pending"}\n' + line("d"))

    def shell_appends_to_the_old_file() -> None:
        with path.open("ab") as handle:
            handle.write(line("e"))

    # one append lands after our read, the other after the final pre-rename read
    _run_first(monkeypatch, alerts_compaction, "_append_archive", job_appends_without_any_lock)
    _run_first(monkeypatch, files, "atomic_write_parts", shell_appends_to_the_old_file)
    assert compact(path, archive, lock) == CompactionReport(1, 2, 0, 4, 3)
    assert lines_of(path) == [
        line("b"),
        b'{"id":"c","status":"pending"}\n',
        line("d"),
        line("e"),
    ]
    assert lines_of(archive) == [line("a"), line("a", "resolved")]


def _someone_waits_for_a_flock_on(path: Path) -> bool:
    inode = f":{path.stat().st_ino} "
    text = Path("/proc/locks").read_text()
    return any("-> FLOCK" in entry and inode in entry for entry in text.splitlines())


def test_compaction_waits_for_an_append_under_way(tmp_path: Path) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    path.write_bytes(line("a") + line("a", "resolved"))
    appender = os.open(path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(appender, fcntl.LOCK_SH)  # an append_alert between lock and write
    reports: list[CompactionReport] = []
    compactor = threading.Thread(target=lambda: reports.append(compact(path, archive, lock)))
    compactor.start()
    while compactor.is_alive() and not _someone_waits_for_a_flock_on(path):
        time.sleep(0.001)
    waited = _someone_waits_for_a_flock_on(path)
    os.write(appender, line("b"))
    os.close(appender)
    compactor.join()
    assert waited
    assert reports == [CompactionReport(1, 2, 0, 1, 1)]
    assert lines_of(path) == [line("b")]


def _append_and_resolve(path: str, worker: int, count: int, go: Any) -> None:
    for i in range(count):
        if i == count // 2:
            go.wait()  # the second half is written while compaction runs
        alert_id = f"w{worker}-{i}"
        append_alert(path, {"id": alert_id, "status": "pending", "pad": "p" * 700})
        final = "in-progress" if i % 10 == 0 else "resolved"
        append_alert(path, {"id": alert_id, "status": final})


def test_compaction_with_concurrent_appenders_loses_and_duplicates_nothing(
    tmp_path: Path,
) -> None:
    path, archive, lock = tmp_path / "alerts.jsonl", tmp_path / "archive.jsonl", tmp_path / ".lock"
    workers, count = 4, 100  # 200 lines per worker
    ctx = multiprocessing.get_context("fork")
    go = ctx.Event()
    procs = [
        ctx.Process(target=_append_and_resolve, args=(str(path), w, count, go))
        for w in range(workers)
    ]
    for proc in procs:
        proc.start()
    reports: list[CompactionReport] = []
    while any(proc.is_alive() for proc in procs):
        reports.append(compact(path, archive, lock))
        if any(r.archived_lines for r in reports):
            go.set()
    for proc in procs:
        proc.join()
    assert [proc.exitcode for proc in procs] == [0] * workers
    reports.append(compact(path, archive, lock))

    written = Counter(
        encode_alert(record)
        for w in range(workers)
        for i in range(count)
        for record in (
            {"id": f"w{w}-{i}", "status": "pending", "pad": "p" * 700},
            {"id": f"w{w}-{i}", "status": "in-progress" if i % 10 == 0 else "resolved"},
        )
    )
    archived = [x for x in lines_of(archive) if x.strip()]  # sealing may add blank lines
    assert Counter([x for x in lines_of(path) if x.strip()] + archived) == written
    assert sum(r.archived_lines for r in reports) == len(archived)
    active = AlertIndex(read_new(path, None).entries).active()
    assert sorted(a.id for a in active) == sorted(
        f"w{w}-{i}" for w in range(workers) for i in range(0, count, 10)
    )
