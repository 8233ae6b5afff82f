"""Reading a run's folder tolerantly: exit markers, last metrics, log tails."""

from __future__ import annotations

from pathlib import Path

from wild.runs.markers import log_tail, read_marker, read_pid


def test_a_complete_marker_is_read(tmp_path: Path) -> None:
    (tmp_path / "exit").write_text(
        '{"run": "s-001", "attempt": 2, "exit_code": 143, "signal": "SIGTERM", '
        '"ended_at": "2026-01-01T00:00:00.000Z", "host": "h", "reason": "timeout"}\n'
    )
    marker = read_marker(tmp_path).marker
    assert marker is not None
    assert (marker.run, marker.attempt, marker.exit_code) == ("s-001", 2, 143)
    assert (marker.signal, marker.reason, marker.host) == ("SIGTERM", "timeout", "h")


def test_no_marker_is_absent_and_a_garbled_one_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    assert not read_marker(tmp_path).present
    (tmp_path / "exit").write_bytes(b'{"run": "s-001", "exit_co')
    torn = read_marker(tmp_path)
    assert torn.present and torn.marker is None and "not valid JSON" in (torn.problem or "")
    (tmp_path / "exit").write_bytes(b"[1, 2]")
    assert "not an exit marker" in (read_marker(tmp_path).problem or "")
    (tmp_path / "exit").write_bytes(b"\xff" * 10)
    assert read_marker(tmp_path).problem is not None


def test_pid_and_log_tail(tmp_path: Path) -> None:
    assert read_pid(tmp_path) is None and log_tail(tmp_path) == ""
    (tmp_path / "pid").write_text("1234\n")
    (tmp_path / "log").write_bytes(b"a" * 5000 + b"\xffend\n")
    assert read_pid(tmp_path) == 1234
    assert log_tail(tmp_path, 5).endswith("end\n")


def test_a_marker_ends_only_its_own_attempt_and_an_unreadable_one_ends_any(
    tmp_path: Path,
) -> None:
    assert not read_marker(tmp_path).ends(1)
    (tmp_path / "exit").write_text('{"run": "s-001", "attempt": 1, "exit_code": 0}\n')
    assert read_marker(tmp_path).ends(1)
    assert not read_marker(tmp_path).ends(2)  # a rerun's old marker: not its end
    (tmp_path / "exit").write_bytes(b'{"run": "s-0')
    assert read_marker(tmp_path).ends(2)
