"""The totals ledger outside the project: raised with every count, its running time by grains."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from wild.parsers import totals as ledger_format
from wild.parsers.totals import Totals
from wild.store import files, totals_ledger


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
    writes: list[bytes] = []
    real_write = files.atomic_write

    def counting_write(path: Path, data: bytes) -> None:
        writes.append(data)
        real_write(path, data)

    monkeypatch.setattr(totals_ledger, "atomic_write", counting_write)
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
    assert len(writes) == 3  # the record, the judgment, the time after 30 s more
    assert totals_ledger.recorded(state) == saves[-1]


def test_the_ledger_is_parsed_again_only_when_another_writer_changed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each raise reads the ledger under its lock; bytes this process last read or wrote are
    not parsed again (before: one parse of every project of the machine per raise)."""
    parsed: list[bytes] = []
    real_parse = ledger_format.parse_ledger

    def counting_parse(data: bytes) -> dict[str, Totals]:
        parsed.append(data)
        return real_parse(data)

    monkeypatch.setattr(totals_ledger, "parse_ledger", counting_parse)
    state = tmp_path / "project" / ".wild" / "state.json"
    other = tmp_path / "other" / ".wild" / "state.json"
    for n in range(1, 6):
        totals_ledger.record(state, Totals(iteration=n, counted=n - 1))
    assert len(parsed) <= 1  # at most the first read (another test's bytes may be cached)
    parsed.clear()
    # Another process raises another project's figures: read and parsed again, kept.
    ledger = totals_ledger.ledger_path()
    written = ledger_format.render_ledger(
        {**real_parse(ledger.read_bytes()), totals_ledger.project_of(other): Totals(iteration=7)}
    )
    files.atomic_write(ledger, written)
    totals_ledger.record(state, Totals(iteration=6, counted=5))
    assert parsed == [written]
    assert totals_ledger.recorded(other) == Totals(iteration=7)
    assert totals_ledger.recorded(state) == Totals(iteration=6, counted=5)


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

    def full_disk(path: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(totals_ledger, "atomic_write", full_disk)
    totals_ledger.record_soon(state, Totals(iteration=3, counted=3))  # returns at once
    with pytest.raises(OSError, match="No space left"):
        totals_ledger.settle()
    totals_ledger.settle()  # told once
    assert totals_ledger.recorded(state) == Totals(iteration=2, counted=2)


def test_a_loop_start_reads_its_own_projects_totals_not_every_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger holds every project the machine ever ran (hundreds after a benchmark); a
    loop's start reads its own entry only (issue 22 item 8: before, it built one record per
    project of the machine, ~3 ms at 550)."""
    state = tmp_path / "project" / ".wild" / "state.json"
    others = {str(tmp_path / f"other-{n}"): Totals(iteration=n) for n in range(1, 201)}
    mine = Totals(iteration=3, counted=2, running_s=4.5, cost_usd=0.25, tokens=9)
    entries = {**others, totals_ledger.project_of(state): mine}
    totals_ledger.ledger_path().parent.mkdir(parents=True, exist_ok=True)
    files.atomic_write(totals_ledger.ledger_path(), ledger_format.render_ledger(entries))
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
    # The same figures as the whole ledger parsed.
    data = totals_ledger.ledger_path().read_bytes()
    for key, totals in ledger_format.parse_ledger(data).items():
        assert ledger_format.ledger_entry(data, key) == totals
    assert ledger_format.ledger_entry(b"not json", str(tmp_path)) == Totals()


def test_a_raise_makes_again_only_the_entry_it_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A raise writes every project of the machine back; only the raised project's entry is
    made again (before: all of them, ~0.6 ms of Python per loop iteration at ~1,000), and
    the bytes are those `render_ledger` makes of the same figures."""
    state = tmp_path / "project" / ".wild" / "state.json"
    others = {str(tmp_path / f"other-{n}"): Totals(iteration=n) for n in range(1, 201)}
    totals_ledger.ledger_path().parent.mkdir(parents=True, exist_ok=True)
    files.atomic_write(totals_ledger.ledger_path(), ledger_format.render_ledger(others))
    totals_ledger.record(state, Totals(iteration=1, counted=1))  # parses, makes each entry
    made: list[Totals] = []
    real = Totals.to_json

    def counting(totals: Totals) -> dict[str, object]:
        made.append(totals)
        return real(totals)

    monkeypatch.setattr(Totals, "to_json", counting)
    for n in range(2, 5):
        totals_ledger.record(state, Totals(iteration=n, counted=n))
    assert made == [Totals(iteration=n, counted=n) for n in range(2, 5)]
    monkeypatch.setattr(Totals, "to_json", real)
    mine = {totals_ledger.project_of(state): Totals(iteration=4, counted=4)}
    expected = ledger_format.render_ledger({**others, **mine})
    assert totals_ledger.ledger_path().read_bytes() == expected
    # Another writer's ledger (new bytes, parsed again) is rendered from its own figures.
    moved = {**others, str(tmp_path / "other-1"): Totals(iteration=9)}
    files.atomic_write(totals_ledger.ledger_path(), ledger_format.render_ledger(moved))
    totals_ledger.record(state, Totals(iteration=5, counted=5))
    mine = {totals_ledger.project_of(state): Totals(iteration=5, counted=5)}
    assert totals_ledger.ledger_path().read_bytes() == ledger_format.render_ledger(
        {**moved, **mine}
    )


def test_a_projects_key_is_the_kernels_real_path_without_an_lstat_per_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger's and the approval store's key for a project (each asked twice per loop
    iteration): its real path as the kernel names it, a link in the path resolved, not
    `os.path.realpath`'s lstat per folder."""
    from wild.barriers.approvals import project_key

    (tmp_path / "a" / "b" / "project" / ".wild").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "a")
    state = tmp_path / "link" / "b" / "project" / ".wild" / "state.json"
    lstats: list[object] = []
    real_lstat = os.lstat

    def counting(path: object, *args: object, **kwargs: object) -> os.stat_result:
        lstats.append(path)
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    real = str(tmp_path.resolve() / "a" / "b" / "project")
    monkeypatch.setattr(os, "lstat", counting)
    assert totals_ledger.project_of(state) == real
    assert project_key(state.parent.parent) == real
    assert lstats == []


def test_raises_made_soon_are_made_by_one_thread_kept_for_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger's thread is started once and kept: a thread started per raise made the
    loop wait for its start at every judgment. Each raise is still made off the caller's
    thread, in order, and settled before `settle` returns."""
    state = tmp_path / "project" / ".wild" / "state.json"
    makers: list[threading.Thread] = []
    real_write = files.atomic_write

    def noting_write(path: Path, data: bytes) -> None:
        makers.append(threading.current_thread())
        real_write(path, data)

    monkeypatch.setattr(totals_ledger, "atomic_write", noting_write)
    for n in range(1, 4):
        totals_ledger.record_soon(state, Totals(iteration=n, counted=n))
        totals_ledger.settle()
        assert totals_ledger.recorded(state) == Totals(iteration=n, counted=n)
    assert len(makers) == 3 and len(set(makers)) == 1
    assert makers[0] is not threading.main_thread() and makers[0].name == "wild-totals-ledger"


def test_a_raise_handed_on_is_made_before_the_process_exits_unsettled(tmp_path: Path) -> None:
    """A process that ends without settling (a loop ended by an error before its last
    settle) still makes the raise it handed on, as the thread of its own did before."""
    state = tmp_path / "project" / ".wild" / "state.json"
    code = (
        "import sys; from pathlib import Path; from wild.parsers.totals import Totals; "
        "from wild.store import totals_ledger; "
        "totals_ledger.record_soon(Path(sys.argv[1]), Totals(iteration=7, counted=7))"
    )
    subprocess.run([sys.executable, "-c", code, str(state)], check=True, timeout=60)
    assert totals_ledger.recorded(state) == Totals(iteration=7, counted=7)
