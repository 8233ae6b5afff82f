"""The CLI respects the user's files: a read-only file or a link leading out of the project is
refused with one `Error:` line (exit 1), and the file is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir, invoke
from wild.store.write_guard import ALLOW_OUTSIDE_ENV


def test_add_task_refuses_a_read_only_tasks_file(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    tasks = root / "tasks.md"
    before = tasks.read_bytes()
    tasks.chmod(0o444)
    result = invoke("--add-task", "Write the report", "--dir", str(root))
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {tasks}: the file is read-only (mode 444), so wild will not replace it;"
        f" run `chmod u+w {tasks}` to let wild edit it\n"
    )
    assert tasks.read_bytes() == before
    tasks.chmod(0o644)
    assert invoke("--add-task", "Write the report", "--dir", str(root)).exit_code == 0
    assert "Write the report" in tasks.read_text()


def test_alert_refuses_a_log_linked_out_of_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ALLOW_OUTSIDE_ENV, raising=False)
    root = init_wild_dir(tmp_path / "project")
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("precious\n")
    (root / "alerts.jsonl").unlink()
    (root / "alerts.jsonl").symlink_to(outside)
    result = invoke(
        "--alert",
        *("--severity", "warning", "--source", "job-1", "--type", "disk"),
        *("--description", "disk almost full", "--dir", str(root)),
    )
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {root / 'alerts.jsonl'}: a symbolic link to")
    assert ALLOW_OUTSIDE_ENV in result.output
    assert outside.read_text() == "precious\n"
