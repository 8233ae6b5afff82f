"""The retry limit and deterministic failures as pure decisions (wild.runs.retry), the run
alert they shape (wild.loop.research), `max_attempts` in a sweep spec, and the files the
decision reads (wild.runs.attempts)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from wild.clock import iso
from wild.loop import research
from wild.parsers.alerts import parse_entry
from wild.parsers.runs import RunRecord, SweepRecord
from wild.parsers.sweeps import MAX_ATTEMPTS, SweepSpec, validate_sweep
from wild.runs import attempts, retry, wrapper

NOW = datetime(2026, 11, 27, 21, 0, tzinfo=UTC)
TRACE = (
    "Traceback (most recent call last):\n  File 'train.py', line 9\n    main()\n"
    "  File 'train.py', line 3\nValueError: lr must be positive\n"
)


def failed(run_id: str = "sw1-001", attempt: int = 1, exit_code: int | None = 3) -> RunRecord:
    return RunRecord(
        id=run_id, sweep="sw1", params={"lr": -1}, resolved_instruction="python train.py",
        status="failed", attempt=attempt, exit_code=exit_code, ended_at=iso(NOW),
    )  # fmt: skip


def sweep(**spec: object) -> SweepRecord:
    return SweepRecord(id="sw1", name="sw1", spec=spec, status="active", run_ids=("sw1-001",))


def test_max_attempts_is_the_specs_else_three() -> None:
    assert retry.max_attempts(None) == 3
    assert retry.max_attempts({}) == 3
    assert retry.max_attempts({"max_attempts": 5}) == 5
    assert retry.max_attempts({"max_attempts": True}) == 3  # a hand-edited line: the default
    assert retry.max_attempts({"max_attempts": 0}) == 3


@pytest.mark.parametrize(
    ("attempt", "limit", "left"), [(1, None, 2), (2, None, 1), (3, None, 0), (1, 1, 0), (4, 2, 0)]
)
def test_attempts_left_counts_down_to_zero(attempt: int, limit: int | None, left: int) -> None:
    spec = {} if limit is None else {"max_attempts": limit}
    assert retry.attempts_left(failed(attempt=attempt), sweep(**spec)) == left
    assert (retry.rerun_refusal(failed(attempt=attempt), sweep(**spec)) is None) == (left > 0)


def test_a_rerun_past_the_limit_is_refused_in_one_line_saying_how_to_allow_more() -> None:
    assert retry.rerun_refusal(failed(attempt=2), sweep(max_attempts=2)) == (
        "run sw1-001 has used 2 of its 2 attempts (max_attempts of sweep sw1), so it is not "
        'rerun; to allow more, raise "max_attempts" in the sweep file and record it again '
        "(wild --sweep FILE)"
    )
    # A run whose sweep line is gone keeps the default limit.
    assert retry.rerun_refusal(failed(attempt=2), None) is None
    assert retry.rerun_refusal(failed(attempt=3), None) is not None


def test_the_same_exit_code_and_last_lines_make_a_deterministic_failure() -> None:
    first = retry.failure_of(3, "step 1\n" + TRACE + "[wild wrapper 2026-11-27T20:00:00Z] ended\n")
    again = retry.failure_of(3, "step 9\n" + TRACE + "\n[wild wrapper 2026-11-27T20:05:00Z] x\n")
    assert retry.deterministic(again, first)  # earlier lines and the wrapper's notes differ
    assert not retry.deterministic(again, None)  # a first failure
    assert not retry.deterministic(retry.failure_of(4, TRACE), first)  # another exit code
    other = TRACE.replace("lr must be positive", "CUDA out of memory")
    assert not retry.deterministic(retry.failure_of(3, other), first)
    # No exit code (lost, timed out): nothing says the two failed alike.
    assert not retry.deterministic(retry.failure_of(None, TRACE), retry.failure_of(None, TRACE))


def test_only_the_last_lines_count() -> None:
    noise = "".join(f"epoch {n}\n" for n in range(20))
    before = retry.failure_of(1, noise + TRACE)
    assert retry.failure_of(1, "other noise\n" * 20 + TRACE) == before
    assert len(before.last_lines) == retry.LAST_LINES


def test_the_wrapper_writes_its_notes_with_the_prefix_retry_leaves_out() -> None:
    class Log:
        written = b""

        def write(self, data: bytes, *, own: bool) -> None:
            self.written += data

    log = Log()
    wrapper._note(log, "ended: exit code 3")
    assert log.written.decode().startswith(retry.WRAPPER_NOTE)


def test_an_alert_offers_rerun_while_attempts_remain_and_names_a_deterministic_failure() -> None:
    run = failed(attempt=2)
    record = research.failure_alert([run], {}, NOW, deterministic={run.id})
    assert record["choices"] == ["rerun", "ignore", "stop_sweep"]
    assert record["description"] == (
        "run sw1-001 of sweep sw1 failed (exit code 3), attempt 2, deterministic failure: it "
        "failed as attempt 1 did"
    )
    assert record["context"]["deterministic"] == [run.id]
    spent = research.failure_alert([run], {}, NOW, exhausted={run.id})
    assert spent["choices"] == ["ignore", "stop_sweep"]
    assert spent["description"].endswith("; no attempts left (max_attempts): sw1-001")


def test_a_flood_offers_rerun_while_one_of_its_runs_has_an_attempt_left() -> None:
    one, two = failed("sw1-001", attempt=3), failed("sw1-002", attempt=1)
    record = research.failure_alert([one, two], {}, NOW, exhausted={one.id})
    assert record["choices"] == ["rerun", "ignore", "stop_sweep"]
    both = research.failure_alert([one, two], {}, NOW, exhausted={one.id, two.id})
    assert both["choices"] == ["ignore", "stop_sweep"]


def test_a_flood_rewritten_keeps_what_its_earlier_runs_were_marked() -> None:
    first = failed("sw1-001", attempt=3)
    later = replace(failed("sw1-002", attempt=3), ended_at=iso(NOW + timedelta(seconds=2)))
    runs = {r.id: r for r in (first, later)}
    record, _ = research.flood_alert(
        [first], {}, (), runs, NOW, exhausted={first.id}, deterministic={first.id}
    )
    alert, _ = parse_entry(orjson.dumps(record), 1)
    assert alert is not None
    update, joined = research.flood_alert([later], {}, (alert,), runs, NOW, exhausted={later.id})
    assert joined
    assert update["choices"] == ["ignore", "stop_sweep"]
    assert update["context"]["deterministic"] == [first.id]
    assert update["context"]["no_attempts_left"] == [first.id, later.id]


def test_a_sweep_spec_takes_max_attempts_from_1_to_the_cap() -> None:
    base = {"name": "s", "base_command": "true", "parameters": {"lr": [1]}}
    assert isinstance(validate_sweep({**base, "max_attempts": 1}), SweepSpec)
    assert isinstance(validate_sweep({**base, "max_attempts": MAX_ATTEMPTS}), SweepSpec)
    for bad in (0, MAX_ATTEMPTS + 1, True, 2.5, "3"):
        assert validate_sweep({**base, "max_attempts": bad}) == [
            f'"max_attempts" must be a whole number from 1 to {MAX_ATTEMPTS} (attempts per '
            f"run, the first included), not {bad!r}"
        ]


def write_attempt(folder: Path, attempt: int, exit_code: int, log: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "log").write_text(log)
    marker = {"run": "sw1-001", "attempt": attempt, "exit_code": exit_code}
    (folder / "exit").write_bytes(orjson.dumps(marker))


def test_a_run_folder_tells_a_deterministic_failure(tmp_path: Path) -> None:
    run_dir = tmp_path / "sw1-001"
    write_attempt(attempts.attempt_dir(run_dir, 1), 1, 3, "a\n" + TRACE)
    write_attempt(run_dir, 2, 3, "b\n" + TRACE)
    assert attempts.deterministic_failure(run_dir, failed(attempt=2))
    assert not attempts.deterministic_failure(run_dir, failed(attempt=2, exit_code=4))
    assert not attempts.deterministic_failure(run_dir, replace(failed(attempt=2), status="stopped"))
    assert not attempts.deterministic_failure(run_dir, failed(attempt=1))
    # The attempt before was not kept (a folder cleaned by hand): nothing to compare with.
    assert not attempts.deterministic_failure(tmp_path / "gone", failed(attempt=2))
