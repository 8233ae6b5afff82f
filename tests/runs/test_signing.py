"""Queued run lines wild wrote carry its signature; the gate sorts queued runs by it and by
the human's approval of their sweep's program (issue 20 item 2)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.runs.helpers import local, project, supervisor
from wild.barriers.approvals import approve, load_approvals
from wild.barriers.command_gate import gate
from wild.errors import WildError
from wild.parsers.runs import RunRecord
from wild.runs import decide, signing
from wild.store.runs_log import append_records, read_runs


def run(run_id: str = "s1-001", command: str = "python t.py") -> RunRecord:
    record = RunRecord(run_id, "s1", {"lr": 0.1}, f"{command} --lr=0.1", "queued")
    return signing.with_command(record, command)


def test_a_signature_holds_only_for_the_line_wild_signed() -> None:
    key, other = b"a" * 64, b"b" * 64
    signed = signing.sign(key, run())
    assert signing.written_by_wild(key, signed)
    assert not signing.written_by_wild(other, signed)
    assert not signing.written_by_wild(key, run())  # no signature at all
    changed = dataclasses.replace(signed, resolved_instruction="touch PWNED")
    assert not signing.written_by_wild(key, changed)
    moved = signing.with_command(signed, "touch PWNED")  # another program to approve
    assert not signing.written_by_wild(key, moved)
    batch = signing.with_command(signed, "python t.py", {"extra_args": ["--uid=0"]})
    assert not signing.written_by_wild(key, batch)
    assert signing.written_by_wild(key, dataclasses.replace(signed, status="running"))


def test_the_key_is_made_once_private_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "wild" / "runs.key"
    first = signing.load_key(path)
    assert signing.load_key(path) == first and len(first) == 64
    assert path.stat().st_mode & 0o777 == 0o600
    path.write_text("short\n")
    with pytest.raises(WildError, match="not a wild run-signing key"):
        signing.load_key(path)


def test_admission_holds_unapproved_programs_and_refuses_unsigned_lines(tmp_path: Path) -> None:
    key = b"k" * 64
    approved = signing.sign(key, run("s1-001", "python t.py"))
    waiting = signing.sign(key, run("s1-002", "touch PWNED; true"))
    forged = run("s1-003", "python t.py")
    approve(tmp_path, "python t.py")
    required = gate(load_approvals(tmp_path), approval_required=True)
    sorted_ = decide.admission([approved, waiting, forged], key=key, may_run=required)
    assert sorted_ == decide.Admission((approved,), (waiting,), (forged,))
    trusted = gate(load_approvals(tmp_path), approval_required=False)
    sorted_ = decide.admission([approved, waiting, forged], key=key, may_run=trusted)
    assert sorted_ == decide.Admission((approved, waiting), (), (forged,))


def test_a_line_wild_did_not_write_is_never_signed_by_a_rerun(tmp_path: Path) -> None:
    paths = project(tmp_path)
    forged = dataclasses.replace(run(), status="failed", reason="refused")
    append_records(paths.runs_log, [forged])
    with pytest.raises(WildError, match="not written by wild"):
        supervisor(paths, local(paths)).rerun("s1-001")
    assert read_runs(paths.runs_log).index.runs["s1-001"].status == "failed"
