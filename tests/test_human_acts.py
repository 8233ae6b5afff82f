"""`wild --approve` and a loosening `--update-policy` ask the human on the real /dev/tty: a
process with a terminal (a pty made its controlling terminal) is asked and answers; one with
none (as wild starts its agents) is refused, `--yes` included."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.cli_support import invoke
from wild.barriers.approvals import load_approvals, load_project
from wild.commands import human_acts
from wild.commands.init import init_wild
from wild.paths import WildPaths

BARRIERS = "# Barriers\n\n## [WAITING] gpu-free\n- Type: command-check\n- Check: nvidia-smi -L\n"
WAIT_S = 30.0


@pytest.fixture
def paths(tmp_path: Path) -> WildPaths:
    made = WildPaths(tmp_path / "proj" / ".wild")
    init_wild(made)
    made.barriers.write_text(BARRIERS)
    return made


def _wild(paths: WildPaths, *args: str) -> list[str]:
    return [sys.executable, "-m", "wild", *args, "--dir", str(paths.root)]


def _take_terminal() -> None:
    """In the child, after setsid: the pty on stdin becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _on_a_terminal(argv: list[str], answer: bytes) -> tuple[int, str]:
    """Run `argv` with a pty as its controlling terminal; type `answer` when it asks."""
    controller, terminal = os.openpty()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            start_new_session=True,
            preexec_fn=_take_terminal,  # noqa: PLW1509 (no threads of ours run in the child)
        )
    finally:
        os.close(terminal)
    seen = b""
    deadline = time.monotonic() + WAIT_S
    answered = False
    while time.monotonic() < deadline:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the child closed the terminal: it has ended
            break
        seen += chunk
        if not answered and b"[y/N]" in seen:
            os.write(controller, answer)
            answered = True
    os.close(controller)
    return proc.wait(timeout=WAIT_S), seen.decode(errors="replace")


def _no_terminal(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run `argv` as wild runs an agent: a session of its own, no controlling terminal."""
    return subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        start_new_session=True,
        timeout=WAIT_S,
        check=False,
    )


def test_a_human_at_a_terminal_is_asked_and_yes_approves_the_command_shown(
    paths: WildPaths,
) -> None:
    code, shown = _on_a_terminal(_wild(paths, "--approve", "gpu-free"), b"y\n")
    assert "approve gpu-free: `nvidia-smi -L`? [y/N]" in shown
    assert code == 0, shown
    assert load_approvals(paths.project).allows("nvidia-smi -L")


def test_a_human_who_says_no_approves_nothing(paths: WildPaths) -> None:
    code, shown = _on_a_terminal(_wild(paths, "--approve", "gpu-free"), b"n\n")
    assert code != 0
    assert "you did not confirm" in shown
    assert not load_approvals(paths.project).allows("nvidia-smi -L")


def test_yes_is_accepted_where_a_terminal_is_attached(paths: WildPaths) -> None:
    code, shown = _on_a_terminal(_wild(paths, "--update-policy", "hands-off", "--yes"), b"")
    assert code == 0, shown
    assert "[y/N]" not in shown
    assert load_project(paths.project)[1] is not None  # the human's trust was recorded


@pytest.mark.parametrize(
    "args",
    [
        ("--approve", "gpu-free"),
        ("--approve", "gpu-free", "--yes"),
        ("--approve", "@policy"),
        ("--approve", "@policy", "--yes"),
        ("--update-policy", "hands-off"),
        ("--update-policy", "hands-off", "--yes"),
    ],
)
def test_without_a_terminal_approving_and_loosening_are_refused(
    paths: WildPaths, args: tuple[str, ...]
) -> None:
    before = paths.policy.read_bytes()
    done = _no_terminal(_wild(paths, *args))
    assert done.returncode != 0
    assert "/dev/tty" in done.stderr, done.stderr
    assert not load_approvals(paths.project).allows("nvidia-smi -L")
    assert load_project(paths.project)[1] is None  # no trust recorded
    assert paths.policy.read_bytes() == before


def test_tightening_the_policy_needs_no_terminal(paths: WildPaths) -> None:
    done = _no_terminal(_wild(paths, "--update-policy", "interactive"))
    assert done.returncode == 0, done.stderr


def test_the_cli_asks_through_the_one_terminal_question(
    paths: WildPaths, _human_at_the_terminal: list[str]
) -> None:
    assert invoke("--approve", "gpu-free", "--dir", str(paths.root)).exit_code == 0
    assert _human_at_the_terminal == ["wild: approve gpu-free: `nvidia-smi -L`?"]


def test_approve_records_the_command_it_showed_not_the_file_read_again(
    paths: WildPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file changes while the human reads the question: what was shown is approved."""

    def swap_then_answer(question: str) -> bool:
        paths.barriers.write_text(BARRIERS.replace("nvidia-smi -L", "touch PWNED"))
        return True

    monkeypatch.setattr(human_acts, "ask_terminal", swap_then_answer)
    result = invoke("--approve", "gpu-free", "--dir", str(paths.root))
    assert result.exit_code == 0, result.output
    assert load_approvals(paths.project).allows("nvidia-smi -L")
    assert not load_approvals(paths.project).allows("touch PWNED")
