"""`wild --migrate`: build `.wild/` from an open-ralph-wiggum `.ralph/` folder, leaving it as is."""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import orjson

from wild.clock import Clock, iso, iso_ms, parse_time
from wild.errors import FileFormatError, WildError
from wild.parsers import human as human_md
from wild.parsers.lines import body, ending, split_lines
from wild.parsers.state import LoopState, render_state
from wild.paths import TEMPLATES_DIR, WildPaths
from wild.record import record
from wild.store.events_log import EventLog
from wild.store.files import atomic_write, encode, read_text

RALPH_TASKS = ("ralph-tasks.md", "tasks.md")  # open-ralph-wiggum's name first, the seed's second
RALPH_STATE = "ralph-loop.state.json"
RALPH_CONTEXT = "ralph-context.md"
RALPH_HISTORY = "ralph-history.json"

# Ralph's agent names where wild's differ.
AGENT_NAMES = {"claude-code": "claude"}

# Ralph's own task rule (column 0, `- [c]`), plus `[X]`, which its completion gate accepts.
_RALPH_TASK = re.compile(r"- \[([ xX/])\]\s*(.+)")
_RALPH_SUBTASK = re.compile(r"\s+- \[([ xX/])\]\s*(.+)")
_CONTEXT_HEADER = re.compile(r"## Context added at (.*?)\s*")
_ANSWER_HEADER = re.compile(r"## Previous Answer\s*")
_CONTEXT_TITLE = "# Ralph Loop Context"
_FIX = "fix or delete that file, then run wild --migrate again"


@record
class MigrationReport:
    """What `--migrate` read and wrote, for the CLI to print."""

    source: Path
    target: Path
    created: tuple[str, ...]  # file names under `target`
    tasks_file: str | None  # the Ralph tasks file used, if any
    tasks: int
    subtasks: int
    pending_inputs: int
    history_iterations: int
    notes: tuple[str, ...]


@record
class _Context:
    """One Ralph context entry: when it was written (if its header says) and its text."""

    timestamp: str | None  # None: no header time, the migration time is used
    content: str


def convert_tasks(text: str) -> tuple[str, int, int]:
    """Ralph task lines become wild's `- [c] [P2] task-NNN: text`; every other line is kept.

    Returns (new text, top-level tasks, subtasks). Numbering follows file order.
    """
    out: list[str] = []
    tasks = subtasks = 0
    for line in split_lines(text):
        content = body(line)
        top = _RALPH_TASK.fullmatch(content)
        if top is not None:
            tasks += 1
            box, task_text = top.groups()
            out.append(f"- [{box}] [P2] task-{tasks:03d}: {task_text}{ending(line)}")
            continue
        if tasks and _RALPH_SUBTASK.fullmatch(content):
            subtasks += 1
        out.append(line)
    return "".join(out), tasks, subtasks


def _context_sections(text: str) -> list[_Context]:
    """Split ralph-context.md into the hints `--add-context` (and answers) appended."""
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in split_lines(text):
        content = body(line)
        header = _CONTEXT_HEADER.fullmatch(content)
        if header is not None:
            sections.append((header.group(1), []))
        elif _ANSWER_HEADER.fullmatch(content):
            sections.append((None, []))
        elif not (len(sections) == 1 and content.strip() == _CONTEXT_TITLE):
            sections[-1][1].append(content)
    found = [_Context(stamp, "\n".join(lines).strip("\n")) for stamp, lines in sections]
    return [section for section in found if section.content.strip()]


def _read_json(path: Path) -> dict[str, Any] | None:
    """A Ralph JSON file as an object, None when absent; anything else stops the migration."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise FileFormatError(str(path), exc.lineno, f"not valid JSON ({exc.msg})", _FIX) from None
    if not isinstance(parsed, dict):
        raise FileFormatError(str(path), None, "expected a JSON object", _FIX)
    return parsed


def _agent_and_model(ralph: dict[str, Any], notes: list[str]) -> tuple[str | None, str | None]:
    agent, model = ralph.get("agent"), ralph.get("model")
    rotation, index = ralph.get("rotation"), ralph.get("rotationIndex", 0)
    if isinstance(rotation, list) and rotation and all(isinstance(r, str) for r in rotation):
        # Ralph ignores agent and model while rotating; wild runs one agent, so take the
        # entry Ralph would have run next.
        chosen = rotation[index % len(rotation)] if isinstance(index, int) else rotation[0]
        agent, _, model = chosen.partition(":")
        notes.append(f"Ralph rotated agents ({', '.join(rotation)}); wild will use {chosen}")
    agent = AGENT_NAMES.get(agent, agent) if isinstance(agent, str) and agent else None
    model = model if isinstance(model, str) and model else None
    return agent, model


def _state(
    ralph: dict[str, Any] | None, history: dict[str, Any] | None, notes: list[str]
) -> LoopState:
    extra: dict[str, Any] = {}
    prompt = agent = model = None
    if ralph is not None:
        prompt = ralph.get("prompt") if isinstance(ralph.get("prompt"), str) else None
        agent, model = _agent_and_model(ralph, notes)
        if isinstance(ralph.get("iteration"), int):
            extra["ralphIteration"] = ralph["iteration"]
    if history is not None:
        iterations = history.get("iterations")
        total = history.get("totalDurationMs")
        extra["ralphHistory"] = {
            "iterations": len(iterations) if isinstance(iterations, list) else 0,
            "totalDurationMs": total if isinstance(total, int | float) else 0,
        }
    return LoopState(prompt=prompt, agent=agent, model=model, extra=extra)


def _human_text(sections: list[_Context], clock: Clock, notes: list[str]) -> str:
    text = (TEMPLATES_DIR / "human.md").read_text()
    used: set[str] = set()
    for section in sections:
        moment = parse_time(section.timestamp)
        if moment is None:
            if section.timestamp is not None:
                notes.append(f"context header time {section.timestamp!r} is unreadable; used now")
            moment = clock.now()
        stamp = iso(moment)
        if stamp in used:
            # The queue is keyed by header time; two hints in one second need the finer form.
            stamp = iso_ms(moment)
        used.add(stamp)
        text = human_md.append_input(text, section.content, timestamp=stamp)
    return text


def _refuse_existing(paths: WildPaths, force: bool) -> None:
    root = paths.root
    if root.exists() and not root.is_dir():
        raise WildError(
            f"{root} exists and is not a folder; move it away and run wild --migrate again"
        )
    if root.exists() and not force:
        raise WildError(f"{root} already exists; use --force to overwrite it")


def _write_files(root: Path, files: dict[str, bytes]) -> None:
    """Stage the files in a sibling folder, then move them in: a failure leaves no half `.wild/`."""
    root.parent.mkdir(parents=True, exist_ok=True)
    stage = root.parent / f".{root.name}.migrating-{uuid.uuid4().hex[:8]}"
    stage.mkdir()
    try:
        for name, data in files.items():
            atomic_write(stage / name, data)
        if not root.exists():
            stage.rename(root)
            return
        for name in files:
            (stage / name).replace(root / name)
    finally:
        if stage.exists():
            shutil.rmtree(stage)


def migrate_ralph(
    ralph_dir: Path, paths: WildPaths, *, force: bool, clock: Clock
) -> MigrationReport:
    """Create `.wild/` from `ralph_dir`; Ralph's files are only read, never changed."""
    if not ralph_dir.is_dir():
        raise WildError(
            f"{ralph_dir}: no such folder; run wild --migrate in the project that holds .ralph/ "
            "or pass --from PATH"
        )
    _refuse_existing(paths, force)
    notes: list[str] = []
    ralph_state = _read_json(ralph_dir / RALPH_STATE)
    history = _read_json(ralph_dir / RALPH_HISTORY)
    tasks_file = next((name for name in RALPH_TASKS if (ralph_dir / name).is_file()), None)

    files = {t.name: t.read_bytes() for t in sorted(TEMPLATES_DIR.iterdir()) if t.is_file()}
    tasks = subtasks = 0
    if tasks_file is not None:
        tasks_text, tasks, subtasks = convert_tasks(read_text(ralph_dir / tasks_file))
        files[paths.tasks.name] = encode(tasks_text)
    sections = _context_sections(read_text(ralph_dir / RALPH_CONTEXT))
    files[paths.human.name] = encode(_human_text(sections, clock, notes))
    state = _state(ralph_state, history, notes)
    files[paths.state.name] = render_state(state)
    if ralph_state is None and history is None and tasks_file is None and not sections:
        notes.append(f"found no Ralph files in {ralph_dir}; created an empty .wild/")

    _write_files(paths.root, files)
    EventLog(paths.events, clock).append(
        "migrated", source=str(ralph_dir), tasks=tasks, pendingInputs=len(sections)
    )
    return MigrationReport(
        source=ralph_dir,
        target=paths.root,
        created=tuple(sorted({*files, paths.events.name})),
        tasks_file=tasks_file,
        tasks=tasks,
        subtasks=subtasks,
        pending_inputs=len(sections),
        history_iterations=state.extra.get("ralphHistory", {}).get("iterations", 0),
        notes=tuple(notes),
    )
