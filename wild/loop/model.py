"""The loop's state in memory, the events that change it and the actions it asks for.

One `LoopModel` is the single owner of what the loop knows: the parsed files (kept current
by file events and by the loop's own writes), `state.json`'s content, the bookkeeping about
the human and failures, and the run's counters. `decide` (wild/loop/decide.py) turns a model
and an event into a new model and a list of actions; the driver performs the actions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from wild.agents.run_result import AgentRun
from wild.completion.verdict import CheckOutcome, Verdict
from wild.loop.bookkeeping import Bookkeeping
from wild.loop.research import RunAct
from wild.parsers.control import ControlRequest, ControlState
from wild.parsers.human import HumanInput
from wild.parsers.runs import RunRecord
from wild.parsers.state import RECENT_SUMMARIES_KEEP, LoopState
from wild.parsers.tasks import Task
from wild.policy.notify import NoteBatch
from wild.record import record, replace
from wild.workspace_view import Workspace

if TYPE_CHECKING:
    from wild.loop.states import State
    from wild.parsers.sweeps import SweepSpec  # only in types: not loaded by a loop with no sweep

EndReason = Literal[
    "complete",
    "max-iterations",
    "max-time",
    "max-cost",
    "max-tokens",
    "once",
    "waiting-human",
    "stopped",
    "no-plan",
]
FileName = Literal["tasks", "human", "barriers", "policy", "checks"]


@record
class LoopOptions:
    """What `wild "GOAL" …` asked for."""

    goal: str
    agent: str = "claude"
    # With no work left, ask the agent to plan (or to confirm the goal is met) before ending.
    plan: bool = True
    model: str | None = None
    agent_cmd: str | None = None
    max_iterations: int | None = None
    max_time_s: float | None = None
    # Spend caps, against the totals state.json keeps across restarts (the agent's own figures).
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    once: bool = False
    agent_timeout_s: float | None = 3600.0
    heartbeat_s: float = 60.0
    # How many earlier iterations' summaries a prompt carries (the sliding window).
    context_window: int = RECENT_SUMMARIES_KEEP
    checkpoint_every: int | None = None  # a git commit of the loop's changes every N iterations
    safety_rescan_s: float = 300.0
    run_backend: str | None = None  # --run-backend: for sweeps that name none
    run_slots: int | None = None  # --run-slots: the local backend's CPU slots
    # While runs are active, how often they are polled besides their exit markers' events:
    # a wrapper killed without a marker, a shared filesystem's missing events (Slurm's status
    # cycle, `slurm_poll_s`: one squeue for all of the loop's jobs).
    runs_poll_s: float = 30.0
    sandbox: bool = False  # --sandbox: each agent run under bwrap (wild.agents.sandbox)


@record
class LoopResult:
    """Why the loop ended, after how many iterations, in the words it prints."""

    reason: EndReason
    iterations: int
    message: str


@record
class Moment:
    """The clock as one decision sees it: wall time for files, monotonic time for waits."""

    now: datetime
    mono: float


@record
class Running:
    """The work an agent is on, with what the decision needs to judge the run afterwards."""

    work_type: str  # human-input, alert, task, monitoring
    work_id: str
    task: Task | None = None  # the task as it was before the run
    entry: HumanInput | None = None  # the human input being processed
    questions: tuple[HumanInput, ...] = ()  # open questions the input answers
    tasks_before: int = 0  # how many tasks tasks.md held when a planning run began


@record
class LoopModel:
    """Everything the loop knows; changed only by `decide` (a new copy per step)."""

    options: LoopOptions
    ws: Workspace
    state: LoopState
    book: Bookkeeping = field(default_factory=Bookkeeping)
    control: ControlState = field(default_factory=ControlState)
    started_mono: float = 0.0
    iterations: int = 0  # agent runs in this run of the loop
    counted: int = 0  # those --max-iterations counts: all but runs cut short by a usage limit
    monitored_at: float | None = None  # monotonic time of the last monitoring run
    rate_limited_until: float | None = None  # monotonic time a usage limit resets
    backoff_until: float | None = None  # monotonic time failed iterations have waited out
    # The last failure in words (`run_words.failure_of`) and how many runs in a row ended so.
    failure: str | None = None
    failure_repeats: int = 0
    still_runs: int = 0  # clean runs in a row that changed no project file (limits.stalled)
    running: Running | None = None
    idle_note: str | None = None  # what the loop last said it waits for
    compacted_with: int | None = None  # resolved alerts in the log when last compacted
    # The work type of the last run if it said COMPLETE; judged once the files are read.
    complete_claimed: str | None = None
    confirmed_at: int | None = None  # the iteration whose planning run confirmed the goal met
    # The completion checks' last verdict, and the iteration it was judged after (stale once
    # another agent ran, or a human approved a command).
    verdict: Verdict | None = None
    checks_ran_at: int | None = None
    last_work_type: str | None = None  # what the last agent run worked on
    start_event: str | None = None  # events.log id of loop-start
    agent_event: str | None = None  # events.log id of the last agent run's end: its lineage
    refusals_told: tuple[tuple[str, str], ...] = ()  # the files wild may not write, as said
    # The work a killed loop's agent was on: starting it again is not a new attempt.
    resumed: str | None = None
    # Research runs: supervise them at the next decision (at start, the poll being due does:
    # active runs are adopted and queued ones submitted);
    # the monotonic time of the last supervision; backend errors already raised as alerts.
    runs_due: bool = False
    runs_polled_at: float | None = None
    run_problems_told: tuple[str, ...] = ()
    # The loop's state (wild/loop/states.py) and since when, moved by `decide` only
    # (wild/loop/phases.py), and each state's timeout (TIMEOUT_<STATE>; empty: none).
    phase: State = "IDLE"
    phase_since: Moment | None = None
    timeouts: Mapping[State, float | None] = field(default_factory=dict)
    # The events.log id of what the loop acts on now (its start, the last wake-up or agent
    # run): the cause of every line that names no other. Events bring it (`Tick.cause`,
    # `AgentFinished.event_id`).
    cause: str | None = None
    # The notes batched by the Context Switch Penalty, and the texts sent so far (sent once).
    notes: NoteBatch = field(default_factory=NoteBatch)
    notified: frozenset[str] = frozenset()

    def with_book(self, book: Bookkeeping) -> LoopModel:
        """A new bookkeeping, written into the state that `state.json` keeps."""
        if book == self.book:
            return self
        return replace(
            self, book=book, state=replace(self.state, extra=book.merged_into(self.state.extra))
        )


# -- events: what happened ---------------------------------------------------------------


@record
class Tick:
    """Decide what to do next: the files are current. `stop`: a signal asked the loop to end."""

    stop: bool = False
    runs: bool = False  # a run's exit marker appeared, or runs.jsonl changed: supervise runs
    cause: str | None = None  # the wake-up's line in events.log, if the loop slept


@record
class ControlRequested:
    """`wild --pause | --resume | --stop` requests read from `.wild/control`."""

    requests: tuple[ControlRequest, ...]
    cause: str | None = None  # the wake-up's line in events.log, if the loop slept


@record
class AgentFinished:
    """The agent run on `model.running` ended; the files it changed are read already."""

    run: AgentRun
    event_id: str  # its agent-end line in events.log
    files_changed: tuple[str, ...] | None = None  # project files it changed (None: unknown)


@record
class ChecksFinished:
    """The completion checks ran; their results are written to checks.md already."""

    outcomes: tuple[CheckOutcome, ...]


@record
class TaskVerified:
    """A task's own check ran after the agent said it was done."""

    task_id: str
    outcome: CheckOutcome
    ticked_by_agent: bool  # the agent ticked the box itself (set back if the check fails)


@record
class TimedOut:
    """The loop's state outlived its timeout (`phases.timed_out`); every file is read again."""


@record
class IoFailed:
    """A file operation failed in a way the loop waits out (`io_errors`): the driver sleeps
    `retry_in_s`, reads every file again and decides anew."""

    error: str
    retry_in_s: float


# -- the research runs' events and actions ---------------------------------------------


@record
class RunsSupervised:
    """The run supervisor took a step: the runs that ended in it (their lines written), with
    the tail of each failed run's log; `problems` are backend errors to raise as alerts;
    `deterministic`: the failed runs that failed as their previous attempt did."""

    ended: tuple[RunRecord, ...] = ()
    tails: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    deterministic: frozenset[str] = frozenset()


@record
class SweepsRecorded:
    """RecordSweep was done: the sweep ids recorded, and the errors of each one refused."""

    recorded: tuple[str, ...] = ()
    refused: tuple[tuple[str, ...], ...] = ()


@record
class SuperviseRuns:
    """Submit queued runs, collect ended ones, poll the backends; RunsSupervised follows."""


@record
class RecordSweep:
    """Record validated sweeps: their runs queued, barriers and analysis tasks written;
    SweepsRecorded follows (a skill target that does not exist still refuses one)."""

    specs: tuple[SweepSpec, ...]
    origin: str  # the agent's iteration, or the human's `wild --sweep`
    cause: str | None = None


@record
class ActOnRuns:
    """Rerun or stop runs (a choice on a run alert, `wild --rerun`, `wild --stop-run`)."""

    act: RunAct
    run_ids: tuple[str, ...]
    cause: str | None = None


@record
class CloseSweep:
    """All runs of the sweep ended and their alerts are answered: mark it done and satisfy
    its barrier, so its analysis task can be selected."""

    sweep_id: str
    barrier: str | None


Event = (
    Tick
    | ControlRequested
    | AgentFinished
    | ChecksFinished
    | TaskVerified
    | RunsSupervised
    | SweepsRecorded
    | TimedOut
    | IoFailed
)


# -- actions: what the driver should do, in order -----------------------------------------


@record
class Say:
    """A line for the terminal; a `status` line (a sweep's progress) is redrawn in place
    on a terminal that can (wild.output.Console), else printed as any line."""

    text: str
    status: bool = False


@record
class Log:
    """A line in events.log."""

    kind: str
    cause: str | None = None
    fields: Mapping[str, object] = field(default_factory=dict)


@record
class EditFile:
    """A minimal edit of one `.wild/` file, re-applied under compare-and-swap if it changed."""

    file: FileName
    edit: Callable[[str], str]


@record
class AppendAlert:
    """One line appended to alerts.jsonl."""

    record: Mapping[str, Any]


@record
class AddTask:
    """A task the agent asked for; the driver logs `task-added` with the id it got."""

    text: str
    priority: int
    related: str
    cause: str | None


@record
class Ask:
    """A blocking question to the human: human.md, events.log, the notify command at once."""

    related: str
    title: str
    body: str
    cause: str | None


@record
class Notify:
    """A non-blocking note to the human, batched by the Context Switch Penalty."""

    related: str
    message: str
    cause: str | None
    repeated: bool = False  # the same text was sent before: recorded, not sent again


@record
class Report:
    """A progress report: human.md, events.log and the notify command."""

    summary: str
    cause: str | None


@record
class CompactAlerts:
    """Move resolved alerts' lines from alerts.jsonl to alerts.archive.jsonl (SPEC §1)."""


@record
class FlushNotes:
    """Batched notes whose window has passed are due (`everything`: all of them, the loop
    ends); `decide` turns it into a `SendNotes`, or drops it when nothing is due."""

    everything: bool = False


@record
class SendNotes:
    """Send these notes to the human now as one ping: the terminal and the Notify Command."""

    messages: tuple[str, ...]


@record
class Checkpoint:
    """A git commit of what the loop's iterations changed (`--checkpoint-every`)."""

    iteration: int


@record
class RunAgent:
    """Run one agent process on this work (the last action of a step)."""

    iteration: int
    work_type: str
    work_id: str
    values: Mapping[str, object]
    # A sweep's analysis: the id of the sweep whose run table and metrics the driver adds to
    # `values` (they are read from the runs' files, which a decision does not touch).
    analysis: str | None = None


@record
class RunChecks:
    """Run the completion checks in checks.md now (the last action of a step)."""


@record
class VerifyTask:
    """Run a task's `- check:` command before its completion counts (the last action)."""

    task_id: str
    command: str
    ticked_by_agent: bool


@record
class Wait:
    """Sleep until a file or job event, or `timeout_s` (None: no timed duty is pending)."""

    timeout_s: float | None


@record
class Continue:
    """Read what the actions above changed, then decide again."""


@record
class End:
    """The terminal action that ends the loop with its result."""

    result: LoopResult


Action = (
    Say
    | Log
    | EditFile
    | AppendAlert
    | AddTask
    | Ask
    | Notify
    | Report
    | FlushNotes
    | SendNotes
    | CompactAlerts
    | Checkpoint
    | SuperviseRuns
    | RecordSweep
    | ActOnRuns
    | CloseSweep
    | RunAgent
    | RunChecks
    | VerifyTask
    | Wait
    | Continue
    | End
)


@record
class Step:
    """What one decision produced: the new model and the actions, the last one a terminal."""

    model: LoopModel
    actions: tuple[Action, ...]


def starts_agent(actions: tuple[Action, ...]) -> bool:
    """Whether these actions start an agent run (its record is then written before it)."""
    return any(isinstance(action, RunAgent) for action in actions)


def written_with_next(event: Event, actions: tuple[Action, ...]) -> bool:
    """Whether the state these actions come with may be written to state.json with the next
    decision's state rather than now: a decision that starts an agent (written with the run's
    record, before the agent's program runs), and a judgment of a finished run whose actions
    only keep the loop's books (a `Say`, a `Log`, the tick held in tasks.md) before it decides
    again at once (`Continue`): nothing leaves the loop before the next decision, whose write
    carries the judgment too. One durable state.json write per iteration, not two."""
    if starts_agent(actions):
        return True
    if not isinstance(event, AgentFinished) or not actions or not isinstance(actions[-1], Continue):
        return False
    return all(
        isinstance(action, Say | Log) or (isinstance(action, EditFile) and action.file == "tasks")
        for action in actions[:-1]
    )
