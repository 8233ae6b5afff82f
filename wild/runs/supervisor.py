"""The run supervisor: the thin driver the loop calls to start, watch, stop and rerun runs.

`step()` does one pass: attempts a crashed loop started but never recorded are adopted (or
marked lost, or given back when they surely never started), every active run is polled (one
call per backend) and the ended ones get their terminal lines with exit code, reason and last
metrics (one append for the step's, one for their events), then each backend admits queued
runs into its free slots and they are started: their claims made durable together first (a
group commit), then asked of the backend together (`submit_all` where it has one), their
`running` lines and events written with one append each. Every scheduling decision is an
event in events.log. The decisions themselves are wild.runs.decide; the open runs are
wild.runs.open_runs, kept current so a step costs what it starts and ends, not the sweep's
size.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from typing import Any

from wild.clock import Clock, iso_ms
from wild.errors import WildError
from wild.liveness import boot_id
from wild.metrics.follow import run_summary
from wild.parsers.metric_summary import json_number
from wild.parsers.runs import RunIndex, RunRecord
from wild.paths import WildPaths
from wild.record import record
from wild.runs import attempts, decide, markers, retry, signing
from wild.runs.backend import AdoptionDeferred, RunBackend, Submitted
from wild.runs.open_runs import OpenRuns
from wild.store.events_log import EventLog
from wild.store.runs_log import RunLog, append_records

PREPARED_AHEAD = 16  # queued runs whose folders a step that started runs makes ahead
PARKED_AHEAD = 1  # queued runs a backend that can park is told of ahead (`_park`)


@record
class StepResult:
    """What one step changed: runs started, and runs that became terminal (with their lines)."""

    started: tuple[RunRecord, ...] = ()
    ended: tuple[RunRecord, ...] = ()
    problems: tuple[str, ...] = ()
    held: tuple[RunRecord, ...] = ()  # queued, waiting for a human to approve their program

    @property
    def failed(self) -> tuple[RunRecord, ...]:
        """The ended runs to raise alerts for."""
        return tuple(run for run in self.ended if run.status == "failed")


class RunSupervisor:
    """Starts and watches the runs of runs.jsonl through their backends."""

    def __init__(
        self,
        paths: WildPaths,
        backends: Mapping[str, RunBackend],
        clock: Clock,
        events: EventLog,
        *,
        command_gate: Callable[[], Callable[[str], bool]],
        base_env: Mapping[str, str] | None = None,
    ) -> None:
        """`command_gate` gives, at each step, the command gate in force (wild.barriers'
        `gate`: the policy and this project's approvals) that each sweep's program passes."""
        self.paths = paths
        self.command_gate = command_gate
        self.backends = backends
        self.clock = clock
        self.events = events
        self._open = OpenRuns()
        # Lean: only the running runs' records are held, the others read again when needed
        # (the loop's memory flat with the sweep's size); the open runs follow each line.
        self.log = RunLog(paths.runs_log, lean=True, listener=self._open)
        self._base_env = dict(os.environ if base_env is None else base_env)
        self._last_queue: tuple[int, int] | None = None
        # Queued runs whose claim may already be taken: all of them at the first step (a
        # previous loop may have died mid-start), later only those found claimed by another.
        self._unclaimed_unsure: set[str] | None = None
        self._signed_key: bytes | None = None
        self._signed_lines: dict[str, tuple[RunRecord, bool]] = {}

    @property
    def index(self) -> RunIndex:
        self.log.refresh()  # brings `_open` up to date too
        return self.log.index

    def busy(self) -> bool:
        """Whether any run is queued or running (the loop then waits for marker events)."""
        _ = self.index  # brings `_open` up to date
        return bool(self._open)

    def running_count(self) -> int:
        _ = self.index
        return len(self._open.running)

    def open_sweeps(self) -> set[str]:
        """The sweeps with a run queued or running."""
        return {sweep for sweep, _program in self._open.programs} | {
            run.sweep for run in self._running()
        }

    def open_runs(self) -> list[RunRecord]:
        """The runs queued or running, running ones first, then the queue in its order."""
        runs = self.index.runs
        return [runs[run_id] for run_id in [*self._open.running, *self._open.queued_ids()]]

    def step(self) -> StepResult:
        problems: list[str] = []
        ended = self._adopt(problems)
        ended += self._settle(problems)
        started, refused, held = self._start(problems)
        return StepResult(tuple(started), tuple(ended + refused), tuple(problems), tuple(held))

    def stop(self, run_id: str, reason: str = "stopped by the human") -> bool:
        """Stop a queued or running run; False when it is unknown or already over."""
        run = self.index.runs.get(run_id)
        if run is None or run.terminal:
            return False
        if run.status == "running":
            backend = self.backends.get(run.backend)
            if backend is None:
                raise WildError(f'run {run_id}: its backend "{run.backend}" is not available')
            self._append(decide.stopping(run, reason))
            backend.cancel(run)  # the marker that follows ends it as stopped
        else:
            self._append(decide.stopped_waiting(run, reason, self._now()))
        self.events.append("run-stop", run=run_id, status=run.status, reason=reason)
        return True

    def rerun(self, run_id: str) -> RunRecord:
        """Queue a new attempt of an ended run: the last attempt's files go to attempt-<n>/."""
        run = self.index.runs.get(run_id)
        if run is None:
            raise WildError(f"no run {run_id} in {self.paths.runs_log}; see `wild --runs`")
        if not run.terminal:
            raise WildError(f"run {run_id} is {run.status}; stop it first, then rerun it")
        refusal = retry.rerun_refusal(run, self.index.sweeps.get(run.sweep))
        if refusal is not None:
            raise WildError(refusal)
        key = signing.load_key()
        if not signing.written_by_wild(key, run):
            # Signing its next attempt would launder a line someone else wrote.
            raise WildError(
                f"run {run_id}: its line in {self.paths.runs_log} was not written by wild, so "
                "it is not run again; start a sweep instead (`wild --sweep FILE`)"
            )
        attempts.archive(self.paths.run_dir(run_id), run.attempt)
        again = signing.sign(key, decide.requeued(run, self._now()))
        self._append(again)
        self.events.append("run-rerun", run=run_id, attempt=again.attempt)
        return again

    # -- the step's phases -----------------------------------------------------------------

    def _adopt(self, problems: list[str]) -> list[RunRecord]:
        """Queued attempts already claimed: a loop died between starting one and its line."""
        ended: list[RunRecord] = []
        next_step: set[str] = set()  # to look at again next step
        unsure, self._unclaimed_unsure = self._unclaimed_unsure, next_step
        runs = self.index.runs
        # After the first step only our own claims exist, each with its line: no scan.
        ids = (
            self._open.queued_ids() if unsure is None else sorted(unsure & self._open.queued.keys())
        )
        for run_id in ids:
            # One record at a time: the first step looks at every queued run, and the lean
            # index reads each from its line.
            run = runs.get(run_id)
            if run is None:
                continue
            run_dir = self.paths.run_dir(run.id)
            if not attempts.claimed(run_dir, run.attempt):
                continue
            try:
                found = self._find(run, problems)
            except AdoptionDeferred as deferred:
                # Its backend cannot tell yet whether it started: kept claimed (so never
                # started again) and looked at again next step.
                if str(deferred):
                    problems.append(str(deferred))
                next_step.add(run.id)
                continue
            if found is None and self._never_started(run):
                # Claimed in a group commit, then the loop died before starting it: it
                # stays queued and starts as any other (its claim is given back).
                attempts.unclaim(run_dir, run.attempt)
                self.events.append("run-unclaimed", run=run.id, attempt=run.attempt)
                continue
            if found is None:
                lost = decide.lost_before_recorded(run, self._now())
                self._append(lost)
                self.events.append("run-lost", run=run.id, attempt=run.attempt, reason=lost.reason)
                ended.append(lost)
                continue
            self._append(decide.started(run, found, self._now()))
            self.events.append("run-adopted", run=run.id, attempt=run.attempt, job=found.job_id)
        return ended

    def _find(self, run: RunRecord, problems: list[str]) -> Submitted | None:
        backend = self.backends.get(run.backend)
        adopt = getattr(backend, "adopt", None)
        if callable(adopt):
            try:
                found: Submitted | None = adopt(run)
            except AdoptionDeferred:
                raise
            except (WildError, OSError) as error:
                problems.append(str(error))
                return None
            return found
        # A backend that cannot look for it: only its marker tells that it ran.
        if markers.read_marker(self.paths.run_dir(run.id)).present:
            return Submitted("", None)
        return None

    def _never_started(self, run: RunRecord) -> bool:
        """Whether the claimed attempt surely never started: claimed in this boot (so no
        write was lost) and its backend finds no trace of it (`never_started`; a backend
        without one cannot tell, and the attempt is lost rather than run twice)."""
        this_boot = boot_id()
        claimed = attempts.claimed_in_boot(self.paths.run_dir(run.id), run.attempt)
        if this_boot is None or claimed != this_boot:
            return False
        check = getattr(self.backends.get(run.backend), "never_started", None)
        return bool(check(run)) if callable(check) else False

    def _settle(self, problems: list[str]) -> list[RunRecord]:
        ended: list[RunRecord] = []
        for name, runs in decide.by_backend(self._running()).items():
            backend = self.backends.get(name)
            if backend is None:
                continue  # its backend is not loaded: nothing can be known of it here
            try:
                seen = backend.poll(runs)
            except (WildError, OSError) as error:
                problems.append(str(error))
                continue
            for run in runs:
                observed = seen.get(run.id)
                if observed is None or observed.liveness in ("running", "unknown"):
                    continue
                marker = markers.read_marker(self.paths.run_dir(run.id))
                done = decide.settled(run, observed, marker, self._last_metrics(run), self._now())
                if done is not None:
                    ended.append(done)
        if ended:  # one append for the step's terminal lines, one for their events
            append_records(self.log.path, ended)
            self.events.append_all(
                [
                    (
                        "run-ended",
                        {
                            "run": done.id,
                            "attempt": done.attempt,
                            "status": done.status,
                            "exit_code": done.exit_code,
                            "reason": done.reason,
                        },
                    )
                    for done in ended
                ]
            )
        return ended

    def _start(
        self, problems: list[str]
    ) -> tuple[list[RunRecord], list[RunRecord], tuple[RunRecord, ...]]:
        """Start what the backends admit. The queue is looked at lazily, in order, only as
        far as a backend takes runs from it (a full pool takes one look), so a step costs
        what it starts, not the queue's length."""
        started: list[RunRecord] = []
        refused: list[RunRecord] = []
        index = self.index
        if not self._open.queued:
            for loaded in self.backends.values():
                self._park(loaded, iter(()), set())  # nothing left to park a wrapper for
            return started, refused, ()
        try:
            key = signing.load_key()
        except (WildError, OSError) as error:
            problems.append(f"queued runs wait: {error}")
            return started, refused, ()
        may_run, signed = _once_each(self.command_gate()), self._signed(key)
        held = self._held(index, may_run, signed)
        ready: dict[str, bool] = {}  # this step's verdicts: may start now

        def queue_of(name: str, skip: Container[str] = ()) -> Iterator[RunRecord]:
            """Backend `name`'s queued runs that may start, in order, but those in `skip`
            (passed over before their line is read: the lean index parses it again for each
            look); a line wild did not write is refused as it is met."""
            for run_id in self._open.queued_ids():
                if run_id in skip:
                    continue
                run = index.runs[run_id]
                if run.backend != name:
                    continue
                if run_id not in ready:
                    ready[run_id] = signed(run) and may_run(signing.command_to_approve(run))
                    if not signed(run):
                        refused.append(self._refuse(run, decide.NOT_QUEUED_BY_WILD, prefix=False))
                if ready[run_id]:
                    yield run

        running = decide.by_backend(self._running())
        for name, count in list(self._open.backends.items()):
            backend = self.backends.get(name)
            if backend is None:
                for run in list(queue_of(name)):
                    message = f'no run backend "{name}" is loaded; install or name another'
                    refused.append(self._refuse(run, message))
                continue
            active = running.get(name, [])
            try:
                admitted = backend.admit(queue_of(name), active)
            except (WildError, OSError) as error:
                problems.append(str(error))
                continue
            self._log_queue(name, backend, count, admitted, active)
            begun, failed = self._submit_all(backend, self._claim_all(admitted))
            started += begun
            refused += failed
            taken = {run.id for run in admitted}
            self._park(backend, queue_of(name, taken), taken)
        if started:  # the next runs' folders, made now rather than when a slot frees
            head = itertools.islice(self._open.queued_ids(), PREPARED_AHEAD)
            attempts.prepare([self.paths.run_dir(run_id) for run_id in head])
        return started, refused, held

    def _park(self, backend: RunBackend, ready: Iterator[RunRecord], taken: set[str]) -> None:
        """Tell a backend that can (`park`) which ready runs come next, so it has what starts
        them ready before a slot frees (the local backend: its wrapper launcher, while any
        run is queued; wild.runs.launcher)."""
        park = getattr(backend, "park", None)
        if not callable(park):
            return
        heads = itertools.islice((run for run in ready if run.id not in taken), PARKED_AHEAD)
        root = str(self.paths.root)
        park(
            [
                (run, decide.run_env(run, root, str(self.paths.run_dir(run.id)), self._base_env))
                for run in heads
            ]
        )

    def _running(self) -> list[RunRecord]:
        runs = self.index.runs
        return [runs[run_id] for run_id in self._open.running]

    def _held(
        self, index: RunIndex, may_run: Callable[[str], bool], signed: Callable[[RunRecord], bool]
    ) -> tuple[RunRecord, ...]:
        """One queued run wild wrote for each sweep and program the command gate does not
        let run yet (what the approval alert names), asked once per program."""
        held = []
        for (_sweep, command), ids in self._open.programs.items():
            if may_run(command):
                continue
            first = next((index.runs[i] for i in ids if signed(index.runs[i])), None)
            if first is not None:
                held.append(first)
        return tuple(held)

    def _signed(self, key: bytes) -> Callable[[RunRecord], bool]:
        """`signing.written_by_wild` under `key`, each line checked once: a queued run is
        looked at by every step until it starts, and an HMAC per run per step made a sweep's
        steps grow with its size."""
        if self._signed_key != key:
            self._signed_key, self._signed_lines = key, {}
        known = self._signed_lines

        def signed(run: RunRecord) -> bool:
            seen = known.get(run.id)
            # A new line for the run: check it again (the lean index reads a queued run's
            # line afresh each time, the same line as a new record: compared by content).
            if seen is None or (seen[0] is not run and _line_of(seen[0]) != _line_of(run)):
                seen = known[run.id] = (run, signing.written_by_wild(key, run))
            return seen[1]

        return signed

    def _claim_all(self, admitted: Sequence[RunRecord]) -> list[RunRecord]:
        """The admitted runs whose claim this loop took, all made durable at once (one group
        commit per step, wild.runs.attempts.claim_all) before any of them starts."""
        text = attempts.claim_text(self._now(), os.getpid(), boot_id())
        claims = [(self.paths.run_dir(run.id), run.attempt, text) for run in admitted]
        mine = []
        for run, taken in zip(admitted, attempts.claim_all(claims), strict=True):
            if taken:
                mine.append(run)
            elif self._unclaimed_unsure is not None:
                self._unclaimed_unsure.add(run.id)  # claimed by someone else: adopt it next
        return mine

    def _submit_all(
        self, backend: RunBackend, claimed: Sequence[RunRecord]
    ) -> tuple[list[RunRecord], list[RunRecord]]:
        """Start each claimed run; their `running` lines are appended with one write, and
        their events with another (a crash before that write leaves claims: adopted)."""
        begun: list[RunRecord] = []
        refused: list[RunRecord] = []
        events: list[tuple[str, dict[str, Any]]] = []
        root = str(self.paths.root)
        envs = []
        for run in claimed:
            self._signed_lines.pop(run.id, None)  # its queued line is not looked at again
            envs.append(decide.run_env(run, root, str(self.paths.run_dir(run.id)), self._base_env))
        for run, submitted in zip(claimed, _submit_each(backend, claimed, envs), strict=True):
            if not isinstance(submitted, Submitted):
                refused.append(self._refuse(run, str(submitted)))
                continue
            begun.append(decide.started(run, submitted, self._now()))
            events.append(
                (
                    "run-started",
                    {
                        "run": run.id,
                        "attempt": run.attempt,
                        "backend": run.backend,
                        "job": submitted.job_id,
                        "host": submitted.host,
                        "allocation": dict(submitted.fields),
                    },
                )
            )
        if begun:
            append_records(self.log.path, begun)
            self.events.append_all(events)
        return begun, refused

    def _refuse(self, run: RunRecord, message: str, *, prefix: bool = True) -> RunRecord:
        self._signed_lines.pop(run.id, None)
        failed = decide.refused(run, message, self._now(), prefix=prefix)
        self._append(failed)
        self.events.append("run-refused", run=run.id, attempt=run.attempt, reason=failed.reason)
        return failed

    def _log_queue(
        self,
        name: str,
        backend: RunBackend,
        queued: int,
        admitted: Sequence[RunRecord],
        active: Sequence[RunRecord],
    ) -> None:
        """A `run-queue` event when something was admitted or the queue changed size."""
        key = (queued, len(admitted))
        if not admitted and key == self._last_queue:
            return
        self._last_queue = key
        describe = getattr(backend, "describe", None)
        pool: dict[str, Any] = describe(active) if callable(describe) else {}
        self.events.append(
            "run-queue",
            backend=name,
            queued=queued,
            running=len(active),
            admitted=[run.id for run in admitted],
            waiting=queued - len(admitted),
            pool=pool,
        )

    def _last_metrics(self, run: RunRecord) -> dict[str, float | str] | None:
        """Every metric's last value as the run's line records it, and the furthest step
        (None: it wrote none)."""
        sweep = self.index.sweeps.get(run.sweep)
        summary = run_summary(self.paths, run, sweep.spec if sweep is not None else None)
        found = {key: json_number(value) for key, value in summary.last.items()}
        if summary.step is not None:  # the furthest step it logged, as its last line had it
            found = {
                "step": int(summary.step) if summary.step.is_integer() else summary.step,
                **found,
            }
        return found or None

    def _append(self, run: RunRecord) -> None:
        append_records(self.log.path, [run])

    def _now(self) -> str:
        return iso_ms(self.clock.now())


def _submit_each(
    backend: RunBackend, runs: Sequence[RunRecord], envs: Sequence[Mapping[str, str]]
) -> list[Submitted | WildError | OSError]:
    """What started each run, or why it could not start: through the backend's `submit_all`
    where it has one (all asked at once: the local backend's launcher answers a step's starts
    in one round trip), else `submit` one by one."""
    submit_all = getattr(backend, "submit_all", None)
    if callable(submit_all) and runs:
        results: list[Submitted | WildError | OSError] = submit_all(
            list(zip(runs, envs, strict=True))
        )
        return results
    results = []
    for run, env in zip(runs, envs, strict=True):
        try:
            results.append(backend.submit(run, env))
        except (WildError, OSError) as error:
            results.append(error)
    return results


def _line_of(run: RunRecord) -> tuple[int, Mapping[str, Any]]:
    return run.line, run.raw


def _once_each(may_run: Callable[[str], bool]) -> Callable[[str], bool]:
    """The command gate, asked once per distinct command in a step (every run of a sweep asks
    about the same program)."""
    answers: dict[str, bool] = {}

    def gate(command: str) -> bool:
        if command not in answers:
            answers[command] = may_run(command)
        return answers[command]

    return gate
