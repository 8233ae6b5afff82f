"""wild refuses to replace a file the user made read-only, or to write through a link that
leaves the project; a link inside the project is followed and stays a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wild import procfs
from wild.errors import RefusedWriteError
from wild.store import write_guard
from wild.store.files import atomic_write, read_text, update_text
from wild.store.jsonl import append_line
from wild.store.write_guard import ALLOW_OUTSIDE_ENV


def _wild(tmp_path: Path) -> Path:
    root = tmp_path / "project" / ".wild"
    root.mkdir(parents=True)
    return root


def test_a_read_only_file_is_refused_with_the_chmod_to_run(tmp_path: Path) -> None:
    tasks = _wild(tmp_path) / "tasks.md"
    tasks.write_text("- [ ] task-001: mine\n")
    tasks.chmod(0o444)
    with pytest.raises(RefusedWriteError) as caught:
        update_text(tasks, lambda text: text + "- [ ] task-002: more\n", tasks.parent / ".lock")
    assert str(caught.value) == (
        f"{tasks}: the file is read-only (mode 444), so wild will not replace it;"
        f" run `chmod u+w {tasks}` to let wild edit it"
    )
    assert tasks.read_text() == "- [ ] task-001: mine\n"
    assert oct(tasks.stat().st_mode & 0o777) == "0o444"
    with pytest.raises(RefusedWriteError):
        atomic_write(tasks, b"replaced\n")
    assert tasks.read_text() == "- [ ] task-001: mine\n"
    assert not [p for p in tasks.parent.iterdir() if p.name.endswith(".tmp")]


def test_an_edit_that_changes_nothing_needs_no_write_and_is_not_refused(tmp_path: Path) -> None:
    tasks = _wild(tmp_path) / "tasks.md"
    tasks.write_text("same\n")
    tasks.chmod(0o444)
    assert update_text(tasks, lambda text: text, tasks.parent / ".lock") == "same\n"


def test_a_link_inside_the_project_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    root = _wild(tmp_path)
    real = tmp_path / "project" / "notes" / "tasks.md"
    real.parent.mkdir()
    real.write_text("- [ ] task-001: a\n")
    (root / "tasks.md").symlink_to(Path("..") / "notes" / "tasks.md")
    update_text(root / "tasks.md", lambda text: text + "- [ ] task-002: b\n", root / ".lock")
    assert (root / "tasks.md").is_symlink()
    assert real.read_text() == "- [ ] task-001: a\n- [ ] task-002: b\n"


def _outside_link(tmp_path: Path, name: str) -> tuple[Path, Path]:
    root = _wild(tmp_path)
    outside = tmp_path / "home" / ".bashrc"
    outside.parent.mkdir()
    outside.write_text("export PATH=/usr/bin\n")
    link = root / name
    link.symlink_to(outside)
    return link, outside


def test_a_link_leading_out_of_the_project_is_neither_written_through_nor_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ALLOW_OUTSIDE_ENV, raising=False)
    link, outside = _outside_link(tmp_path, "state.json")
    with pytest.raises(RefusedWriteError) as caught:
        atomic_write(link, b"{}\n")
    assert str(caught.value) == (
        f"{link}: a symbolic link to {outside}, outside the project {tmp_path / 'project'};"
        " wild does not write through it. Replace the link with a file, or set"
        f" {ALLOW_OUTSIDE_ENV}=1 to let wild write through links that leave the project"
    )
    with pytest.raises(RefusedWriteError):
        update_text(link, lambda text: text + "x\n", link.parent / ".lock")
    assert outside.read_text() == "export PATH=/usr/bin\n"
    assert link.is_symlink()


def test_an_append_through_a_link_leaving_the_project_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ALLOW_OUTSIDE_ENV, raising=False)
    link, outside = _outside_link(tmp_path, "alerts.jsonl")
    with pytest.raises(RefusedWriteError):
        append_line(link, b'{"id": "a"}\n')
    assert outside.read_text() == "export PATH=/usr/bin\n"


def test_the_user_may_allow_links_that_leave_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_OUTSIDE_ENV, "1")
    link, outside = _outside_link(tmp_path, "tasks.md")
    update_text(link, lambda text: text + "# more\n", link.parent / ".lock")
    assert outside.read_text() == "export PATH=/usr/bin\n# more\n"
    assert link.is_symlink()
    assert read_text(link) == outside.read_text()


def test_a_missing_file_may_be_created(tmp_path: Path) -> None:
    tasks = _wild(tmp_path) / "tasks.md"
    atomic_write(tasks, b"new\n")
    assert tasks.read_text() == "new\n"
    assert os.access(tasks, os.W_OK)


def test_a_write_resolves_its_paths_without_an_lstat_per_component(
    tmp_path: Path, lstat_calls: list[object]
) -> None:
    """Every write asks where its path leads (a link out of the project is refused): the
    kernel's answer for a file that exists, not one lstat per folder of the path (~70 of
    these per loop iteration, each ~18 µs in `os.path.realpath` five folders deep)."""
    state = _wild(tmp_path) / "state.json"
    state.write_text("{}")
    lstat_calls.clear()  # counted from here on
    for _ in range(3):
        atomic_write(state, b'{"n": 1}')
        update_text(state, lambda text: text + " ", state.parent / ".lock")
    # At most the file's own lstat (is it a link?: `link_refusal`), never one of its folders.
    assert {str(path) for path in lstat_calls} <= {str(state)}
    assert state.read_bytes() == b'{"n": 1} '


def test_a_file_that_is_no_link_is_let_through_without_resolving_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that is not a link is its folder's real path and its name: inside the project
    by definition. Asked ~18 times per loop iteration (every write's and every view's link
    check), it is one lstat, not two resolutions of three system calls each; a link is still
    resolved, and refused when it leaves the project."""
    monkeypatch.delenv(ALLOW_OUTSIDE_ENV, raising=False)
    link, _outside = _outside_link(tmp_path, "state.json")
    root = link.parent
    (root / "tasks.md").write_text("# Tasks\n")
    (root / "inside.md").symlink_to(root / "tasks.md")
    resolved: list[object] = []
    real = procfs.real_path

    def counting(path: str | os.PathLike[str]) -> str:
        resolved.append(path)
        return real(path)

    monkeypatch.setattr(write_guard, "real_path", counting)
    for _ in range(3):
        assert write_guard.refusal(root / "tasks.md") is None
    assert resolved == []
    assert write_guard.link_refusal(root / "inside.md") is None
    assert write_guard.link_refusal(link) is not None
    assert write_guard.link_refusal(root / "missing.md") is None
    assert len(resolved) == 6  # the two links and the missing file: folder and target each
