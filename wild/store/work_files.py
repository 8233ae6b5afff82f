"""The four files the work queue is selected from, read (tasks.md, alerts.jsonl, barriers.md,
human.md), and the edited files wild must not write now.

`wild.workspace` reads them with everything else; a status after an edit of tasks.md alone
(`wild.commands.status_tasks`) reads them and nothing more, so this module imports no policy,
checks, runs or approval store (issue 22 item 8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wild.parsers import tasks as tasks_md
from wild.parsers.lines import Problem, undecodable_lines
from wild.paths import WildPaths
from wild.store.files import read_text
from wild.store.tasks_backup import damage_notice
from wild.store.write_guard import link_refusal, refusal

if TYPE_CHECKING:
    from wild.parsers.alerts import Alert

EDITED_FILES = ("tasks", "barriers", "human", "policy")  # the Markdown files wild edits


def read_alerts(paths: WildPaths) -> tuple[tuple[Alert, ...], tuple[Problem, ...]]:
    """The open alerts and every problem of alerts.jsonl, by way of its summary (which this
    read brings up to date: a read command may write that cache file, nothing else)."""
    # Imported here: a status after an edit of tasks.md may read tasks.md alone.
    from wild.store.alerts_summary import read_open_alerts  # noqa: PLC0415

    return read_open_alerts(paths.alerts, paths.alerts_summary, file=str(paths.alerts))


def open_alerts_of(alerts: tuple[Alert, ...]) -> tuple[Alert, ...]:
    """The alerts still to be dealt with: every one not resolved."""
    return tuple(a for a in alerts if a.status != "resolved")


def read_tasks(paths: WildPaths) -> tuple[tasks_md.TaskList, str | None]:
    """tasks.md parsed, and the notice if it was damaged (its good copy in .wild/backup/)."""
    text = read_text(paths.tasks)
    tasks = tasks_md.parse(text, file=str(paths.tasks))
    present = text != "" or paths.tasks.exists()
    return tasks, damage_notice(paths, text if present else None, len(tasks.tasks))


def tasks_problems(tasks: tasks_md.TaskList, file: str) -> tuple[Problem, ...]:
    """Every problem of tasks.md: the lines wild could not read, then those not UTF-8."""
    return (*tasks.problems, *undecodable_lines(tasks.lines, file))


def refusals_of(paths: WildPaths) -> tuple[tuple[str, str], ...]:
    """The edited files wild must not write now, each with what the human can do about it."""
    found = [(name, refusal(getattr(paths, name))) for name in EDITED_FILES]
    # An append replaces nothing: alerts.jsonl is refused only as a link out of the project.
    found.append(("alerts", link_refusal(paths.alerts)))
    return tuple((name, message) for name, message in found if message is not None)
