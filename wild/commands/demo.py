"""`wild demo`: the real loop on a sample project in a temporary folder, with a scripted agent.

It walks through a human input, a task with a dependency, a background job that raises an alert
and satisfies a barrier, an escalation the (simulated) human answers, and completion.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from wild.barriers.approvals import forget_project
from wild.clock import SystemClock
from wild.commands import edits
from wild.commands.init import init_wild
from wild.commands.status import format_status, format_work, list_work_data, status_data
from wild.loop import Loop, LoopOptions
from wild.parsers import human as human_md
from wild.paths import WildPaths
from wild.store.files import read_text
from wild.workspace import load_workspace

GOAL = "Train a tiny model and report which learning rate to keep"

SAMPLE_TASKS = """\
# Wild Loop Tasks

- [ ] [P1] task-001: Preprocess the training data
- [ ] [P1] task-002: Launch the training job
  - dependsOn: task-001
- [ ] [P1] task-003: Analyze the results and write the report
  - dependsOn: task-002
  - blockedBy: train-done
"""

HUMAN_ANSWER = "Keep the 3e-4 run; it is cheaper."
AGENT_TIMEOUT_S = 60.0
SAFETY_RESCAN_S = 5.0


class SimulatedHuman:
    """Answers the first question wild asks in human.md, as you would from your editor."""

    def __init__(self, paths: WildPaths, out: Callable[[str], None]) -> None:
        self._paths = paths
        self._out = out
        self.answered = False

    def check(self) -> None:
        """Called on every loop message: answer once a QUESTION has appeared."""
        if self.answered:
            return
        doc = human_md.parse(read_text(self._paths.human))
        if any(entry.status == "question" for entry in doc.inputs):
            self.answered = True
            self._out(f'🧑 (the human answers) wild --human-input "{HUMAN_ANSWER}"')
            edits.add_human_input(self._paths, HUMAN_ANSWER, urgent=False, now=SystemClock().now())


def run_demo(out: Callable[[str], None], heading: Callable[[str], None]) -> int:
    """Run the loop on the sample project; returns the exit code. The CLI passes how to print
    a line and a heading, so click stays in the CLI layer (docs/architecture.md, "Layers")."""

    def section(title: str, body: str = "") -> None:
        heading(f"\n== {title}")
        if body:
            out(body)

    clock = SystemClock()
    with tempfile.TemporaryDirectory(prefix="wild-demo-") as tmp:
        project = Path(tmp)
        paths = WildPaths(project / ".wild")
        init_wild(paths)
        paths.tasks.write_text(SAMPLE_TASKS)
        edits.update_policy(paths, "autonomous", duration=None, now=clock.now())
        edits.add_human_input(
            paths, "Start with learning rate 3e-4.", urgent=False, now=clock.now()
        )
        section(
            f"A sample project in {project}",
            format_status(status_data(load_workspace(paths, clock.now()))),
        )
        section(
            "The work queue (wild --list-work)",
            format_work(list_work_data(load_workspace(paths, clock.now()))),
        )
        section(f'Running: wild "{GOAL}" --agent-cmd "python -m wild.agents.demo_agent"')

        human = SimulatedHuman(paths, out)

        def loop_out(message: str) -> None:
            out(message)
            human.check()

        options = LoopOptions(
            goal=GOAL,
            agent="custom",
            agent_cmd=f"{sys.executable} -m wild.agents.demo_agent",
            max_iterations=20,
            agent_timeout_s=AGENT_TIMEOUT_S,
            heartbeat_s=10.0,
            safety_rescan_s=SAFETY_RESCAN_S,
        )
        try:
            result = Loop(paths, options, clock=clock, out=loop_out).run()
            section("Done", format_status(status_data(load_workspace(paths, clock.now()))))
        finally:
            # Its trust was recorded by --update-policy above; forgotten once nothing reads it.
            forget_project(project)
        out(f"\nThe loop ended: {result.message} after {result.iterations} iterations.")
        out("Every step is in .wild/events.log and .wild/logs/ (deleted with the demo folder).")
        return 0 if result.reason == "complete" else 1
