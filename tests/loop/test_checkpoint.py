"""--checkpoint-every N: a real git commit of what the loop's iterations changed, never the
human's own changes or `.wild/`, never in a repository with someone else's staged changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.loop.harness import TASK, new_project, say
from wild.loop.checkpoint import parse_porcelain, to_commit


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def make_repo(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "human@example.com")
    git(tmp_path, "config", "user.name", "Human")
    (tmp_path / "notes.md").write_text("mine\n")
    git(tmp_path, "add", "notes.md")
    git(tmp_path, "commit", "-qm", "start")


def write(path: str, text: str) -> dict[str, str]:
    return {"write_file": path, "text": text}


def test_porcelain_paths_and_what_a_checkpoint_takes() -> None:
    output = " M a.py\0?? new dir/b.txt\0R  c.py\0old c.py\0A  .wild/state.json\0"
    changed = parse_porcelain(output)
    assert changed == {"a.py", "new dir/b.txt", "c.py", "old c.py", ".wild/state.json"}
    assert to_commit(changed, frozenset({"a.py"}), ".wild") == ["c.py", "new dir/b.txt", "old c.py"]


def test_each_checkpoint_commits_only_what_the_iterations_changed(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    make_repo(tmp_path)
    (tmp_path / "notes.md").write_text("mine, still being edited\n")  # the human's, unsaved
    sim.script = [
        [write("model.py", "print('a')\n"), *say(TASK)],
        [write("report.md", "done\n"), *say(TASK)],
    ]
    result = sim.run(checkpoint_every=1)
    assert result.reason == "complete"
    commits = [
        (
            git(tmp_path, "log", "-1", "--format=%s", rev).strip(),
            git(tmp_path, "show", "--format=", "--name-only", rev).split(),
        )
        for rev in ("HEAD", "HEAD~1", "HEAD~2")
    ]
    assert commits == [
        ("wild checkpoint after iteration 2", ["report.md"]),
        ("wild checkpoint after iteration 1", ["model.py"]),
        ("start", ["notes.md"]),
    ]
    assert git(tmp_path, "status", "--porcelain", "notes.md") == " M notes.md\n"
    assert [len(e["paths"]) for e in sim.events("checkpoint")] == [1, 1]


def test_someone_elses_staged_changes_stop_the_checkpoint(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    make_repo(tmp_path)
    (tmp_path / "staged.txt").write_text("the human's\n")
    git(tmp_path, "add", "staged.txt")
    sim.script = [[write("model.py", "x\n"), *say(TASK)]]
    sim.run(checkpoint_every=1)
    (skipped,) = sim.events("checkpoint-skipped")
    assert skipped["reason"] == "the index holds staged changes that are not wild's"
    assert git(tmp_path, "log", "--format=%s") == "start\n"
    assert git(tmp_path, "diff", "--cached", "--name-only") == "staged.txt\n"  # untouched


def test_outside_a_repository_the_checkpoint_says_so(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    sim.script = [say(TASK)]
    sim.run(checkpoint_every=1)
    (skipped,) = sim.events("checkpoint-skipped")
    assert skipped["reason"] == "not a git repository (or git is missing)"
