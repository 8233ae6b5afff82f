"""Drive the whole loop in-process: a scripted agent, a clock the test moves, and a watcher
stand-in that delivers the test's file events. No subprocess, no sleep, no thread of ours.

The agent's script is a list of iterations, each a list of actions (the last iteration repeats):

  {"print": "text"}                          a line of the agent's output
  {"replace_in_file": "p", "old": "…", "new": "…"}   {"append_file": "p", "text": "…"}
  {"write_file": "p", "text": "…"}            (paths relative to the project folder)
  {"exit": 3}                                the exit code (default 0)
  {"run": {"timed_out": true, "cost_usd": 0.5, …}}   any other AgentRun field
  {"call": fn}                               fn(request) runs mid-iteration (say, a stop)
  {"minutes": 5}                             how long the run takes on the test's clock
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from wild import control
from wild.agents.run_result import AgentRun
from wild.agents.runner import AgentRequest
from wild.agents.signals import parse_signals
from wild.agents.stream_json import detect_rate_limit
from wild.barriers.approvals import approve
from wild.commands.init import init_wild
from wild.loop import Loop, LoopOptions, LoopResult
from wild.loop.bookkeeping import Bookkeeping
from wild.loop.hooks import Hooks
from wild.parsers import human as human_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import make_alert
from wild.parsers.state import LoopState
from wild.paths import WildPaths
from wild.store.alerts_log import append_alert
from wild.store.events_log import read_events
from wild.store.state_file import load_state
from wild.wake import TIMEOUT, WakeReason

T0 = datetime(2026, 2, 8, 10, 0, tzinfo=UTC)
TASK = "<promise>TASK_COMPLETE</promise>"
RESOLVED = "<promise>ALERT_RESOLVED</promise>"
PROCESSED = "<promise>HUMAN_INPUT_PROCESSED</promise>"
MONITORED = "<promise>MONITORING_COMPLETE</promise>"
Actions = list[dict[str, Any]]


class TestClock:
    """Wall and monotonic time that move only when the test (or a scripted run) says so."""

    def __init__(self, at: datetime = T0) -> None:
        self.at = at
        self.mono = 1000.0

    def now(self) -> datetime:
        return self.at

    def monotonic(self) -> float:
        return self.mono

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)
        self.mono += seconds


def say(*lines: str) -> Actions:
    return [{"print": line} for line in lines]


class ScriptedAgent:
    """The agent as an in-process function of the request: it edits files and says things.
    As the real runner lets the agent's program go only once `on_start` returned (the loop
    writes what must be on disk before it: the held tasks.md edits, the run's record), the
    agent's first file edit comes after `on_start`, called here unless a `call` of the
    script called it first (a test that plays the runner's gate itself)."""

    def __init__(self, clock: TestClock, iterations: Sequence[Actions]) -> None:
        self.clock = clock
        self.iterations = list(iterations) or [[]]
        self.requests: list[AgentRequest] = []

    def __call__(self, request: AgentRequest) -> AgentRun:
        actions = self.iterations[min(len(self.requests), len(self.iterations) - 1)]
        self.requests.append(request)
        opened: list[int] = []
        told = request.on_start

        def on_start(pid: int) -> None:
            opened.append(pid)
            if told is not None:
                told(pid)

        request = replace(request, on_start=on_start)
        printed: list[str] = []
        exit_code, minutes, overrides = 0, 0.0, dict[str, Any]()
        for action in actions:
            if "print" in action:
                printed.append(action["print"])
            elif "exit" in action:
                exit_code = action["exit"]
            elif "run" in action:
                overrides.update(action["run"])
            elif "call" in action:
                action["call"](request)
            elif "minutes" in action:
                minutes = action["minutes"]
            else:
                if not opened:
                    on_start(os.getpid())  # the gate opens before the program's first edit
                _edit_file(request.cwd, action, self.clock.now())
        text = "".join(f"{line}\n" for line in printed)
        request.log_path.write_text(text)
        self.clock.advance(minutes * 60)
        failed = exit_code != 0 or bool(overrides.get("timed_out"))
        limit = detect_rate_limit(text, self.clock.now(), failed=failed)
        run = AgentRun(
            exit_code=exit_code,
            timed_out=False,
            cancelled=False,
            duration_s=minutes * 60,
            final_text=text,
            signals=parse_signals(text),
            cost_usd=None,
            input_tokens=None,
            output_tokens=None,
            rate_limited=limit is not None,
            rate_limit_reset=limit.reset_at if limit is not None else None,
            log_path=request.log_path,
            output_bytes=len(text),
        )
        return replace(run, **overrides)

    def env(self, run: int) -> dict[str, str]:
        """The WILD_* variables run `run` (1-based) got."""
        return dict(self.requests[run - 1].env)

    def stdin(self, run: int) -> str:
        data = self.requests[run - 1].stdin
        return data.decode() if data is not None else ""


def _edit_file(cwd: Path, action: dict[str, Any], at: datetime) -> None:
    """The agent's edit, dated on the test's clock as a real agent's is on the real one (wild
    tells an agent's edit from the human's by the file's time: `wild.policy.trust`)."""
    for key in ("replace_in_file", "append_file", "write_file"):
        if key in action:
            path = cwd / action[key]
            if key == "write_file":
                path.write_text(action["text"])
            elif key == "append_file":
                with path.open("a") as handle:
                    handle.write(action["text"])
            else:
                path.write_text(path.read_text().replace(action["old"], action["new"], 1))
            os.utime(path, (at.timestamp(), at.timestamp()))
            return
    raise ValueError(f"unknown scripted action {action}")


class TestWatcher:
    """The driver's watcher: file events the test queued come first, else time passes."""

    def __init__(self, clock: TestClock) -> None:
        self.clock = clock
        self.queued: list[Callable[[], WakeReason]] = []
        self.timeouts: list[float | None] = []

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def wait_for_work(self, timeout: float | None) -> list[WakeReason]:
        self.timeouts.append(timeout)
        if self.queued:
            return [self.queued.pop(0)()]
        if timeout is None:
            raise AssertionError("the loop would sleep forever: nothing is queued to wake it")
        self.clock.advance(timeout)
        return [TIMEOUT]


@dataclass
class Sim:
    """One project and the loop's in-process doubles; `run()` runs a loop to its end."""

    tmp_path: Path
    paths: WildPaths
    clock: TestClock = field(default_factory=TestClock)
    script: list[Actions] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the notify command was sent
    out: list[str] = field(default_factory=list)
    on_out: Callable[[str], None] | None = None
    agent: ScriptedAgent | None = None
    watcher: TestWatcher | None = None

    queued: list[Callable[[], WakeReason]] = field(default_factory=list)

    def queue(self, event: Callable[[], WakeReason]) -> None:
        """A file event for the next time the loop sleeps: `event` edits, then names the file."""
        self.queued.append(event)

    def queue_edit(self, path: Path, edit: Callable[[], object]) -> None:
        """When the loop next sleeps, `edit` runs (as the human would) and wakes it on `path`."""

        def event() -> WakeReason:
            edit()
            return WakeReason("file", str(path))

        self.queue(event)

    def queue_time(self, seconds: float) -> None:
        """When the loop next sleeps, `seconds` pass with nothing else happening (a backoff)."""

        def passes() -> WakeReason:
            self.clock.advance(seconds)
            return TIMEOUT

        self.queue(passes)

    def queue_request(self, command: str) -> None:
        """When the loop next sleeps, `wild --<command>` is run from another terminal: the
        request is appended and reaches the loop the way the folder watcher hands it over."""

        def event() -> WakeReason:
            control.request(self.paths, command, self.clock)
            self.loop.control.on_change()
            return WakeReason("control", str(self.paths.control))

        self.queue(event)

    def run(self, **options: Any) -> LoopResult:
        self.agent = ScriptedAgent(self.clock, self.script)
        watcher = self.watcher = TestWatcher(self.clock)
        watcher.queued, self.queued = self.queued, []
        hooks = Hooks(
            watcher=lambda _loop: watcher,
            barrier_checker=False,
            send_notification=self._send,
            signals=False,
        )
        loop = Loop(
            self.paths,
            loop_options(**options),
            clock=self.clock,
            out=self._say,
            runner=self.agent,
            hooks=hooks,
        )
        self.loop = loop
        return loop.run()

    def _say(self, line: str) -> None:
        self.out.append(line)
        if self.on_out is not None:
            self.on_out(line)

    def _send(self, command: str | None, message: str, *, timeout_s: float) -> str | None:
        if command:
            self.notes.append(message)
        return None

    # -- reading the outcome -------------------------------------------------------------

    def worked_on(self) -> list[tuple[str, str]]:
        return [(e["work_type"], e["work_id"]) for e in self.events("agent-start")]

    def events(self, kind: str) -> list[dict[str, Any]]:
        found, _ = read_events(self.paths.events)
        return [e for e in found if e["kind"] == kind]

    def alert_lines(self) -> list[dict[str, Any]]:
        text = self.paths.alerts.read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def human(self) -> human_md.HumanQueue:
        return human_md.parse(self.paths.human.read_text())

    def task_status(self, task_id: str) -> str:
        task = tasks_md.find(tasks_md.parse(self.paths.tasks.read_text()), task_id)
        assert task is not None
        return task.status

    def state(self) -> LoopState:
        return load_state(self.paths.state).state

    def book(self) -> Bookkeeping:
        return Bookkeeping.from_extra(self.state().extra)

    def prompt(self, iteration: int) -> str:
        return (self.paths.logs / f"iteration-{iteration}.prompt.md").read_text()


def loop_options(**options: Any) -> LoopOptions:
    settings: dict[str, Any] = {
        "goal": "Ship the model",
        "agent": "custom",
        "agent_cmd": "scripted-agent",
        "safety_rescan_s": 3600.0,
        "max_iterations": 12,
        "plan": False,  # tests of planning turn it on; the others end when the work is done
    }
    settings.update(options)
    return LoopOptions(**settings)


def new_project(tmp_path: Path, tasks: str = "") -> Sim:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    paths.tasks.write_text("# Wild Loop Tasks\n\n" + tasks)
    sim = Sim(tmp_path, paths)
    set_policy(paths, progress_reports="None")
    return sim


def set_policy(paths: WildPaths, **settings: str) -> None:
    """Change `- **Name:** value` lines of human-policy.md (added under Settings if missing)."""
    text = paths.policy.read_text()
    for key, value in settings.items():
        label = key.replace("_", " ").title()
        line = f"- **{label}:** {value}"
        pattern = re.compile(rf"^- \*\*{re.escape(label)}:\*\* .*$", re.M)
        if pattern.search(text):
            text = pattern.sub(line, text, count=1)
        else:
            text = text.replace("- **Command Approval:**", f"{line}\n- **Command Approval:**", 1)
    paths.policy.write_text(text)


def notify_human(paths: WildPaths, **settings: str) -> None:
    """A Notify Command, approved as the human would (`wild --approve @notify`); the Sim
    records what it is sent instead of running it."""
    set_policy(paths, notify_command="notify-the-human", **settings)
    approve(paths.project, "notify-the-human")


def add_alert(paths: WildPaths, alert_id: str, severity: str = "warning", **extra: Any) -> None:
    record = make_alert(
        now=T0,
        severity=severity,  # type: ignore[arg-type]
        source="train-job-1",
        type="loss-spike",
        description=f"{alert_id}: loss jumped to 9.8",
        alert_id=alert_id,
        **extra,
    )
    append_alert(paths.alerts, record)
