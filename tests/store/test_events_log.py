"""events.log on disk: one whole JSON line per event, unique increasing ids, tolerant reading."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from wild.errors import RefusedWriteError
from wild.parsers.lines import Problem
from wild.store.events_log import EventLog, read_events
from wild.store.write_guard import open_own_file


class SteppingClock:
    """A clock the test moves by hand, including backwards."""

    def __init__(self) -> None:
        self.moment = datetime(2026, 2, 8, 10, 45, 23, 120000, tzinfo=UTC)

    def now(self) -> datetime:
        return self.moment

    def monotonic(self) -> float:
        return 0.0


def id_key(event_id: str) -> tuple[int, int]:
    _, ms, _, counter = event_id.split("-")
    return int(ms), int(counter)


def test_append_writes_one_json_line_with_id_ts_kind_cause_and_data(tmp_path: Path) -> None:
    path = tmp_path / "events.log"
    log = EventLog(path, SteppingClock())
    first = log.append("wake", reason="alerts.jsonl changed")
    second = log.append("agent-run", cause=first, iteration=3, files=[Path("a.py")])
    pid = __import__("os").getpid()
    assert first == f"evt-1770547523120-{pid}-000001"
    assert second == f"evt-1770547523120-{pid}-000002"
    assert path.read_bytes() == (
        b'{"id":"' + first.encode() + b'","ts":"2026-02-08T10:45:23.120Z","kind":"wake",'
        b'"cause":null,"reason":"alerts.jsonl changed"}\n'
        b'{"id":"' + second.encode() + b'","ts":"2026-02-08T10:45:23.120Z","kind":"agent-run",'
        b'"cause":"' + first.encode() + b'","iteration":3,"files":["a.py"]}\n'
    )


def test_ids_keep_increasing_when_the_clock_steps_back(tmp_path: Path) -> None:
    clock = SteppingClock()
    log = EventLog(tmp_path / "events.log", clock)
    first = log.append("a")
    clock.moment -= timedelta(seconds=5)
    second = log.append("b")
    clock.moment += timedelta(seconds=10)
    third = log.append("c")
    assert id_key(first) < id_key(second) < id_key(third)
    assert id_key(second)[0] == id_key(first)[0]


def test_reserved_keys_are_refused(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.log", SteppingClock())
    with pytest.raises(
        ValueError, match=r"event data may not use the reserved key\(s\) \['id', 'ts'\]"
    ):
        log.append("x", id="mine", ts="now")
    assert not (tmp_path / "events.log").exists()


def test_concurrent_threads_write_whole_lines_with_unique_increasing_ids(tmp_path: Path) -> None:
    path = tmp_path / "events.log"
    log = EventLog(path, SteppingClock())
    per_thread, threads = 200, 8
    payload = "y" * 3000  # lines bigger than a pipe buffer page still land whole

    def work(number: int) -> None:
        for index in range(per_thread):
            log.append("tick", thread=number, index=index, payload=payload)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    events, problems = read_events(path)
    assert problems == []
    assert len(events) == per_thread * threads
    ids = [event["id"] for event in events]
    assert len(set(ids)) == len(ids)
    # Written under the lock: file order is id order.
    assert [id_key(i) for i in ids] == sorted(id_key(i) for i in ids)
    for number in range(threads):
        mine = [e["index"] for e in events if e["thread"] == number]
        assert mine == list(range(per_thread))


WRITER = """
import sys
from pathlib import Path
from wild.clock import SystemClock
from wild.store.events_log import EventLog
log = EventLog(Path(sys.argv[1]), SystemClock())
for index in range(int(sys.argv[2])):
    log.append("tick", writer=sys.argv[3], index=index, payload="z" * 2000)
"""


def test_three_processes_appending_at_once_never_tear_a_line(tmp_path: Path) -> None:
    path = tmp_path / "events.log"
    count = 300
    root = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(count), f"w{n}"], cwd=root)
        for n in range(3)
    ]
    assert [proc.wait() for proc in procs] == [0, 0, 0]
    events, problems = read_events(path)
    assert problems == []
    assert len(events) == 3 * count
    assert len({event["id"] for event in events}) == 3 * count
    for name in ("w0", "w1", "w2"):
        assert [e["index"] for e in events if e["writer"] == name] == list(range(count))


def test_read_skips_and_reports_torn_and_malformed_lines(tmp_path: Path) -> None:
    path = tmp_path / "events.log"
    path.write_bytes(
        b'{"id":"evt-1","kind":"a"}\n'
        b"\n"
        b"not json\n"
        b"[1,2]\n"
        b'{"id":"evt-2","kind":"b"}\n'
        b'{"id":"evt-3","ki'
    )
    events, problems = read_events(path)
    assert events == [{"id": "evt-1", "kind": "a"}, {"id": "evt-2", "kind": "b"}]
    assert problems == [
        Problem(str(path), 3, "not valid JSON; skipped"),
        Problem(str(path), 4, "not a JSON object; skipped"),
        Problem(
            str(path),
            6,
            "incomplete last line (still being written, or cut off by a crash); skipped",
        ),
    ]


def test_an_event_after_a_crash_mid_line_is_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "events.log"
    path.write_bytes(b'{"id":"evt-1","kind":"a"}\n{"id":"evt-2","ki')
    event_id = EventLog(path, SteppingClock()).append("after-crash")
    events, problems = read_events(path)
    assert [e["id"] for e in events] == ["evt-1", event_id]
    assert problems == [Problem(str(path), 2, "not valid JSON; skipped")]


def test_read_of_a_missing_log_is_empty(tmp_path: Path) -> None:
    assert read_events(tmp_path / "events.log") == ([], [])


def test_unserialisable_data_is_logged_as_text(tmp_path: Path) -> None:
    path = tmp_path / "events.log"
    EventLog(path, SteppingClock()).append("x", where=Path("/tmp/a"), tags={"b", "a"})
    line = orjson.loads(path.read_bytes())
    assert (line["where"], line["tags"]) == ("/tmp/a", ["a", "b"])


def _opens_of(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record each open of a wild file by the JSON lines appender."""
    opened: list[Path] = []

    def counting(file: Path, flags: int, mode: int = 0o666, *, own_folder: bool) -> int:
        opened.append(file)
        return open_own_file(file, flags, mode, own_folder=own_folder)

    monkeypatch.setattr("wild.store.jsonl.open_own_file", counting)
    return opened


def _project_log(tmp_path: Path) -> Path:
    (tmp_path / "project" / ".wild").mkdir(parents=True)
    return tmp_path / "project" / ".wild" / "events.log"


def test_the_log_is_opened_once_for_many_appends_and_again_after_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loop appends ~4 times an iteration: each an open of the folder and of the file
    # before the kept descriptor (issue 22 item 8).
    path = _project_log(tmp_path)
    opened = _opens_of(path, monkeypatch)
    log = EventLog(path, SteppingClock())
    log.append("one")
    log.append_all([("two", {}), ("three", {})])
    log.append("four")
    assert opened == [path]
    log.close()
    log.append("five")
    assert opened == [path, path]
    log.close()
    kinds = [event["kind"] for event in read_events(path)[0]]
    assert kinds == ["one", "two", "three", "four", "five"]


def test_a_kept_log_replaced_or_removed_meanwhile_is_opened_afresh(tmp_path: Path) -> None:
    # A compaction's rename or a human's `rm`: the next line goes to the file at the path,
    # never to the inode the kept descriptor still holds.
    path = _project_log(tmp_path)
    log = EventLog(path, SteppingClock())
    log.append("before")
    path.rename(path.with_name("old.log"))
    path.write_bytes(b'{"id":"x","ts":"t","kind":"new-file"}\n')
    log.append("after-replace")
    path.unlink()
    log.append("after-rm")
    log.close()
    assert [e["kind"] for e in read_events(path.with_name("old.log"))[0]] == ["before"]
    assert [e["kind"] for e in read_events(path)[0]] == ["after-rm"]


def test_a_kept_log_turned_into_a_link_out_of_the_project_is_refused(tmp_path: Path) -> None:
    # An agent plants a link at the name after the first append: the kept descriptor must not
    # make the check moot (the same refusal as a fresh open's), and nothing is written there.
    path = _project_log(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"")
    log = EventLog(path, SteppingClock())
    log.append("before")
    path.unlink()
    path.symlink_to(outside)
    with pytest.raises(RefusedWriteError, match="outside the project"):
        log.append("through-the-link")
    log.close()
    assert outside.read_bytes() == b""


def test_a_kept_log_made_read_only_is_refused(tmp_path: Path) -> None:
    path = _project_log(tmp_path)
    log = EventLog(path, SteppingClock())
    log.append("before")
    path.chmod(0o444)
    with pytest.raises(RefusedWriteError, match="read-only"):
        log.append("after-chmod")
    log.close()
    assert [e["kind"] for e in read_events(path)[0]] == ["before"]


def test_held_lines_get_their_ids_now_and_are_written_with_the_next_write(tmp_path: Path) -> None:
    """A held line is given its id at once (a later line may name it as its cause) and is
    written, in id order, by the next append, a `flush` or the `close`: one append for a
    run's end, its judgment and the next decision's lines."""
    path = tmp_path / "events.log"
    log = EventLog(path, SteppingClock())
    first = log.hold("agent-end", exit_code=0)
    log.append_all([("state", {"to": "SELECTING"})], causes=[first], held=True)
    assert not path.exists()  # nothing written yet
    log.append_all([("work-start", {"task": "task-002"})])
    events, problems = read_events(path)
    assert problems == []
    assert [e["kind"] for e in events] == ["agent-end", "state", "work-start"]
    assert events[0]["id"] == first and events[1]["cause"] == first
    assert sorted(events, key=lambda e: id_key(e["id"])) == events
    log.hold("wake")
    log.flush()
    log.hold("loop-end")
    log.close()
    assert [e["kind"] for e in read_events(path)[0]][-2:] == ["wake", "loop-end"]
