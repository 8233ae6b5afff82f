"""The thin driver around `decide`: it performs the actions and turns what happens into events.

It owns the effects and nothing else: the files (compare-and-swap edits, alert appends,
state.json after every change), the agent process, the human's channels, and the one wake
event it sleeps on (file events, barrier results, control requests, signals). Every decision
is `decide`'s. Time, the agent runner, the waiting and the notify command are injectable, so
tests drive the whole loop in-process without a subprocess or a sleep.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Callable, Mapping

from wild.agents.runner import run_agent
from wild.clock import Clock, SystemClock, iso
from wild.control import ControlInbox
from wild.errors import RefusedWriteError, WildError, from_os_error
from wild.liveness import probe, this_host, this_process
from wild.loop import changes, checkpoint, io_errors, iteration, limits, phases, recovery, states
from wild.loop.agent_record import AgentRunRecord
from wild.loop.agent_record import started as run_started
from wild.loop.barrier_start import BarrierStart, needs_checker
from wild.loop.bookkeeping import Bookkeeping
from wild.loop.checks_effect import LoopChecks
from wild.loop.decide import decide, policy_at
from wild.loop.effects import Effects
from wild.loop.files import WATCHED, LoopFiles, Watched
from wild.loop.hooks import Hooks, Runner, Watcher
from wild.loop.model import (
    Action,
    AgentFinished,
    Continue,
    ControlRequested,
    EditFile,
    End,
    Event,
    IoFailed,
    Log,
    LoopModel,
    LoopOptions,
    LoopResult,
    Moment,
    RecordSweep,
    RunAgent,
    RunChecks,
    Say,
    SuperviseRuns,
    Tick,
    TimedOut,
    VerifyTask,
    Wait,
    written_with_next,
)
from wild.loop.reporting import Reporter
from wild.loop.runs_effect import LoopRuns, run_settings
from wild.loop.trust_guard import TrustGuard, approval_required
from wild.output import Console
from wild.parsers.alerts_file import AlertCursor
from wild.parsers.process_id import ProcessId
from wild.parsers.run_table import running_runs
from wild.parsers.state import LoopState
from wild.paths import WildPaths
from wild.procfs import hold_real_folders, release_real_folders
from wild.record import replace
from wild.store import totals_ledger
from wild.store.events_log import EventLog
from wild.store.files import drop_spares, make_spares, remove_displaced, sync_owed_folders
from wild.store.loop_lock import running_loop, take_loop_lock
from wild.store.self_writes import SelfWrites
from wild.store.state_file import count_soon, load_state, save_state
from wild.wake import (
    RUN_END_MARKER,
    FolderWatcher,
    Waker,
    WakeReason,
    gather,
    install_signal_handlers,
)

# The crash-safe swaps in `.wild/` at an agent's gate: the held tasks.md edits, the run's record.
SWAPS_AT_THE_GATE = 2


def _logs_from(actions: tuple[Action, ...], start: int) -> list[Log]:
    """The consecutive Log actions from `start` on: one events.log append for them all."""
    logs: list[Log] = []
    for action in actions[start:]:
        if not isinstance(action, Log):
            break
        logs.append(action)
    return logs


class Loop:
    """One running loop over one `.wild/` folder."""

    def __init__(
        self,
        paths: WildPaths,
        options: LoopOptions,
        *,
        clock: Clock | None = None,
        out: Callable[[str], None] = print,
        runner: Runner = run_agent,
        environ: Mapping[str, str] | None = None,
        hooks: Hooks | None = None,
    ) -> None:
        self.paths = paths
        self.options = options
        self.clock: Clock = clock or SystemClock()
        self.out = out
        self.runner = runner
        self.environ = dict(os.environ if environ is None else environ)
        self.hooks = hooks or Hooks()
        self.waker = Waker()
        self.self_writes = SelfWrites()
        self.stop_event = threading.Event()
        self.control = ControlInbox(paths, self.stop_event)
        self.events = EventLog(paths.events, self.clock)
        self.reporter = Reporter(
            paths,
            self.events,
            out,
            self.self_writes.remembering(paths.human),
            send=self.hooks.send_notification,
            cause=lambda: self._model.cause if self._model is not None else None,
        )
        self.files = LoopFiles(paths)
        self.trust_guard = TrustGuard(paths, self.clock, out)
        required = self._approval_required
        settings = run_settings(paths, options)
        self.runs = LoopRuns(paths, self.clock, self.events, approval_required=required, **settings)
        self.effects = Effects(
            paths, lambda: self.files, self.events, self.reporter, self.self_writes, runs=self.runs
        )
        self.checks = LoopChecks(paths, self.self_writes, self.stop_event, required)
        self._model: LoopModel | None = None
        self._unwatched: Watcher | None = None  # made before the first read, not started yet
        self._unsaved = False  # the model's state is newer than state.json (`_commit`)
        # The project's files as the last agent left them, while the loop's step goes on: the
        # next agent's run starts from them (`_run_agent`); None once the outside world acts.
        self._left: changes.Snapshot | None = None
        # Last looks at ended runs' trees, made when the loop's step is over (`_step_over`).
        self._looks_later: list[Callable[[], None]] = []
        self.agent_runs = recovery.new_loop_id()  # agent run ids are `<this>.<iteration>`
        # TIMEOUT_<STATE> variables are checked here: a bad one stops the loop before it starts.
        self.timeouts = states.timeouts(self.environ)
        timeout_s = phases.agent_timeout(options.agent_timeout_s, self.timeouts)
        self._setup = iteration.AgentSetup.of(options, timeout_s)
        self.barriers = BarrierStart(
            paths if self.hooks.barrier_checker else None,
            clock=self.clock,
            wake=lambda barrier_id: self.waker.wake(WakeReason("barrier", detail=barrier_id)),
            require_approval=required,
            on_written=self.self_writes.remember,
        )

    @property
    def model(self) -> LoopModel:
        """The loop's state, owned here between decisions."""
        if self._model is None:
            raise RuntimeError("the loop has not started")
        return self._model

    # -- lifecycle -----------------------------------------------------------------------

    def run(self) -> LoopResult:
        with take_loop_lock(self.paths.root, lambda: running_loop(self.paths.state)):
            try:
                return self._run()
            finally:
                self.events.close()

    def _run(self) -> LoopResult:
        self.paths.logs.mkdir(exist_ok=True)
        # The watcher is made before the first read: it takes the files' stat signatures then.
        # It starts watching once the first agent runs, or before the loop does anything else
        # (`_watch`), and what changed since it was made wakes the loop then: a write in
        # between is not lost, and watching (watchdog, its threads) is not on the way to the
        # first agent's start (issue 22 item 8).
        watcher = self._unwatched = self._watcher()
        restore = (
            install_signal_handlers(self.waker, self.stop_event)
            if self.hooks.signals and threading.current_thread() is threading.main_thread()
            else None
        )
        try:
            self._begin()
            result = self._cycle(watcher)
        finally:
            self.barriers.stop()
            watcher.stop()
            if restore is not None:
                restore()
            release_real_folders()
            if self._model is not None:
                self._write_held()
                ended = replace(self.model, state=replace(self.model.state, active=False))
                self._commit(self._timed(ended, changed=True))
                sync_owed_folders()
                totals_ledger.settle()
            remove_displaced()
            drop_spares()
        self.events.append("loop-end", cause=self.model.start_event, reason=result.reason)
        return result

    def _begin(self) -> None:
        """Read state.json and every file once; everything after comes from events."""
        loaded = load_state(self.paths.state, self.clock)
        for problem in loaded.problems:
            self.out(f"⚠️  {problem}")
        taken, interrupted = recovery.take_over(self.paths, loaded.state, self.out, self.options)
        state = recovery.starting(taken, self.options, this_process(iso(self.clock.now())))
        self.files = LoopFiles(
            self.paths, alerts_since=AlertCursor.from_json(state.alerts_file_position)
        )
        self.files.refresh()
        state = replace(state, alerts_file_position=self._read_position())
        start = self.events.append("loop-start", goal=self.options.goal, agent=self.options.agent)
        if interrupted is not None:  # the killed loop's run, never ended: the trail says so
            self.events.append("agent-interrupted", cause=start, **interrupted.event_data())
        counted, ran_s = limits.carried(state)  # --max-iterations and --max-time count the run
        model = LoopModel(
            options=self.options,
            ws=self.trust_guard.view(self.files),
            state=state,
            book=Bookkeeping.from_extra(state.extra),
            started_mono=self.clock.monotonic() - ran_s,
            counted=counted,
            start_event=start,
            resumed=interrupted.work_id if interrupted is not None else None,
            timeouts=self.timeouts,
            cause=start,
        )
        model, began = phases.begin(model, loaded.state, self._moment())
        self._model = None  # so the first commit writes state.json
        self._commit(self._timed(model, changed=True))
        for action in began:
            self._effect(action)
        if self.options.checkpoint_every:  # what is changed now is the human's, not the loop's
            self.effects.checkpoint_start = checkpoint.baseline(self.paths.project, self.paths.root)

    def _watch(self, *, agent_running: bool = False) -> None:
        """Start the watcher made before the first read, if it is not watching yet. While an
        agent runs, a failure to watch waits: it is raised here before the loop next waits
        or acts (the agent needs no watcher)."""
        watcher = self._unwatched
        if watcher is None:
            return
        # The launch held the collector off (`wild.commands.actions._loop`): from here on the
        # loop's objects come and go.
        gc.enable()
        try:
            watcher.start()
        except WildError:
            if agent_running:
                return
            raise
        self._unwatched = None
        # A run's exit marker written between the first read and now made no event: its run,
        # still running in the record, is looked at now.
        for run in running_runs(self.files.run_log.index):
            marker = self.paths.runs / run.id / RUN_END_MARKER
            if marker.exists():
                self.waker.wake(WakeReason("run", str(marker), run.id))

    def _watcher(self) -> Watcher:
        if self.hooks.watcher is not None:
            return self.hooks.watcher(self)
        return FolderWatcher(
            self.paths.root,
            self.waker,
            self.self_writes,
            safety_rescan_s=self.options.safety_rescan_s,
            on_control=self.control.on_change,
            watch_runs=True,
            batch_while_busy=True,  # its own writes read in one batch per busy spell
        )

    # -- the cycle -----------------------------------------------------------------------

    def _moment(self) -> Moment:
        return Moment(self.clock.now(), self.clock.monotonic())

    def _approval_required(self) -> bool:
        return approval_required(self._model, self._moment())

    def _commit(self, model: LoopModel, *, durable: bool = True, before_go: bool = False) -> None:
        """Take the model as decided (or with a fact written in); state.json is written
        whenever its content changed. Not `durable`: written with the next commit (a decision
        that starts an agent is written with the run's record a moment later: one fsynced
        write before the agent, not two). `before_go`: the run's record, written while the
        agent waits at its gate; the file it displaces is removed once the agent runs
        (`_step_over`), not on its way."""
        before = self._model
        self._model = model
        if before is None or before.state != model.state or self._unsaved:
            self._unsaved = not durable
            if durable:  # the ledger's raise meets the next decision (settled before a go)
                save_state(
                    self.paths.state, model.state, ledger_soon=True, displaced_later=before_go
                )

    def _cycle(self, watcher: Watcher) -> LoopResult:
        event: Event = Tick()
        failures = 0  # file operations that failed in a row
        while True:
            hold_real_folders()  # released where the outside world acts (`_step_over`)
            try:
                step = decide(self.model, event, self._moment())
                # Starting an agent: nothing of the run exists until its record is written. A
                # judgment that only keeps the books goes to disk with the next decision.
                held = written_with_next(event, step.actions)
                self._commit(step.model, durable=not held)
                judged = held and isinstance(event, AgentFinished)
                if judged:
                    count_soon(self.paths.state, self.model.state)
                outcome = self._perform(step.actions, watcher, hold_logs=judged)
                if not isinstance(outcome, LoopResult) and phases.expired(
                    self.model, self._moment()
                ):
                    self._read(WATCHED)  # recovery: every file again, a backoff cut short
                    self._decided(TimedOut())
            except (OSError, RefusedWriteError) as error:  # io_errors.Failure
                self._step_over()
                with contextlib.suppress(OSError):  # a tasks.md swap whose agent never ran
                    sync_owed_folders()
                failures += 1
                event = self._after_io_error(error, failures, watcher)
                continue
            failures = 0
            if isinstance(outcome, LoopResult):
                return outcome
            event = outcome

    def _after_io_error(self, error: io_errors.Failure, failures: int, watcher: Watcher) -> Event:
        """Wait and start the cycle again from the files, or stop with a clear message."""
        wait_s = io_errors.retry_after(error, failures)
        if wait_s is None:
            raise from_os_error(error) if isinstance(error, OSError) else error
        io_errors.tell(self.out, error, wait_s, failures)
        self._watch()
        with contextlib.suppress(OSError, RefusedWriteError):  # the log may be what failed
            # Written with the next commit: the disk may be what failed.
            self._decided(IoFailed(io_errors.described(error), wait_s), durable=False)
        watcher.wait_for_work(wait_s)  # a stop or a file change ends the wait early
        self._read(WATCHED)
        return self._control_or_tick()

    def _perform(
        self, actions: tuple[Action, ...], watcher: Watcher, *, hold_logs: bool = False
    ) -> Event | LoopResult:
        """Do the actions in order; the last one says what happens next. `hold_logs`: their
        events.log lines are written with the next decision's (a judgment written with it)."""
        if needs_checker(actions):
            self.barriers.start()
        touched: set[Watched] = set()
        for index, action in enumerate(actions):
            if isinstance(action, Log):
                if not (index and isinstance(actions[index - 1], Log)):  # a run's first line
                    logs = _logs_from(actions, index)
                    touched |= self.effects.log_all(logs, self.model.cause, held=hold_logs)
                continue
            if not isinstance(action, RunAgent | Continue | Say | EditFile):
                # Before the files are read, waited on or acted on (before an agent: at its
                # gate, `_agent_started`).
                self._write_held()
                if not isinstance(action, End):
                    self._watch()  # before the loop waits, runs checks or steps its runs
                self._step_over()  # the loop waits, runs checks or steps its runs, or ends
            if isinstance(action, End):
                return action.result
            if isinstance(action, RunAgent):
                return self._run_agent(action)
            if isinstance(action, RunChecks | VerifyTask):
                return self.checks.perform(action, self.files, iso(self.clock.now()))
            if isinstance(action, SuperviseRuns | RecordSweep):
                return self._runs_step(action)
            if isinstance(action, Wait):
                return self._wait(action, watcher)
            if isinstance(action, Continue):  # after a held judgment, only the tick moved
                return self._next_event(touched, again=hold_logs and touched <= {"tasks"})
            touched |= self._effect(action)
        return self._next_event(touched)

    def _effect(self, action: Action) -> set[Watched]:
        """Perform one action that is not a terminal; the files it touched."""
        if isinstance(action, Say):
            if action.status and isinstance(self.out, Console):
                self.out.status(action.text)
            else:
                self.out(action.text)
            return set()
        if isinstance(action, EditFile) and action.file == "tasks":
            # Written with the next decision's edits (an agent run's tick with the next
            # task's mark): one tasks.md write, its two fsyncs, per iteration, not two.
            self.files.hold(action.edit)
            return {"tasks"}
        if not isinstance(action, Log):
            self._write_held()
        policy = policy_at(self.model, self._moment())
        return self.effects.perform(action, policy, self.clock.now(), self.model.cause)

    def _write_held(self, *, before_agent: bool = False) -> None:
        """Write the events.log lines held, then the tasks.md edits held since the last
        write, in one write. `before_agent`: the swap's folder is fsynced with state.json's
        (the same `.wild/`) when the run's record is written, before the agent's program runs
        (`_agent_started`): one folder fsync per iteration, not two."""
        self.events.flush()
        edit = self.files.take_held()
        if edit is not None:
            held = EditFile("tasks", edit)
            policy = policy_at(self.model, self._moment())
            self.effects.perform(
                held, policy, self.clock.now(), self.model.cause, folder_synced_later=before_agent
            )

    def _next_event(self, touched: set[Watched], *, again: bool = False) -> Event:
        """After the loop's own writes: read what they changed, then decide again (`again`:
        only held edits moved, `LoopFiles.view`)."""
        self._read(touched, again=again)
        return self._control_or_tick()

    def _control_or_tick(self, cause: str | None = None) -> Event:
        """The next event; `cause`: the wake-up the loop decides after, if it slept."""
        requests = self.control.take()
        if requests:
            return ControlRequested(requests, cause)
        runs, self.files.runs_news = self.files.runs_news, False
        return Tick(stop=self.stop_event.is_set(), runs=runs, cause=cause)

    def _decided(self, event: TimedOut | IoFailed, *, durable: bool = True) -> None:
        """A step the driver met, not one it slept toward: the loop's state moves in the
        model (`decide`), its lines are logged; the cycle then goes on as it was."""
        step = decide(self.model, event, self._moment())
        self._commit(step.model, durable=durable)
        for action in step.actions[:-1]:
            self._effect(action)

    def _read(self, names: set[Watched] | tuple[Watched, ...], *, again: bool = False) -> None:
        """Hand the re-read files to the model: the only way file content reaches it (with
        how far alerts.jsonl is read, which state.json keeps)."""
        if names:
            self.files.refresh(names)
        model = replace(self.model, ws=self.trust_guard.view(self.files, again=again))
        position = self._read_position()
        if position != model.state.alerts_file_position:
            model = replace(model, state=replace(model.state, alerts_file_position=position))
        self._model = model

    def _read_position(self) -> dict[str, int | str] | None:
        cursor = self.files.alert_log.cursor
        return cursor.to_json() if cursor is not None else None

    def _timed(self, model: LoopModel, *, changed: bool) -> LoopModel:
        """`model` with the run's running time as state.json keeps it (`limits.kept`): a fact
        of the clock, written in where the driver writes a fact (the loop's start and end, an
        agent starting or running); each decision writes its own (`decide`)."""
        return replace(model, state=limits.kept(model, self.clock.monotonic(), changed))

    # -- effects with results ------------------------------------------------------------

    def _run_agent(self, action: RunAgent) -> Event:
        """Run one agent process; its end, with the files it changed read, is the next event."""
        # Durable before the agent's program runs, with its pid (`_agent_started`: the runner
        # holds the spawned agent at a gate until then): a restart after a kill finds both.
        record = AgentRunRecord.starting(action, self.agent_runs)
        self._set_state(run_started(self.model.state, record), durable=False)
        announced: list[str] = []
        request = iteration.build_request(
            self.paths,
            self._setup,
            self.model.ws,
            iteration=action.iteration,
            work_type=action.work_type,
            work_id=action.work_id,
            values=action.values,
            analysis=action.analysis,
            environ=self.environ,
            cancel=self.stop_event,
            clock=self.clock,
            on_start=self._agent_started,
            run_id=record.run_id,
        )
        # The watcher and the barrier checker start once the agent's program runs, not at its
        # gate: their imports, threads and first pass would delay the agent's start (issue 22
        # item 8).
        told: list[bool] = []

        def running() -> None:
            # The run's first events.log line and its line on the console once the agent's
            # program runs (its record on disk since before the go): neither is on the way to
            # its start (~100 µs and ~50 µs; issue 22 item 8).
            if not announced:
                announced.append(self._announce(action))
            if not told:
                told.append(True)
                self.out(f"🤖 Iteration {action.iteration}: {iteration.describe(action)}")
                self._agent_running()  # once: not again on the way to the next agent

        request = replace(
            request,
            on_heartbeat=self._heartbeat,
            on_running=running,
            look_later=self._looks_later.append,
        )
        # The files as the agent before left them, if the loop's step has gone on since: the
        # loop writes only in `.wild/`, which no snapshot counts, so a second look would find
        # the same (a human's save meanwhile is this run's, as one a moment later would be;
        # ~0.1 ms of each iteration without git, a `git status` with it; issue 22 item 8).
        before = self._left
        if before is None:
            before = changes.snapshot(self.paths.project, self.paths.root)
        run = self.runner(request)
        # Not told (it could not start, or an in-process runner): its start is told now.
        running()  # if the runner did not say the agent started (in-process, or never ran)
        started = announced[0]
        hold_real_folders()  # the agent is over: the loop's step goes on to the next go
        after = changes.snapshot(self.paths.project, self.paths.root)
        files = changes.changed(before, after)
        self._left = after
        # The record is kept: it is judged by the next decision, which writes state.json at
        # once (on disk until then: the run's record and a pid no longer running, as when the
        # loop is killed while the agent exits). One durable write after a run, not two.
        self._set_state(replace(self.model.state, agent_process=None), durable=False)
        fields = iteration.record_fields(self.options, run, action.iteration, files)
        # Its line is written with the judgment's and the next decision's, in one append.
        ended = self.events.hold("agent-end", cause=started, **fields)
        self._read(WATCHED)  # the agent may have edited any file
        return AgentFinished(run, ended, files)

    def _agent_running(self) -> None:
        self._step_over()  # the agent's program runs
        # Unnamed files for the two swaps at the next agent's gate (tasks.md's, the record's),
        # made now, off its way (`files.make_spares`: a file's creation is ~60 µs of each).
        make_spares(self.paths.root, SWAPS_AT_THE_GATE)
        self._watch(agent_running=True)
        self.barriers.start()

    def _announce(self, action: RunAgent) -> str:
        """The run's `agent-start` line; its id is the cause of its `agent-end`."""
        return self.events.append("agent-start", cause=self.model.cause, **iteration.start(action))

    def _runs_step(self, action: SuperviseRuns | RecordSweep) -> Event:
        event = self.runs.perform(action)
        self._read(("runs", "tasks", "barriers"))
        self.files.runs_news = False  # what the step wrote is not news to act on
        return event

    def _step_over(self) -> None:
        """The loop's step is over: the outside world acts now (an agent's program runs, the
        loop waits, runs checks or steps its runs, or ends). The folders' real paths are
        asked afresh from here (`procfs.hold_real_folders`); the files its swaps displaced
        are removed, and the runs that ended are looked at a last time (`look_later`): off
        the way to the agent's go, as the agent starts."""
        release_real_folders()
        self._left = None  # the outside world acts: the project's files are looked at anew
        remove_displaced()
        looks = list(self._looks_later)  # what the agents before left: told, their ends reaped
        self._looks_later.clear()
        for look in looks:
            # A look that fails leaves what the run left to the loop's end, which sweeps every
            # process of its runs (by run id, and the orphans it adopted), as a look missed.
            with contextlib.suppress(OSError):
                look()

    def _heartbeat(self, _beat: object) -> None:
        """While the agent runs, state.json's running time stays current (--max-time)."""
        self.reporter.watch_disk()  # a flooding agent fills it fastest
        with contextlib.suppress(OSError, RefusedWriteError):  # nor a full disk, nor a link
            self._commit(self._timed(self.model, changed=False))

    def _agent_started(self, pid: int) -> None:
        """The runner spawned the agent, held at its gate: the events.log lines and tasks.md
        edits held since the last write go to disk (the tick of the run before and this run's
        mark), then state.json names the run's record and the agent, in one durable write,
        before the agent's program runs. Written here rather than before the spawn: the
        agent's chain (`setpriv`, `sh`) is still on its way to the gate, so they cost the go
        nothing (issue 22 item 8); the swap's folder fsync is the record's own."""
        self._write_held(before_agent=True)
        now = iso(self.clock.now())
        process = probe(pid, now) or ProcessId(pid, this_host(), started_at=now)
        # A failed raise fails the start before the record is written; the lines appended
        # since the last settle are fsynced with the record's own, below (one fsync, not two).
        totals_ledger.settle(durable=False)
        self._set_state(replace(self.model.state, agent_process=process), before_go=True)
        sync_owed_folders()  # tasks.md's swap, if state.json's folder fsync was not its
        totals_ledger.settle()  # the ledger holds every count before an agent can run
        release_real_folders()  # the go follows: the agent's program may move folders

    def _set_state(
        self, state: LoopState, *, durable: bool = True, before_go: bool = False
    ) -> None:
        """A fact, not a decision: written straight into the state `decide` keeps (not
        `durable`: on disk with the next commit; `before_go`: `_commit`'s)."""
        changed = state != self.model.state
        model = self._timed(replace(self.model, state=state), changed=changed)
        self._commit(model, durable=durable, before_go=before_go)

    def _wait(self, action: Wait, watcher: Watcher) -> Event:
        """Sleep on the one wake event until something happens or a timed duty is due."""
        reasons = watcher.wait_for_work(action.timeout_s)
        if any(r.kind == "run" for r in reasons):  # runs ending together: one decision
            reasons = gather(watcher.wait_for_work, reasons)
        if any(r.path is not None and r.path.endswith("barriers.md") for r in reasons):
            self.barriers.poke()
        wake = self.events.append(
            "wake", cause=self.model.start_event, reasons=sorted({r.kind for r in reasons})
        )
        self._read(self.files.changed_by(reasons))
        return self._control_or_tick(wake)
