"""`wild demo`: the first research story (examples/rl-training), run by the real loop with
the built-in scripted story agent in a temporary folder.

The agent plans a 42-run PPO sweep on CartPole-v1 (start × clip × off-policiness, 3 seeds);
wild records it, runs it on the local backend, wakes on each run's end, brings one run's crash
back as an alert the agent answers `rerun`, and, once every run has ended, hands the agent the
run table to analyse. The report answers the story's questions from the metrics the runs
computed, with 95 % intervals over seeds.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from wild.barriers.approvals import forget_project
from wild.clock import SystemClock
from wild.commands import edits
from wild.commands.init import init_wild
from wild.commands.status import status_data
from wild.commands.status_text import format_status
from wild.errors import WildError
from wild.loop import Loop, LoopOptions
from wild.output import plural
from wild.paths import DEMO_STORY_DIR, STORY_KIT_DIR, WildPaths
from wild.workspace import load_workspace

STORY = DEMO_STORY_DIR.name
AGENT_TIMEOUT_S = 120.0
DEMO_LIMIT_S = 600.0
SAFETY_RESCAN_S = 5.0


# What a project gets of the story folder: not expected/ (the answers) nor run.sh.
COPIED = ("story.md", "sweep.json", "prompts", "skills", "fixtures")
PROMPTS = (
    "seed_user_prompt.md",
    "domain_constraints.md",
    "domain_report_schema.md",
    "domain_alert_policy.md",
)


def goal_of(story: Path) -> str:
    """The `Goal:` paragraph of story.md, and where the story's prompts are."""
    text = (story / "story.md").read_text()
    start = text.index("Goal:") + len("Goal:")
    goal = " ".join(text[start:].split("\n\n", 1)[0].split())
    listed = ", ".join(f"prompts/{p}" for p in PROMPTS)
    return f"{goal} Follow story.md and the story's prompts ({listed})."


def copy_story(story: Path, project: Path) -> None:
    for name in COPIED:
        source = story / name
        if source.is_dir():
            shutil.copytree(source, project / name)
        elif source.is_file():
            shutil.copy2(source, project / name)


def story_agent_command() -> str:
    """The scripted story agent as an `--agent-cmd`: the story kit (examples/wild_stories) is
    story code, not part of the `wild` package, so its folder goes on the agent's PYTHONPATH.
    No shell runs an agent command, hence `env`."""
    kit_parent = str(STORY_KIT_DIR.parent)
    inherited = os.environ.get("PYTHONPATH")
    search = f"{kit_parent}{os.pathsep}{inherited}" if inherited else kit_parent
    python = shlex.quote(sys.executable)
    return f"env PYTHONPATH={shlex.quote(search)} {python} -m wild_stories.agent"


def story_folder() -> Path:
    """examples/rl-training: in the checkout, or shipped inside the installed wheel."""
    folder = DEMO_STORY_DIR
    if not (folder / "story.md").is_file():
        raise WildError(
            f"the demo story is not at {folder}; reinstall wild (`pip install wild`), whose "
            "package ships it"
        )
    return folder


def _answers(report: Path) -> str:
    """The report's `## Answers` section, for the screen."""
    text = report.read_text(encoding="utf-8") if report.is_file() else ""
    part = text.split("## Answers", 1)[1] if "## Answers" in text else ""
    return part.split("\n## ", 1)[0].strip() or "(no report was written)"


def run_demo(out: Callable[[str], None], heading: Callable[[str], None]) -> int:
    """Run the story with the loop; returns the exit code. The CLI passes how to print a line
    and a heading, so click stays in the CLI layer (docs/architecture.md, "Layers")."""

    def section(title: str, body: str = "") -> None:
        heading(f"\n== {title}")
        if body:
            out(body)

    clock = SystemClock()
    story = story_folder()
    project = Path(tempfile.mkdtemp(prefix="wild-demo-"))
    paths = WildPaths(project / ".wild")
    copy_story(story, project)
    init_wild(paths)
    goal = goal_of(story)
    edits.update_policy(paths, "autonomous", duration=None, now=clock.now())
    section(f"The {STORY} story in {project}", (story / "story.md").read_text().split("## ")[0])
    agent = story_agent_command()
    section(
        f'Running: wild "{goal[:60]}…" --agent-cmd "python -m wild_stories.agent"',
        "The agent is scripted (wild_stories.agent, shipped beside the story): it plays a coding"
        " agent's part from the story's prompts and calls no model. The loop, the runs and the"
        " files are real.",
    )
    options = LoopOptions(
        goal=goal,
        agent="custom",
        agent_cmd=agent,
        max_iterations=20,
        max_time_s=DEMO_LIMIT_S,  # the story takes seconds; a stuck one must not hang a terminal
        agent_timeout_s=AGENT_TIMEOUT_S,
        heartbeat_s=10.0,
        safety_rescan_s=SAFETY_RESCAN_S,
    )
    try:
        result = Loop(paths, options, clock=clock, out=out).run()
        section(
            "Done (wild --status)", format_status(status_data(load_workspace(paths, clock.now())))
        )
    finally:
        # Its trust was recorded by --update-policy above; forgotten once nothing reads it.
        forget_project(project)
    report, plot = project / "results" / "report.md", project / "results" / "curves.svg"
    shown = f"{_answers(report)}\n\nThe report: {report}\nThe curves with their bands: {plot}"
    section("What the runs answered (results/report.md)", shown)
    out(f"\nThe loop ended: {result.message} after {plural(result.iterations, 'iteration')}.")
    out(f"The artifacts (report, run table, curves.svg) are in {project / 'results'};")
    out(f"every run's log and metrics in {paths.runs}, every step in {paths.events}.")
    section("What you saw, and what to try next", _what_next(story))
    return 0 if result.reason == "complete" else 1


def _what_next(story: Path) -> str:
    """The demo's last words: what was shown (the agent was scripted) and the next step."""
    return (
        "- The real loop planned a 42-run PPO sweep on CartPole, ran it on this machine, woke on\n"
        "  each run's end, turned the crashed run into an alert the agent answered `rerun`, and\n"
        "  handed the finished sweep to the agent to analyse.\n"
        "- The last planning iteration was the agent confirming that nothing was left, and\n"
        "  the `exploring` stage means no sweep runs any more: the story is finished.\n"
        "- The agent was scripted: its replies were computed, not written by a model.\n"
        "\n"
        "Next, with a real agent (Claude Code unless --agent names another):\n"
        f"- the same story: {story / 'run.sh'} --agent claude\n"
        '- your own work, in its folder: wild "your goal"\n'
        "- where a loop stands, at any time: wild --status"
    )
