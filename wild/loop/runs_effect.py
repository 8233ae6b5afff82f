"""The loop's hands on research runs: supervise them, record sweeps, act on runs, close sweeps.

The decisions are wild.loop.research_step's; this is the effect side, as LoopChecks is for
completion checks. Its appends to runs.jsonl do wake the loop's watcher; the loop's reader
then finds only lines it already took in after the step, so nothing is done twice.

The supervisor and its backends are built on first use, so a loop that never starts a
sweep loads no backend. A backend that cannot be loaded or fails (Slurm's controller down)
is a problem in the result, which the loop raises as an alert: never a crash.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from wild.barriers.approval_set import command_hash
from wild.barriers.approvals import UNAPPROVED_TYPE, load_approvals
from wild.barriers.command_gate import gate
from wild.clock import Clock, iso
from wild.digest import sha256_hex
from wild.errors import WildError
from wild.loop.model import (
    ActOnRuns,
    CloseSweep,
    LoopOptions,
    RecordSweep,
    RunsSupervised,
    SuperviseRuns,
    SweepsRecorded,
)
from wild.parsers import barriers as barriers_md
from wild.parsers.alerts import make_alert
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths
from wild.record import replace
from wild.store.alerts_log import append_alert
from wild.store.events_log import EventLog
from wild.store.files import update_text
from wild.store.runs_log import append_records

if TYPE_CHECKING:
    from wild.runs.backend import BackendContext, RunBackend
    from wild.runs.early_stopping import EarlyStopping
    from wild.runs.supervisor import RunSupervisor


class _Backends(Mapping[str, "RunBackend"]):  # the protocol is only a type here
    """Backends by name, each loaded when a run first names it; one that fails to load is
    remembered as a problem (said once per step by the supervisor's caller)."""

    def __init__(self, context: BackendContext) -> None:
        self._context = context
        self._loaded: dict[str, RunBackend] = {}
        self.problems: dict[str, str] = {}

    def __getitem__(self, name: str) -> RunBackend:
        from wild.runs.registry import load_backend  # noqa: PLC0415

        if name not in self._loaded:
            try:
                self._loaded[name] = load_backend(name, self._context)
            except WildError as error:
                self.problems[name] = str(error)
                raise KeyError(name) from error
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded)

    def __len__(self) -> int:
        return len(self._loaded)


class LoopRuns:
    """Research runs as the loop drives them."""

    def __init__(
        self,
        paths: WildPaths,
        clock: Clock,
        events: EventLog,
        *,
        tag: str,
        settings: Mapping[str, str],
        run_backend: str | None = None,
        approval_required: Callable[[], bool] = lambda: True,
    ) -> None:
        self.paths = paths
        self.clock = clock
        self.events = events
        self.run_backend = run_backend
        # The policy in force requires a human's approval of each command (the loop's view).
        self.approval_required = approval_required
        self._asked: set[tuple[str, str]] = set()  # (sweep, program hash) asked about
        self._tag, self._settings = tag, settings
        self._backends: _Backends | None = None
        self._supervisor: RunSupervisor | None = None
        self._early: EarlyStopping | None = None

    @property
    def supervisor(self) -> RunSupervisor:
        if self._supervisor is None:
            # Imported on first use, as the sweep recorder below: a loop without runs never
            # loads them, and one with runs loads them after its first agent started.
            from wild.runs.backend import BackendContext  # noqa: PLC0415
            from wild.runs.supervisor import RunSupervisor  # noqa: PLC0415

            self._backends = _Backends(BackendContext(self.paths, self._tag, self._settings))
            self._supervisor = RunSupervisor(
                self.paths, self._backends, self.clock, self.events, command_gate=self._gate
            )
        return self._supervisor

    def _gate(self) -> Callable[[str], bool]:
        """The command gate barriers pass, for this step: the policy and the approvals now."""
        return gate(load_approvals(self.paths.project), approval_required=self.approval_required())

    def supervise(self) -> RunsSupervised:
        """One supervisor step: adopt, collect ends, start what fits."""
        from wild.runs import attempts, markers  # noqa: PLC0415

        result = self.supervisor.step()
        self.stop_early()
        self._ask_approval(result.held)
        tails = {run.id: markers.log_tail(self.paths.run_dir(run.id)) for run in result.failed}
        repeated = frozenset(
            run.id
            for run in result.failed
            if attempts.deterministic_failure(self.paths.run_dir(run.id), run, tails[run.id])
        )
        self._compact_when_due()
        problems = list(result.problems)
        if self._backends is not None:
            problems += self._backends.problems.values()
            self._backends.problems.clear()
        return RunsSupervised(result.ended, tails, tuple(problems), repeated)

    def _compact_when_due(self) -> None:
        """runs.jsonl rewritten with its latest line per id once most of it is history, so
        readers (`wild --runs`, `--status`, a restarted loop) read each run once, not its
        every line (the supervisor's reader then reads the new file from its start)."""
        # Only where runs run: not on the loop's start path (issue 22).
        from wild.store import runs_compaction  # noqa: PLC0415

        log = self.supervisor.log
        records = len(log.index.runs) + len(log.index.sweeps)
        if log.cursor is None or not runs_compaction.due(
            log.cursor.offset, log.cursor.line_count, records
        ):
            return
        # Read up to the end first (this step's own lines: O(new bytes), read at the next
        # step anyway), so the reader has read the very file compacted and follows its lines
        # to their new places instead of reading the new file from its start beside what it
        # holds (the peak of a 10,000-run sweep's loop). Any other compaction, or a line
        # appended between the two, is read from the start, as before.
        log.refresh()
        report = runs_compaction.compact(self.paths.runs_log, self.paths.lock, log.known_lines())
        if report.moved is not None:
            log.follow(report.moved)
        self.events.append(
            "runs-compacted",
            dropped=report.dropped,
            kept_lines=report.kept_lines,
            carried_lines=report.carried_lines,
        )

    @property
    def early_stopping(self) -> EarlyStopping:
        if self._early is None:
            from wild.runs.early_stopping import EarlyStopping  # noqa: PLC0415

            self._early = EarlyStopping(self.paths)
        return self._early

    def stop_early(self) -> list[str]:
        """Stop the running runs that their sweep's early-stopping rule ends now (as
        `wild --stop-run` would, with the rule's reason); their ids."""
        stopped = []
        for stop in self.early_stopping.decide(self.supervisor.index):
            try:
                if self.supervisor.stop(stop.run_id, reason=stop.reason):
                    stopped.append(stop.run_id)
            except WildError as error:  # its backend is gone: said, never fatal
                self.events.append("run-act-failed", run=stop.run_id, error=str(error))
        return stopped

    def _ask_approval(self, held: Sequence[RunRecord]) -> None:
        """One alert per sweep and program waiting for a human's approval, as a barrier's
        unapproved command gets (resolved by `wild --approve <sweep id>`), never two."""
        # Imported here, as the runs' modules: only once a run waits for an approval.
        from wild.barriers.checker import open_unapproved_alerts  # noqa: PLC0415
        from wild.runs.signing import command_to_approve  # noqa: PLC0415

        programs = {(run.sweep, command_to_approve(run)) for run in held}
        fresh = [
            (sweep, command)
            for sweep, command in sorted(programs)
            if (sweep, command_hash(command)) not in self._asked
        ]
        if not fresh:
            return
        raised = open_unapproved_alerts(self.paths.alerts)
        for sweep, command in fresh:
            key = (sweep, command_hash(command))
            self._asked.add(key)
            self.events.append("runs-held", sweep=sweep, command=command, commandHash=key[1])
            if key in raised:
                continue
            record = make_alert(
                now=self.clock.now(),
                severity="warning",
                source="wild",
                type=UNAPPROVED_TYPE,
                description=(
                    f"The runs of sweep {sweep} wait for your approval of the command they "
                    f"run: {command} — run `wild --approve {sweep}` if you trust it"
                ),
                context={
                    "barrier": sweep,
                    "sweep": sweep,
                    "command": command,
                    "commandHash": key[1],
                },
            )
            append_alert(self.paths.alerts, record)

    def record(self, action: RecordSweep) -> SweepsRecorded:
        """Record each sweep; a skill target that does not exist refuses it."""
        from wild.runs.record_sweep import TimeLimitError, record_sweep  # noqa: PLC0415

        recorded: list[str] = []
        refused: list[tuple[str, ...]] = []
        for spec in action.specs:
            try:
                outcome = record_sweep(
                    self.paths, spec, now=self.clock.now(), run_backend=self.run_backend
                )
            except TimeLimitError as error:  # the human's setting: told, nothing recorded
                refused.append((str(error),))
                continue
            if outcome.sweep is None:
                refused.append(outcome.errors)
                continue
            recorded.append(outcome.sweep.id)
            self.events.append(
                "sweep-recorded",
                cause=action.cause,
                sweep=outcome.sweep.id,
                runs=len(outcome.runs),
                cut=outcome.sweep.cut,
                origin=action.origin,
            )
        return SweepsRecorded(tuple(recorded), tuple(refused))

    def act(self, action: ActOnRuns) -> list[str]:
        """Rerun or stop the runs a choice named; a run that cannot is logged, not fatal (the
        reasons are returned)."""
        errors: list[str] = []
        for run_id in action.run_ids:
            try:
                if action.act == "rerun":
                    self.supervisor.rerun(run_id)
                else:
                    self.supervisor.stop(run_id, reason=action.act)
            except WildError as error:
                errors.append(str(error))
                self.events.append(
                    "run-act-failed", cause=action.cause, run=run_id, error=str(error)
                )
        return errors

    def perform(self, action: SuperviseRuns | RecordSweep) -> RunsSupervised | SweepsRecorded:
        """An action whose outcome is the loop's next event."""
        if isinstance(action, SuperviseRuns):
            return self.supervise()
        return self.record(action)

    def apply(self, action: ActOnRuns | CloseSweep, now: datetime) -> None:
        """An action that only changes files (the loop reads them again after it)."""
        if isinstance(action, ActOnRuns):
            self.act(action)
        else:
            self.close(action, now)

    def close(self, action: CloseSweep, now: datetime) -> None:
        """The sweep is done: its line says so, and its barrier is satisfied."""
        sweep = self.supervisor.index.sweeps.get(action.sweep_id)
        if sweep is None:
            return
        append_records(self.paths.runs_log, [replace(sweep, status="done")])
        if action.barrier is not None:
            update_text(
                self.paths.barriers,
                lambda text: _satisfied(text, action.barrier or "", iso(now)),
                self.paths.lock,
            )
        self.events.append("sweep-done", sweep=action.sweep_id, barrier=action.barrier)


def _satisfied(text: str, barrier_id: str, at: str) -> str:
    """The barrier set satisfied, if it is still there (a human may have deleted it)."""
    doc = barriers_md.parse(text)
    if barriers_md.find(doc, barrier_id) is None:
        return text
    return barriers_md.set_status(text, barrier_id, "satisfied", at=at)


def run_settings(paths: WildPaths, options: LoopOptions) -> dict[str, Any]:
    """LoopRuns' keyword arguments from the loop's options.

    The tag names this project's jobs for a backend (Slurm job names): derived from the
    folder, so a restarted loop finds the jobs its predecessor submitted.
    """
    folder = os.path.realpath(paths.root)
    tag = "wild-" + sha256_hex(folder.encode())[:10]
    settings = settings_from_env(os.environ)
    if options.run_slots:
        settings["run_slots"] = str(options.run_slots)
    return {"tag": tag, "settings": settings, "run_backend": options.run_backend}


SETTINGS_ENV = "WILD_BACKEND_"
DEFAULT_POLL_S = 30.0


def poll_cycle_s(environ: Mapping[str, str]) -> float:
    """The runs' status cycle: `slurm_poll_s` if set (a positive number of seconds), else 30."""
    text = settings_from_env(environ).get("slurm_poll_s")
    try:
        value = float(text) if text is not None else DEFAULT_POLL_S
    except ValueError:
        raise WildError(f"{SETTINGS_ENV}SLURM_POLL_S={text!r}: give a number of seconds") from None
    if not 1.0 <= value <= 86400.0:
        raise WildError(f"{SETTINGS_ENV}SLURM_POLL_S={text!r}: give 1 to 86400 seconds")
    return value


def settings_from_env(environ: Mapping[str, str]) -> dict[str, str]:
    """Backend settings from `WILD_BACKEND_<SETTING>` variables: `WILD_BACKEND_SLURM_PARTITION=gpu`
    is the setting `slurm_partition` (docs/slurm.md lists the Slurm backend's)."""
    return {
        key[len(SETTINGS_ENV) :].lower(): value
        for key, value in environ.items()
        if key.startswith(SETTINGS_ENV) and len(key) > len(SETTINGS_ENV)
    }
