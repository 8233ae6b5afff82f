"""--migrate: open-ralph-wiggum `.ralph/` folders (as Ralph writes them) into `.wild/`."""

from __future__ import annotations

import hashlib
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from wild.cli import cli
from wild.errors import WildError
from wild.migrate import MigrationReport, convert_tasks, migrate_ralph
from wild.parsers import human as human_md
from wild.parsers import tasks as tasks_md
from wild.parsers.state import LoopState
from wild.paths import TEMPLATES_DIR as TEMPLATES
from wild.paths import WildPaths
from wild.store.events_log import read_events
from wild.store.files import atomic_write
from wild.store.state_file import load_state

FIXTURES = Path(__file__).parent / "fixtures" / "ralph"
MOMENT = datetime(2026, 5, 4, 12, 0, 0, tzinfo=UTC)
WILD_FILES = (
    "alerts.jsonl",
    "barriers.md",
    "checks.md",
    "events.log",
    "human-policy.md",
    "human.md",
    "state.json",
    "tasks.md",
)


class FixedClock:
    def now(self) -> datetime:
        return MOMENT

    def monotonic(self) -> float:
        return 0.0


def project(tmp_path: Path, fixture: str) -> Path:
    """A copy of the fixture project, so `.ralph/` sits next to where `.wild/` will go."""
    root = tmp_path / fixture
    shutil.copytree(FIXTURES / fixture, root)
    return root


def tree_hash(folder: Path) -> str:
    """Names, bytes, modes and modification times of everything under `folder`."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        info = path.stat()
        digest.update(f"{path.relative_to(folder)}|{info.st_mode}|{info.st_mtime_ns}|".encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def migrate(root: Path, *, force: bool = False) -> MigrationReport:
    return migrate_ralph(
        root / ".ralph", WildPaths(root / ".wild"), force=force, clock=FixedClock()
    )


def test_tasks_mode_folder(tmp_path: Path) -> None:
    root = project(tmp_path, "tasks-mode")
    before = tree_hash(root / ".ralph")
    report = migrate(root)
    assert tree_hash(root / ".ralph") == before
    wild_dir = root / ".wild"
    assert report == MigrationReport(
        source=root / ".ralph",
        target=wild_dir,
        created=WILD_FILES,
        tasks_file="ralph-tasks.md",
        tasks=5,
        subtasks=3,
        pending_inputs=2,
        history_iterations=2,
        notes=(),
    )
    assert sorted(p.name for p in wild_dir.iterdir()) == list(WILD_FILES)
    tasks_text = (wild_dir / "tasks.md").read_text()
    assert tasks_text == (
        "# Ralph Tasks\n"
        "\n"
        'Add your tasks below using: `ralph --add-task "description"`\n'
        "- [ ] [P2] task-001: Set up project structure\n"
        "- [x] [P2] task-002: Initialize git repository\n"
        "- [/] [P2] task-003: Implement user authentication\n"
        "  - [x] Create login page\n"
        "  - [ ] Add JWT handling\n"
        "    - [ ] Refresh tokens\n"
        "- [X] [P2] task-004: Write README\n"
        "- [ ] [P2] task-005: Build dashboard UI\n"
    )
    parsed = tasks_md.parse(tasks_text)
    assert [(t.id, t.priority, t.status, t.text) for t in parsed.tasks] == [
        ("task-001", 2, "todo", "Set up project structure"),
        ("task-002", 2, "complete", "Initialize git repository"),
        ("task-003", 2, "in-progress", "Implement user authentication"),
        ("task-004", 2, "complete", "Write README"),
        ("task-005", 2, "todo", "Build dashboard UI"),
    ]
    assert [(s.text, s.status) for s in parsed.tasks[2].subtasks] == [
        ("Create login page", "complete"),
        ("Add JWT handling", "todo"),
        ("Refresh tokens", "todo"),
    ]
    loaded = load_state(wild_dir / "state.json")
    assert loaded.problems == ()
    assert loaded.state == LoopState(
        prompt="Build a REST API for todos with auth",
        agent="claude",
        model="claude-sonnet-4",
        extra={"ralphIteration": 3, "ralphHistory": {"iterations": 2, "totalDurationMs": 240500}},
    )
    human_text = (wild_dir / "human.md").read_text()
    template = (TEMPLATES / "human.md").read_text()
    assert human_text == template + (
        "\n"
        "## [PENDING] 2026-05-02T10:05:00Z\n"
        "**Type:** general-instruction  \n"
        "**Priority:** normal\n"
        "\n"
        "### Input:\n"
        "The bug is in utils/parser.ts line 42\n"
        "\n"
        "---\n"
        "\n"
        "## [PENDING] 2026-05-02T10:07:30Z\n"
        "**Type:** general-instruction  \n"
        "**Priority:** normal\n"
        "\n"
        "### Input:\n"
        "Use bcrypt for passwords.\n"
        " ## Not a header of ours: keep me\n"
        "Tokens expire after 15 minutes.\n"
        "\n"
        "---\n"
    )
    queue = human_md.parse(human_text[len(template) :])
    assert queue.problems == ()
    assert [(i.key, i.status, i.type, i.priority, i.content) for i in queue.inputs] == [
        (
            "2026-05-02T10:05:00Z",
            "pending",
            "general-instruction",
            "normal",
            "The bug is in utils/parser.ts line 42",
        ),
        (
            "2026-05-02T10:07:30Z",
            "pending",
            "general-instruction",
            "normal",
            "Use bcrypt for passwords.\n"
            " ## Not a header of ours: keep me\n"
            "Tokens expire after 15 minutes.",
        ),
    ]
    for name in ("alerts.jsonl", "barriers.md", "human-policy.md"):
        assert (wild_dir / name).read_bytes() == (TEMPLATES / name).read_bytes()
    assert (wild_dir / "alerts.jsonl").read_bytes() == b""
    assert "- **Mode:** semi-autonomous" in (wild_dir / "human-policy.md").read_text()
    events, problems = read_events(wild_dir / "events.log")
    assert problems == []
    assert [(e["kind"], e["ts"], e["source"], e["tasks"], e["pendingInputs"]) for e in events] == [
        ("migrated", "2026-05-04T12:00:00.000Z", str(root / ".ralph"), 5, 2)
    ]


def test_seed_tasks_md_name_rotation_and_previous_answer(tmp_path: Path) -> None:
    root = project(tmp_path, "seed-tasks-md")
    before = tree_hash(root / ".ralph")
    report = migrate(root)
    assert tree_hash(root / ".ralph") == before
    assert (report.tasks_file, report.tasks, report.subtasks, report.pending_inputs) == (
        "tasks.md",
        3,
        2,
        2,
    )
    assert report.notes == (
        "Ralph rotated agents (opencode:claude-sonnet-4, claude-code:claude-opus-4); "
        "wild will use claude-code:claude-opus-4",
    )
    assert (root / ".wild" / "tasks.md").read_text() == (
        "# Ralph Tasks\n"
        "- [x] [P2] task-001: Profile the current pipeline\n"
        "- [ ] [P2] task-002: Replace pandas readers\n"
        "  - [ ] CSV reader\n"
        "  - [x] Parquet reader\n"
        "  Notes: keep the old readers behind a flag\n"
        "- [ ] [P2] task-003: Benchmark\n"
    )
    state = load_state(root / ".wild" / "state.json").state
    assert (state.prompt, state.agent, state.model, dict(state.extra)) == (
        "Migrate the data pipeline to Arrow",
        "claude",
        "claude-opus-4",
        {"ralphIteration": 7},
    )
    template = (TEMPLATES / "human.md").read_text()
    queue = human_md.parse((root / ".wild" / "human.md").read_text()[len(template) :])
    # The answer has no time of its own: it is queued at the migration time.
    assert [(i.key, i.content) for i in queue.inputs] == [
        ("2026-05-01T09:15:00Z", "The nightly job reads from s3://bucket/raw"),
        ("2026-05-04T12:00:00Z", "Your previous answer was: use pyarrow 15"),
    ]


def test_history_only_folder_gets_template_tasks_and_history_summary(tmp_path: Path) -> None:
    root = project(tmp_path, "history-only")
    report = migrate(root)
    wild_dir = root / ".wild"
    assert (report.tasks_file, report.tasks, report.pending_inputs, report.history_iterations) == (
        None,
        0,
        0,
        1,
    )
    assert (wild_dir / "tasks.md").read_bytes() == (TEMPLATES / "tasks.md").read_bytes()
    assert (wild_dir / "human.md").read_bytes() == (TEMPLATES / "human.md").read_bytes()
    assert load_state(wild_dir / "state.json").state == LoopState(
        extra={"ralphHistory": {"iterations": 1, "totalDurationMs": 60000}}
    )


def test_ralph_tasks_md_wins_over_tasks_md(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".ralph").mkdir(parents=True)
    (root / ".ralph" / "ralph-tasks.md").write_text("# Ralph Tasks\n- [ ] from ralph-tasks\n")
    (root / ".ralph" / "tasks.md").write_text("- [ ] from tasks\n")
    migrate(root)
    assert (root / ".wild" / "tasks.md").read_text() == (
        "# Ralph Tasks\n- [ ] [P2] task-001: from ralph-tasks\n"
    )


def test_empty_ralph_folder_is_noted(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".ralph").mkdir(parents=True)
    report = migrate(root)
    assert report.notes == (f"found no Ralph files in {root / '.ralph'}; created an empty .wild/",)
    assert load_state(root / ".wild" / "state.json").state == LoopState()


def test_existing_wild_is_refused_without_force(tmp_path: Path) -> None:
    root = project(tmp_path, "tasks-mode")
    (root / ".wild").mkdir()
    (root / ".wild" / "tasks.md").write_text("- [ ] mine\n")
    with pytest.raises(WildError) as caught:
        migrate(root)
    assert str(caught.value) == f"{root / '.wild'} already exists; use --force to overwrite it"
    assert [p.name for p in (root / ".wild").iterdir()] == ["tasks.md"]
    assert (root / ".wild" / "tasks.md").read_text() == "- [ ] mine\n"


def test_force_overwrites_wild_files_and_keeps_others(tmp_path: Path) -> None:
    root = project(tmp_path, "tasks-mode")
    wild_dir = root / ".wild"
    (wild_dir / "logs").mkdir(parents=True)
    (wild_dir / "logs" / "iteration-1.log").write_text("old log\n")
    (wild_dir / "tasks.md").write_text("- [ ] mine\n")
    (wild_dir / "events.log").write_text('{"id":"evt-old","kind":"wake"}\n')
    before = tree_hash(root / ".ralph")
    migrate(root, force=True)
    assert tree_hash(root / ".ralph") == before
    assert (wild_dir / "tasks.md").read_text().startswith("# Ralph Tasks\n")
    assert (wild_dir / "logs" / "iteration-1.log").read_text() == "old log\n"
    events, _ = read_events(wild_dir / "events.log")
    assert [e["kind"] for e in events] == ["wake", "migrated"]
    assert [
        p.name for p in tmp_path.joinpath("tasks-mode").iterdir() if "migrating" in p.name
    ] == []


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "ralph-loop.state.json",
            b'{\n  "active": true,\n  "iteration": 3,\n',
            "{path}:4: not valid JSON (unexpected end of data); "
            "fix or delete that file, then run wild --migrate again",
        ),
        (
            "ralph-history.json",
            b"[]",
            "{path}: expected a JSON object; "
            "fix or delete that file, then run wild --migrate again",
        ),
    ],
)
def test_malformed_ralph_json_stops_before_anything_is_written(
    tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    root = project(tmp_path, "tasks-mode")
    (root / ".ralph" / name).write_bytes(data)
    with pytest.raises(WildError) as caught:
        migrate(root)
    assert str(caught.value) == message.format(path=root / ".ralph" / name)
    assert sorted(p.name for p in root.iterdir()) == [".ralph"]


def test_missing_ralph_folder(tmp_path: Path) -> None:
    with pytest.raises(WildError) as caught:
        migrate(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / '.ralph'}: no such folder; run wild --migrate in the project that holds "
        ".ralph/ or pass --from PATH"
    )


def test_a_failure_while_writing_leaves_no_wild_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, "tasks-mode")
    calls: list[Path] = []
    real = atomic_write

    def failing(path: Path, data: bytes) -> None:
        calls.append(path)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr("wild.migrate.atomic_write", failing)
    with pytest.raises(OSError, match="No space left on device"):
        migrate(root)
    assert len(calls) == 3
    assert sorted(p.name for p in root.iterdir()) == [".ralph"]


def test_new_wild_folder_has_ordinary_permissions(tmp_path: Path) -> None:
    root = project(tmp_path, "history-only")
    mask = os.umask(0o022)
    try:
        migrate(root)
    finally:
        os.umask(mask)
    assert (root / ".wild").stat().st_mode & 0o777 == 0o755


def test_convert_tasks_keeps_crlf_and_non_task_lines() -> None:
    text = (
        "# Ralph Tasks\r\n- [x]Done already\r\n  - [/] half\r\n"
        "* [ ] not Ralph's bullet\r\n- [ ]\r\n- [ ] last"
    )
    assert convert_tasks(text) == (
        "# Ralph Tasks\r\n"
        "- [x] [P2] task-001: Done already\r\n"
        "  - [/] half\r\n"
        "* [ ] not Ralph's bullet\r\n"
        "- [ ]\r\n"
        "- [ ] [P2] task-002: last",
        2,
        1,
    )


def test_json_state_written_by_migration_is_valid_format_1(tmp_path: Path) -> None:
    root = project(tmp_path, "tasks-mode")
    migrate(root)
    data = orjson.loads((root / ".wild" / "state.json").read_bytes())
    assert (data["format"], data["active"], data["iteration"]) == (1, False, 0)


def test_a_plain_wild_run_after_migration_uses_ralphs_goal_agent_and_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, "seed-tasks-md")
    migrate(root)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"  # stands in for Claude Code: records how it was called
    claude.write_text(f'#!/bin/sh\ncat >/dev/null\necho "$@" > {tmp_path / "argv.txt"}\n')
    claude.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["--once"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    state_file = Path(".wild") / "state.json"
    assert result.output.splitlines()[:2] == [
        f"Goal from {state_file}: Migrate the data pipeline to Arrow",
        f"Agent: claude, model claude-opus-4 (from {state_file}; --agent to change)",
    ]
    assert "--model claude-opus-4" in (tmp_path / "argv.txt").read_text()
    prompt = (root / ".wild" / "logs" / "iteration-1.prompt.md").read_text()
    assert "## Main Goal\n> Migrate the data pipeline to Arrow" in prompt
    given = CliRunner().invoke(cli, ["Another goal", "--once", "--agent-cmd", str(claude)])
    assert "from" not in given.output.splitlines()[0]  # what is given is used, silently
