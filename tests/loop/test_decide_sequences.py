"""Recorded event sequences fed to `decide`, the way the parsers' tests feed bytes: each
step's event in, its terminal action checked, its file edits applied to texts in memory and
the workspace parsed again, as the driver would. No process, no sleep, no file: `decide` is
pure (its import contract says so too), so the whole loop's path is a list of values."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

from tests.loop.test_decide import AT, POLICY, T0, run
from wild.loop.decide import decide
from wild.loop.limits import BACKOFF_BASE_S
from wild.loop.model import (
    Action,
    AgentFinished,
    AppendAlert,
    ControlRequested,
    EditFile,
    End,
    Event,
    LoopModel,
    LoopOptions,
    Moment,
    RunAgent,
    RunsSupervised,
    Say,
    SuperviseRuns,
    Tick,
    Wait,
)
from wild.parsers import barriers as barriers_md
from wild.parsers import human as human_md
from wild.parsers import policy as policy_md
from wild.parsers import tasks as tasks_md
from wild.parsers.alerts import Alert, AlertIndex, encode_alert, make_alert, parse_entry
from wild.parsers.control import ControlRequest
from wild.parsers.runs import RunIndex, RunRecord
from wild.parsers.state import LoopState
from wild.parsers.totals import COUNTED, RUNNING_S
from wild.paths import WildPaths
from wild.workspace import assemble_workspace

PATHS = WildPaths(Path("/project/.wild"))
HUMAN = "# Human Input Queue\n\n## [PENDING] 2026-02-08T09:00:00Z\n### Input:\nUse staging.\n"


@dataclass
class Recorded:
    """The `.wild/` files as texts, and the loop's model; `step` is one turn of the driver."""

    tasks: str
    human: str = ""
    barriers: str = ""
    policy: str = POLICY
    alerts: list[dict[str, object]] = field(default_factory=list)
    runs: tuple[RunRecord, ...] = ()
    options: dict[str, object] = field(default_factory=dict)
    model: LoopModel | None = None
    said: list[str] = field(default_factory=list)

    def view(self) -> LoopModel:
        entries = [parse_entry(encode_alert(r), n)[0] for n, r in enumerate(self.alerts, 1)]
        index = RunIndex()
        index.apply(self.runs)
        ws = assemble_workspace(
            PATHS,
            T0,
            tasks=tasks_md.parse("# Tasks\n\n" + self.tasks),
            barriers=barriers_md.parse(self.barriers),
            human=human_md.parse(self.human),
            policy_doc=policy_md.parse(self.policy),
            alerts=AlertIndex([e for e in entries if isinstance(e, Alert)]).all(),
            runs=index,
        )
        if self.model is None:
            settings: dict[str, object] = {"goal": "Ship it", "agent": "custom", "plan": False}
            self.model = LoopModel(
                options=LoopOptions(**(settings | self.options)),  # type: ignore[arg-type]
                ws=ws,
                state=LoopState(started_at="2026-02-08T10:00:00Z"),
                started_mono=AT.mono,
            )
        return replace(self.model, ws=ws)

    def step(self, event: Event, after_s: float = 0.0) -> str:
        """Decide on `event`, perform the file actions in memory; the terminal, in words."""
        at = Moment(T0 + timedelta(seconds=after_s), AT.mono + after_s)
        result = decide(self.view(), event, at)
        self.model = result.model
        for action in result.actions:
            self._perform(action)
        self.model = self.view()
        return _words(result.actions[-1])

    def _perform(self, action: Action) -> None:
        if isinstance(action, EditFile):
            if action.file == "tasks":  # the header this recording leaves out of its texts
                self.tasks = action.edit("# Tasks\n\n" + self.tasks).removeprefix("# Tasks\n\n")
            else:
                setattr(self, action.file, action.edit(getattr(self, action.file)))
        elif isinstance(action, AppendAlert):
            self.alerts.append(dict(action.record))
        elif isinstance(action, Say):
            self.said.append(action.text)


def _words(action: Action) -> str:
    if isinstance(action, RunAgent):
        return f"run {action.work_type} {action.work_id}"
    if isinstance(action, End):
        return f"end {action.result.reason}"
    if isinstance(action, Wait):
        return "wait" if action.timeout_s is None else f"wait {action.timeout_s:g} s"
    return type(action).__name__


def finished(text: str, exit_code: int = 0) -> AgentFinished:
    return AgentFinished(run(text, exit_code=exit_code), "e1", files_changed=("src/app.py",))


def done(word: str) -> AgentFinished:
    return finished(f"Done.\n<promise>{word}</promise>")


def replay(recorded: Recorded, sequence: list[tuple[Event, str]]) -> None:
    """Each event in turn; the terminal action each step must end with."""
    seen = [recorded.step(event) for event, _ in sequence]
    assert seen == [expected for _, expected in sequence]


def test_the_humans_input_comes_first_then_the_task_then_the_end() -> None:
    recorded = Recorded(tasks="- [ ] task-001: Build it\n", human=HUMAN)
    replay(
        recorded,
        [
            (Tick(), "run human-input 2026-02-08T09:00:00Z"),
            (done("HUMAN_INPUT_PROCESSED"), "Continue"),
            (Tick(), "run task task-001"),
            (done("TASK_COMPLETE"), "Continue"),
            (Tick(), "end complete"),
        ],
    )
    assert "## [PROCESSED] 2026-02-08T09:00:00Z" in recorded.human
    assert recorded.tasks == "- [x] task-001: Build it\n"
    assert recorded.said[-1] == "✅ All work complete."


def test_an_open_alert_is_worked_on_before_a_task_and_resolved() -> None:
    alert = make_alert(
        now=T0, severity="warning", source="ci", type="build", description="The build broke"
    )
    recorded = Recorded(tasks="- [ ] task-001: Build it\n", alerts=[alert])
    replay(
        recorded,
        [
            (Tick(), f"run alert {alert['id']}"),
            (done("ALERT_RESOLVED"), "Continue"),
            (Tick(), "run task task-001"),
        ],
    )
    assert recorded.alerts[-1]["id"] == alert["id"]
    assert recorded.alerts[-1]["status"] == "resolved"


BARRIER = "# Barriers\n\n## [WAITING] b1\n- Type: manual\n"
BLOCKED = "- [ ] task-001: Build it\n  - blockedBy: b1\n"


def test_a_task_behind_a_waiting_barrier_waits_and_starts_once_it_is_satisfied() -> None:
    recorded = Recorded(tasks=BLOCKED, barriers=BARRIER)
    replay(recorded, [(Tick(), "wait"), (Tick(), "wait")])
    assert recorded.said == ["⏳ Waiting (b1); sleeping until something changes"]  # said once
    recorded.barriers = BARRIER.replace("[WAITING]", "[SATISFIED]")  # a human's edit
    replay(recorded, [(Tick(), "run task task-001")])


def _run_record(status: str) -> RunRecord:
    return RunRecord("s1-001", "s1", {}, "python train.py", status)  # type: ignore[arg-type]


def test_runs_going_keep_the_loop_when_every_task_is_done_until_they_end() -> None:
    recorded = Recorded(tasks="- [x] task-001: Launch the sweep\n", runs=(_run_record("running"),))
    going: list[tuple[Event, str]] = [
        (Tick(), "SuperviseRuns"),
        (RunsSupervised(), "Continue"),
        (Tick(), "wait 30 s"),
    ]
    replay(recorded, going)
    assert recorded.said[-1] == "⏳ Every task is done; waiting for 1 run queued or running"
    ended = _run_record("finished")  # its exit marker: the supervisor writes its line
    recorded.runs = (ended,)
    replay(
        recorded,
        [
            (Tick(runs=True), "SuperviseRuns"),
            (RunsSupervised(ended=(ended,)), "Continue"),
            (Tick(), "end complete"),
        ],
    )


def test_a_reached_iteration_limit_ends_the_loop_with_work_left() -> None:
    recorded = Recorded(tasks="- [ ] task-001: Build it\n", options={"max_iterations": 1})
    replay(
        recorded,
        [
            (Tick(), "run task task-001"),
            (finished("Still working on it."), "Continue"),
            (Tick(), "end max-iterations"),
        ],
    )


def test_pause_holds_work_resume_starts_it_and_stop_ends_the_loop() -> None:
    recorded = Recorded(tasks="- [ ] task-001: Build it\n- [ ] task-002: Test it\n")
    replay(
        recorded,
        [
            (ControlRequested((ControlRequest("pause", None),)), "Continue"),
            (Tick(), "wait"),
            (ControlRequested((ControlRequest("resume", None),)), "Continue"),
            (Tick(), "run task task-001"),
            (done("TASK_COMPLETE"), "Continue"),
            (ControlRequested((ControlRequest("stop", None),)), "Continue"),
            (Tick(), "end stopped"),
        ],
    )
    assert "⏸️  paused; `wild --resume` continues" in recorded.said


def test_failed_runs_are_retried_at_once_then_after_a_backoff() -> None:
    recorded = Recorded(tasks="- [ ] task-001: Build it\n")
    failed = finished("boom", exit_code=1)
    replay(
        recorded,
        [
            (Tick(), "run task task-001"),
            (failed, "Continue"),
            (Tick(), "run task task-001"),  # the first failure: again at once
            (failed, "Continue"),
            (Tick(), f"wait {BACKOFF_BASE_S:g} s"),  # the second: the backoff first
        ],
    )
    assert recorded.step(Tick(), after_s=BACKOFF_BASE_S) == "run task task-001"


def test_supervise_runs_is_the_step_while_runs_are_due() -> None:
    """The first Tick with an open run supervises it before anything else (a guard on the
    runs path above: `SuperviseRuns` is the action the driver's runs effect performs)."""
    recorded = Recorded(tasks="- [x] task-001: Launch\n", runs=(_run_record("queued"),))
    model = recorded.view()
    step = decide(model, Tick(), AT)
    assert isinstance(step.actions[-1], SuperviseRuns)


def test_the_decided_state_is_what_state_json_keeps() -> None:
    """The driver writes the model's state as decided: the loop's state, the iterations
    counted and the running time are in it already (the driver only adds facts it met)."""
    recorded = Recorded(tasks="- [ ] task-001: Build it\n")
    model = replace(recorded.view(), started_mono=AT.mono - 120.0)
    step = decide(model, Tick(), AT)
    assert step.model.state.extra[RUNNING_S] == 120.0
    assert step.model.state.extra[COUNTED] == 0
    assert step.model.state.extra["loopState"] == {
        "state": "RUNNING_AGENT",
        "since": "2026-02-08T10:00:00Z",
    }
