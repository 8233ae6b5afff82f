"""The totals ledger outside the project: raised with every count, its running time by grains."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from wild.parsers import totals as ledger_format
from wild.parsers.totals import Totals
from wild.store import files, totals_ledger
from wild.store.jsonl import KeptAppender


def note_writes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Path, bytes]]:
    """Every write of a ledger file from now on: ("whole", path, bytes) or ("line", …)."""
    writes: list[tuple[str, Path, bytes]] = []
    real_whole, real_line = files.atomic_write, totals_ledger.append_raise

    def whole(path: Path, data: bytes) -> None:
        writes.append(("whole", path, data))
        real_whole(path, data)

    def line(path: Path, data: bytes, *, durable: bool = True) -> None:
        writes.append(("line", path, data))
        real_line(path, data, durable=durable)

    monkeypatch.setattr(totals_ledger, "atomic_write", whole)
    monkeypatch.setattr(totals_ledger, "append_raise", line)
    return writes


def test_a_ledger_lagging_by_less_than_the_grain_in_running_time_alone_covers() -> None:
    ledger = Totals(iteration=3, counted=3, running_s=100.0, cost_usd=1.0, tokens=10)
    assert ledger.covers(Totals(3, 3, 129.9, 1.0, 10), time_grain_s=30.0)
    assert not ledger.covers(Totals(3, 3, 130.0, 1.0, 10), time_grain_s=30.0)
    assert not ledger.covers(Totals(4, 3, 100.5, 1.0, 10), time_grain_s=30.0)  # a count rose
    assert not ledger.covers(Totals(3, 3, 100.5, 1.5, 10), time_grain_s=30.0)  # spending rose
    assert not ledger.covers(Totals(3, 3, 100.5, 1.0, 10))  # no grain: any time counts


def test_the_ledger_is_written_when_a_count_rises_not_at_every_tenth_of_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = note_writes(monkeypatch)
    state = tmp_path / "project" / ".wild" / "state.json"
    state.parent.mkdir(parents=True)
    # As the loop saves state.json within one iteration: the run's record (a new iteration
    # number), the agent's pid, its judgment (a count and its cost); the time moves each time.
    saves = [
        Totals(iteration=1, counted=0, running_s=0.2),
        Totals(iteration=1, counted=0, running_s=0.3),
        Totals(iteration=1, counted=1, running_s=1.4, cost_usd=0.5),
        Totals(iteration=1, counted=1, running_s=1.5, cost_usd=0.5),
        Totals(iteration=1, counted=1, running_s=29.0, cost_usd=0.5),
        Totals(iteration=1, counted=1, running_s=31.5, cost_usd=0.5),
    ]
    for totals in saves:
        totals_ledger.record(state, totals)
    # The record, the judgment, the time after 30 s more: the first written whole, then lines.
    assert [kind for kind, _path, _data in writes] == ["whole", "line", "line"]
    assert totals_ledger.recorded(state) == saves[-1]


def test_a_raise_writes_its_own_projects_file_whatever_the_machine_ran_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file per project: a raise reads and writes its own project's few hundred bytes, the
    same at the thousandth project of the machine as at the first (before: the one ledger of
    every project, read and written whole at every raise, ~240 KB on a bench machine)."""
    others = [tmp_path / f"other-{n}" / ".wild" / "state.json" for n in range(1, 201)]
    for n, other in enumerate(others, 1):
        totals_ledger.record(other, Totals(iteration=n))
    kept = {path: path.read_bytes() for path in totals_ledger.ledger_folder().glob("*.json")}
    assert len(kept) == 200
    writes = note_writes(monkeypatch)
    state = tmp_path / "project" / ".wild" / "state.json"
    for n in range(1, 4):
        totals_ledger.record(state, Totals(iteration=n, counted=n))
    assert {path for _kind, path, _data in writes} == {totals_ledger.ledger_path(state)}
    assert all(len(data) < 400 for _kind, _path, data in writes)
    assert totals_ledger.recorded(state) == Totals(iteration=3, counted=3)
    assert all(path.read_bytes() == data for path, data in kept.items())  # untouched
    assert [totals_ledger.recorded(other) for other in others[:3]] == [
        Totals(iteration=n) for n in range(1, 4)
    ]


def test_a_project_ledger_naming_another_project_or_damaged_counts_nothing(tmp_path: Path) -> None:
    state = tmp_path / "project" / ".wild" / "state.json"
    totals_ledger.record(state, Totals(iteration=2, counted=2))
    path = totals_ledger.ledger_path(state)
    mine = path.read_bytes()
    assert ledger_format.project_ledger(mine, totals_ledger.project_of(state)) == Totals(2, 2)
    assert ledger_format.project_ledger(mine, str(tmp_path / "else")) == Totals()
    assert ledger_format.project_ledger(b"{not json", str(tmp_path)) == Totals()
    path.write_bytes(b"garbage")
    assert totals_ledger.recorded(state) == Totals()
    totals_ledger.record(state, Totals(iteration=3, counted=3))  # a line after the garbage
    assert path.read_bytes().startswith(b"garbage\n{")
    assert totals_ledger.recorded(state) == Totals(iteration=3, counted=3)


def test_a_raise_made_soon_is_written_in_order_and_its_failure_told_at_settle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`record_soon` writes in a thread; `settle` waits for it and raises what the write
    raised (once), in the caller's thread: the loop handles it as any failed write."""
    state = tmp_path / "project" / ".wild" / "state.json"
    totals_ledger.record_soon(state, Totals(iteration=1, counted=1))
    totals_ledger.record_soon(state, Totals(iteration=2, counted=2))  # waits for the first
    totals_ledger.settle()
    assert totals_ledger.recorded(state) == Totals(iteration=2, counted=2)

    def full_disk(path: Path, data: bytes, *, durable: bool = True) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(totals_ledger, "atomic_write", full_disk)
    monkeypatch.setattr(totals_ledger, "append_raise", full_disk)
    totals_ledger.record_soon(state, Totals(iteration=3, counted=3))  # returns at once
    with pytest.raises(OSError, match="No space left"):
        totals_ledger.settle()
    totals_ledger.settle()  # told once
    assert totals_ledger.recorded(state) == Totals(iteration=2, counted=2)


def test_a_project_without_a_file_of_its_own_takes_the_machine_ledgers_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """wild 0.1 kept every project in one `totals.json`: a project recorded there and not yet
    in a file of its own counts from that entry, and its first raise starts from it (an
    upgrade never resets a cap). Only its own entry is made a record, not every project's."""
    state = tmp_path / "project" / ".wild" / "state.json"
    others = {str(tmp_path / f"other-{n}"): {"iteration": n} for n in range(1, 201)}
    mine = Totals(iteration=3, counted=2, running_s=4.5, cost_usd=0.25, tokens=9)
    entries = {**others, totals_ledger.project_of(state): mine.to_json()}
    machine = totals_ledger.machine_ledger_path()
    machine.parent.mkdir(parents=True, exist_ok=True)
    files.atomic_write(machine, orjson.dumps({"format": 1, "projects": entries}))
    built: list[object] = []
    real = Totals.from_json.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Totals], raw: object) -> Totals:
        built.append(raw)
        return real(cls, raw)  # type: ignore[no-any-return]

    monkeypatch.setattr(Totals, "from_json", classmethod(counting))
    assert totals_ledger.recorded(state) == mine
    assert len(built) == 1
    assert totals_ledger.recorded(tmp_path / "never" / ".wild" / "state.json") == Totals()
    assert len(built) == 1  # none recorded: nothing to build
    monkeypatch.setattr(Totals, "from_json", classmethod(real))
    totals_ledger.record(state, Totals(iteration=4, counted=3))
    assert totals_ledger.recorded(state) == Totals(4, 3, 4.5, 0.25, 9)
    assert totals_ledger.ledger_path(state).is_file()
    assert machine.read_bytes() == orjson.dumps({"format": 1, "projects": entries})  # read only
    assert ledger_format.ledger_entry(b"not json", str(tmp_path)) == Totals()


def test_the_machine_ledger_is_parsed_only_when_it_names_the_project(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """wild 0.1's ledger of every project (~240 KB here) is parsed at a fresh project's launch
    only if it names the project, as orjson or `json` (non-ASCII as `\\u` escapes) writes it."""
    raw = Totals(2, 2, 1.0, 0.5, 7).to_json()
    parses: list[bytes] = []
    real = orjson.loads

    def parsing(data: bytes) -> Any:
        parses.append(data)
        return real(data)

    monkeypatch.setattr(orjson, "loads", parsing)
    others = {f"/elsewhere/{n}": raw for n in range(50)}
    for project in ("/home/me/proj", "/home/mé/projet"):
        document = {"format": 1, "projects": {**others, project: raw}}
        for data in (orjson.dumps(document), json.dumps(document).encode()):
            parses.clear()
            assert ledger_format.ledger_entry(data, project) == Totals(2, 2, 1.0, 0.5, 7)
            assert parses == [data]
        parses.clear()
        assert ledger_format.ledger_entry(orjson.dumps(document), project + "2") == Totals()
        assert ledger_format.ledger_entry(orjson.dumps({"projects": others}), project) == Totals()
        assert parses == []  # no entry of it: nothing parsed


def test_a_projects_key_is_the_kernels_real_path_without_an_lstat_per_folder(
    tmp_path: Path, lstat_calls: list[object]
) -> None:
    """The ledger's and the approval store's key for a project (each asked twice per loop
    iteration): its real path as the kernel names it, a link in the path resolved, not
    `os.path.realpath`'s lstat per folder."""
    from wild.barriers.approvals import project_key

    (tmp_path / "a" / "b" / "project" / ".wild").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "a")
    state = tmp_path / "link" / "b" / "project" / ".wild" / "state.json"
    real = str(tmp_path.resolve() / "a" / "b" / "project")
    lstat_calls.clear()  # counted from here on
    assert totals_ledger.project_of(state) == real
    assert project_key(state.parent.parent) == real
    assert lstat_calls == []


def test_a_raise_made_soon_is_made_at_once_in_the_callers_thread_and_fsynced_at_settle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`record_soon` appends its line at once, in the caller's thread (a thread of the
    ledger's own took the CPU and the interpreter from the loop's next decision on a 2-CPU
    machine), and leaves its fsync to `settle`, which the loop calls before an agent's
    program runs: the lines appended since the last settle share one fsync there.
    `settle(durable=False)` only tells a failure."""
    state = tmp_path / "project" / ".wild" / "state.json"
    makers: list[threading.Thread] = []
    syncs: list[Path] = []
    real_line, real_sync = totals_ledger.append_raise, KeptAppender.sync

    def noting_line(path: Path, data: bytes, *, durable: bool = True) -> None:
        makers.append(threading.current_thread())
        real_line(path, data, durable=durable)

    def noting_sync(self: KeptAppender) -> None:
        syncs.append(self.path)
        real_sync(self)

    monkeypatch.setattr(totals_ledger, "append_raise", noting_line)
    monkeypatch.setattr(KeptAppender, "sync", noting_sync)
    totals_ledger.record(state, Totals(iteration=1, counted=1))  # the first: written whole
    for n in range(2, 4):
        totals_ledger.record_soon(state, Totals(iteration=n, counted=n))
        assert totals_ledger.recorded(state) == Totals(iteration=n, counted=n)  # at once
    assert makers == [threading.main_thread()] * 2
    totals_ledger.settle(durable=False)
    assert syncs == []
    totals_ledger.settle()
    assert syncs == [totals_ledger.ledger_path(state)]  # one fsync for both lines
    totals_ledger.settle()
    assert syncs == [totals_ledger.ledger_path(state)]  # nothing left to fsync


def test_a_raise_made_soon_is_on_disk_when_the_process_exits_unsettled(tmp_path: Path) -> None:
    """A process that ends without settling (a loop ended by an error before its last
    settle) leaves its raises in the file: made at once, the appended one fsynced at exit."""
    state = tmp_path / "project" / ".wild" / "state.json"
    code = (
        "import sys; from pathlib import Path; from wild.parsers.totals import Totals; "
        "from wild.store import totals_ledger; state = Path(sys.argv[1]); "
        "totals_ledger.record_soon(state, Totals(iteration=6, counted=6)); "
        "totals_ledger.record_soon(state, Totals(iteration=7, counted=7))"
    )
    subprocess.run([sys.executable, "-c", code, str(state)], check=True, timeout=60)
    assert totals_ledger.recorded(state) == Totals(iteration=7, counted=7)


def test_a_raise_after_the_first_appends_one_line_and_a_reader_takes_each_highest_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One append and its fsync per raise, not a whole-file swap (issue 22 item 8: ~1 ms of
    the loop's CPU per iteration); the file stays readable through a crash mid-append."""
    writes = note_writes(monkeypatch)
    state = tmp_path / "project" / ".wild" / "state.json"
    for n in range(1, 5):
        totals_ledger.record(state, Totals(iteration=n, counted=n, cost_usd=0.5 * n))
    path = totals_ledger.ledger_path(state)
    assert [kind for kind, _path, _data in writes] == ["whole", "line", "line", "line"]
    lines = path.read_bytes().splitlines()
    assert len(lines) == 4 and all(orjson.loads(line)["format"] == 2 for line in lines)
    assert totals_ledger.recorded(state) == Totals(iteration=4, counted=4, cost_usd=2.0)
    # A kill mid-append leaves a torn line: it counts nothing, the lines before it count.
    with path.open("ab") as torn:
        torn.write(lines[-1][:25])
    assert totals_ledger.recorded(state) == Totals(iteration=4, counted=4, cost_usd=2.0)
    totals_ledger.record(state, Totals(iteration=5, counted=5, cost_usd=2.5))
    assert totals_ledger.recorded(state) == Totals(iteration=5, counted=5, cost_usd=2.5)
    assert path.read_bytes().splitlines()[-2] == lines[-1][:25]  # sealed, not glued onto


def test_each_figure_is_the_highest_of_the_lines_naming_the_project() -> None:
    project = "/home/me/project"

    def line(name: str, **figures: Any) -> bytes:
        return orjson.dumps({"format": 2, "project": name, "totals": figures})

    data = b"\n".join(
        [
            line(project, iteration=3, countedIterations=3, totalCostUsd=9.0),
            b"{torn",
            line("/elsewhere", iteration=99, totalTokens=99),
            line(project, iteration=7, countedIterations=6, totalTokens=40),
        ]
    )
    assert ledger_format.project_ledger(data, project) == Totals(
        iteration=7, counted=6, cost_usd=9.0, tokens=40
    )


def test_wild_0_2s_indented_file_is_read_and_its_first_raise_turns_it_into_lines(
    tmp_path: Path,
) -> None:
    """wild 0.2 wrote one indented document per project: read as it is, with lines after it
    as well, and the first raise writes it whole as one line keeping its higher figures."""
    state = tmp_path / "project" / ".wild" / "state.json"
    project = totals_ledger.project_of(state)
    path = totals_ledger.ledger_path(state)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = {"format": 1, "project": project, "totals": Totals(9, 9, 50.0, 4.0, 70).to_json()}
    path.write_bytes(orjson.dumps(old, option=orjson.OPT_INDENT_2) + b"\n")
    assert totals_ledger.recorded(state) == Totals(9, 9, 50.0, 4.0, 70)
    with_lines = path.read_bytes() + ledger_format.ledger_line(project, Totals(10, 10))
    assert ledger_format.project_ledger(with_lines, project) == Totals(10, 10, 50.0, 4.0, 70)
    totals_ledger.record(state, Totals(iteration=10, counted=10, running_s=5.0))
    assert path.read_bytes().count(b"\n") == 1
    assert totals_ledger.recorded(state) == Totals(10, 10, 50.0, 4.0, 70)


def test_appends_past_the_compaction_size_write_the_file_whole_again_losing_no_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is written whole again once this process's appends reach COMPACT_BYTES, so
    a reader never parses more than a few KB; a line another process appended through a
    descriptor opened before that write is read into it or lands in the new file."""
    monkeypatch.setattr(totals_ledger, "COMPACT_BYTES", 400)
    writes = note_writes(monkeypatch)
    state = tmp_path / "project" / ".wild" / "state.json"
    project = totals_ledger.project_of(state)
    path = totals_ledger.ledger_path(state)
    totals_ledger.record(state, Totals(iteration=1, counted=1))
    other = KeptAppender(path)  # another process's loop, its descriptor open
    other.append([ledger_format.ledger_line(project, Totals(tokens=500))], durable=True)
    for n in range(2, 8):
        totals_ledger.record(state, Totals(iteration=n, counted=n))
    kinds = [kind for kind, _path, _data in writes]
    assert kinds[0] == "whole" and kinds[1] == "line" and kinds.count("whole") >= 2, kinds
    assert len(path.read_bytes()) < 400 + 250  # written whole since, lines after it
    other.append([ledger_format.ledger_line(project, Totals(cost_usd=3.0))], durable=True)
    other.close()
    assert totals_ledger.recorded(state) == Totals(iteration=7, counted=7, cost_usd=3.0, tokens=500)


def test_each_field_of_the_totals_is_raised_by_at_least() -> None:
    """`at_least` names each field (not `astuple`): a field added later and left out of it
    fails here."""
    for name in [f.name for f in dataclasses.fields(Totals)]:
        higher = dataclasses.replace(Totals(), **{name: 7})
        assert Totals().at_least(higher) == higher
        assert higher.at_least(Totals()) == higher


@pytest.mark.timeout(30)  # before: the open waited for a writer, forever
def test_a_fifo_at_the_ledgers_name_counts_nothing_and_holds_no_one(tmp_path: Path) -> None:
    """The store is in an agent's reach: a FIFO put at a project's ledger name is read as a
    damaged file (the raise writes the file whole over it), never waited on at its open."""
    state = tmp_path / "project" / ".wild" / "state.json"
    path = totals_ledger.ledger_path(state)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    assert totals_ledger.recorded(state) == Totals()
    totals_ledger.record(state, Totals(iteration=2, counted=2))
    assert path.is_file()
    assert totals_ledger.recorded(state) == Totals(iteration=2, counted=2)


def test_a_ledger_folder_deleted_or_another_config_home_is_written_whole_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A raise appends only to a file this process wrote whole: the ledger's folder deleted
    since (a human's `rm -r ~/.config/wild/totals`), or another `$XDG_CONFIG_HOME` in the same
    process, is written whole anew, never an append that fails at every raise."""
    state = tmp_path / "project" / ".wild" / "state.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-a"))
    totals_ledger.record(state, Totals(iteration=1, counted=1))
    totals_ledger.record(state, Totals(iteration=2, counted=2))  # a line appended
    folder = totals_ledger.ledger_folder()
    for entry in folder.iterdir():
        entry.unlink()
    folder.rmdir()
    totals_ledger.record(state, Totals(iteration=3, counted=3))
    assert totals_ledger.recorded(state) == Totals(iteration=3, counted=3)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-b"))
    totals_ledger.record_soon(state, Totals(iteration=4, counted=4))
    totals_ledger.settle()
    assert totals_ledger.ledger_path(state).parent == tmp_path / "config-b" / "wild" / "totals"
    assert totals_ledger.recorded(state) == Totals(iteration=4, counted=4)
