"""Library exceptions that reach the user are one `Error:` line and exit 1, never "crashed"."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir, invoke
from wild.store import files as store


@pytest.fixture
def wild_dir(tmp_path: Path) -> Path:
    root = init_wild_dir(tmp_path)
    return root


@pytest.fixture
def lock_held(wild_dir: Path) -> Iterator[None]:
    """Another process holds .wild/.lock, as a running wild does while it writes."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from filelock import FileLock\n"
            f"lock = FileLock({str(wild_dir / '.lock')!r}); lock.acquire()\n"
            "print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline() == "held\n"
    yield
    holder.stdin.close()
    holder.wait(timeout=10)


@pytest.mark.usefixtures("lock_held")
def test_a_held_lock_is_a_user_error_naming_the_folder(
    wild_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "LOCK_TIMEOUT_S", 0.2)
    result = invoke("--add-task", "Never added", "--dir", str(wild_dir))
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {wild_dir} is locked by another wild process (.lock); "
        "wait or stop it (wild --stop)\n"
    )
    assert "Never added" not in (wild_dir / "tasks.md").read_text()


def test_a_folder_where_a_file_belongs_names_the_file(wild_dir: Path) -> None:
    (wild_dir / "tasks.md").unlink()
    (wild_dir / "tasks.md").mkdir()
    result = invoke("--status", "--dir", str(wild_dir))
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {wild_dir / 'tasks.md'}: Is a directory; a folder stands where a file "
        "should be (or the reverse); move it aside\n"
    )


@pytest.mark.parametrize("name", ["alerts.jsonl", "runs.jsonl"])
def test_a_folder_where_a_log_read_by_offset_belongs_is_one_problem_naming_it(
    wild_dir: Path, name: str
) -> None:
    # The two offset readers used to disagree: alerts.jsonl failed the whole status (naming
    # only the folder), runs.jsonl was a problem. Now both are (wild.store.offset_read).
    (wild_dir / name).unlink(missing_ok=True)
    (wild_dir / name).mkdir()
    result = invoke("--status", "--dir", str(wild_dir))
    assert result.exit_code == 0, result.output
    problem = (
        f"{name}:1: Is a directory; a folder stands where a file should be (or the reverse);"
        " move it aside"
    )
    assert [line for line in result.output.splitlines() if line.endswith(problem)] != []


# An unreadable file (mode 000) is tested as a real unprivileged user, since root reads
# files whatever their mode: tests/reliability/test_liveness_errors.py.


def test_in_a_real_process_there_is_no_traceback(wild_dir: Path) -> None:
    (wild_dir / "human.md").unlink()
    (wild_dir / "human.md").mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "wild", "--list-work", "--dir", str(wild_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: {wild_dir / 'human.md'}: Is a directory; a folder stands where a file "
        "should be (or the reverse); move it aside\n"
    )
