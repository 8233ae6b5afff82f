"""The background barrier checker: runs due checks, writes results into barriers.md, wakes the loop.

It sleeps on one `threading.Event` exactly until the next barrier is due (no polling tick);
`poke()` wakes it early when barriers.md changed. Checks run with bounded concurrency, each
through the pure `check_once`; results go back as minimal edits under the store's
compare-and-swap, and only if the barrier still is what was checked.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path

from wild.barriers.approval_set import Approvals, command_hash
from wild.barriers.approvals import UNAPPROVED_TYPE, command_of, load_approvals
from wild.barriers.checks import CheckResult, check_once
from wild.barriers.command_gate import may_run
from wild.clock import Clock, SystemClock, iso, later, parse_time
from wild.errors import WildError, describe_os_error
from wild.parsers import alerts
from wild.parsers.barriers import CHECKABLE_TYPES, Barrier, find, parse, record_check
from wild.paths import WildPaths
from wild.record import record
from wild.store.alerts_log import append_alert, read_new
from wild.store.files import read_text, update_text

log = logging.getLogger(__name__)

# A `0s` interval must not turn the thread into a busy loop.
MIN_INTERVAL_S = 1.0
# After an unexpected failure of a whole pass, wait this long (or for a poke) before retrying.
ERROR_RETRY_S = 30.0

Wake = Callable[[str], None]
OnWritten = Callable[[Path, bytes], None]


def _identity(barrier: Barrier) -> tuple[object, ...]:
    """What a check result is about: if a human changed any of it meanwhile, the result is stale."""
    return (
        barrier.status,
        barrier.type,
        barrier.check,
        barrier.expect,
        barrier.file,
        barrier.target,
    )


@record
class _BarrierCheck:
    """One barrier checked in a pass, or refused for want of approval."""

    barrier: Barrier
    result: CheckResult
    unapproved_command: str | None  # set when the command was refused for want of approval


class BarrierChecker:
    """Checks due barriers of one `.wild/` folder, from a background thread or on demand."""

    def __init__(
        self,
        paths: WildPaths,
        *,
        clock: Clock | None = None,
        wake: Wake,
        max_concurrency: int = 4,
        require_approval: Callable[[], bool],
        on_written: OnWritten | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self._paths = paths
        self._clock: Clock = clock or SystemClock()
        self._wake = wake
        self._max_concurrency = max(1, max_concurrency)
        self._require_approval = require_approval
        self._on_written = on_written
        self._env = dict(env or {})
        # When we last checked each barrier, so a result we could not write (or a duplicate
        # id) cannot make a barrier look due forever and spin the thread.
        self._attempted: dict[str, datetime] = {}
        # (barrier id, command hash) pairs already raised as unapproved-command alerts.
        self._alerted: set[tuple[str, str]] = set()
        self._pass_lock = threading.Lock()
        self._poked = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.passes = 0  # completed run_pass calls; lets tests see that idle means idle
        # The last barriers.md text read and its barriers: each wake-up reads the file twice
        # (before and after a pass), and most passes change nothing.
        self._read: tuple[str, tuple[Barrier, ...]] = ("", ())

    # -- scheduling --------------------------------------------------------------------

    def _seconds_until_due(self, barrier: Barrier, now: datetime) -> float | None:
        if barrier.status != "waiting" or barrier.type not in CHECKABLE_TYPES:
            return None
        last = parse_time(barrier.last_check)
        attempted = self._attempted.get(barrier.id)
        if attempted is not None and (last is None or attempted > last):
            last = attempted
        if last is None or last > now:  # never checked, or a timestamp from the future
            return 0.0
        interval = timedelta(seconds=max(barrier.interval_s, MIN_INTERVAL_S))
        return max(0.0, (later(last, interval) - now).total_seconds())

    def due(self, barriers: Iterable[Barrier], now: datetime) -> list[Barrier]:
        """Waiting, checkable barriers whose last check is at least `Interval:` old."""
        return [b for b in barriers if self._seconds_until_due(b, now) == 0.0]

    def next_due_in(self, barriers: Iterable[Barrier], now: datetime) -> float | None:
        """Seconds until the next barrier is due (0 if one is due); None when none will ever be."""
        waits = [w for b in barriers if (w := self._seconds_until_due(b, now)) is not None]
        return min(waits) if waits else None

    # -- checking ----------------------------------------------------------------------

    def run_pass(self) -> list[tuple[str, CheckResult]]:
        """Check every due barrier once and record the results."""
        with self._pass_lock:
            due = self.due(self._barriers(), self._clock.now())
            results = self._check(due) if due else []
            self.passes += 1
            return results

    def _barriers(self) -> tuple[Barrier, ...]:
        """The barriers in barriers.md now, parsed again only when its text changed."""
        text = read_text(self._paths.barriers)
        if text != self._read[0]:
            self._read = (text, parse(text, file=str(self._paths.barriers)).barriers)
        return self._read[1]

    def check_now(self, barriers: Sequence[Barrier]) -> list[tuple[str, CheckResult]]:
        """Check `barriers` regardless of their interval (for `wild --check-barriers`)."""
        with self._pass_lock:
            return self._check(barriers)

    def _check(self, barriers: Sequence[Barrier]) -> list[tuple[str, CheckResult]]:
        project = self._paths.project
        approvals = load_approvals(project)
        require = self._require_approval()

        def one(barrier: Barrier) -> _BarrierCheck:
            result = check_once(
                barrier,
                project_dir=project,
                approvals=approvals,
                require_approval=require,
                env=self._env,
                cancel=self._stopping,  # stop() kills a check in flight rather than wait for it
            )
            return _BarrierCheck(barrier, result, _refused_command(barrier, approvals, require))

        with ThreadPoolExecutor(self._max_concurrency, thread_name_prefix="wild-check") as pool:
            outcomes = list(pool.map(one, barriers))
        now = self._clock.now()
        for outcome in outcomes:
            self._attempted[outcome.barrier.id] = now
        satisfied = self._record(outcomes, iso(now))
        self._alert_unapproved(outcomes)
        for barrier_id in satisfied:
            self._wake(barrier_id)
        return [(o.barrier.id, o.result) for o in outcomes]

    def _record(self, outcomes: Sequence[_BarrierCheck], at: str) -> list[str]:
        """Write `Last check:`/`Result:` (and satisfaction) in one edit; returns ids satisfied."""
        # Webhook and manual barriers only report; there is nothing to write for them.
        worth_writing = [o for o in outcomes if o.result.ran or o.result.error is not None]
        if not worth_writing:
            return []
        satisfied: list[str] = []

        def edit(text: str) -> str:
            satisfied.clear()  # the store may re-apply us to a newer text
            doc = parse(text, file=str(self._paths.barriers))
            for outcome in worth_writing:
                current = find(doc, outcome.barrier.id)
                if current is None or _identity(current) != _identity(outcome.barrier):
                    continue  # removed or edited since we read it: the result is stale
                done = outcome.result.satisfied
                text = record_check(
                    text,
                    outcome.barrier.id,
                    checked_at=at,
                    result=outcome.result.status_text,
                    status="satisfied" if done else None,
                    satisfied_at=at if done else None,
                )
                if done:
                    satisfied.append(outcome.barrier.id)
            return text

        on_written = self._on_written
        barriers_path = self._paths.barriers
        update_text(
            barriers_path,
            edit,
            self._paths.lock,
            on_written=None
            if on_written is None
            else (lambda data: on_written(barriers_path, data)),
        )
        return list(satisfied)

    def _alert_unapproved(self, outcomes: Sequence[_BarrierCheck]) -> None:
        """One warning per barrier per command hash, not one per interval (nor per restart)."""
        fresh = []
        for outcome in outcomes:
            command = outcome.unapproved_command
            if command is None:
                continue
            key = (outcome.barrier.id, command_hash(command))
            if key not in self._alerted:
                fresh.append((key, command))
        if not fresh:
            return
        raised = _raised_unapproved(self._paths.alerts)
        for key, command in fresh:
            self._alerted.add(key)
            if key in raised:
                continue
            barrier_id, digest = key
            record = alerts.make_alert(
                severity="warning",
                source="wild",
                type=UNAPPROVED_TYPE,
                description=(
                    f"Barrier {barrier_id} wants to run a command no human has approved, so it "
                    f"was not run; read it in barriers.md and run `wild --approve {barrier_id}`"
                ),
                context={"barrier": barrier_id, "command": command, "commandHash": digest},
                now=self._clock.now(),
            )
            append_alert(self._paths.alerts, record)

    # -- background thread -------------------------------------------------------------

    def start(self) -> None:
        """Start the background thread (once)."""
        if self._thread is not None:
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="wild-barrier-checker", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """barriers.md changed (or an approval was given): re-read it and re-plan now."""
        self._poked.set()

    def stop(self, timeout: float | None = None) -> None:
        """Stop the thread, killing any check in flight (its result is not recorded)."""
        self._stopping.set()
        self._poked.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        while not self._stopping.is_set():
            # Cleared before the pass, so a poke that lands during it is not lost.
            self._poked.clear()
            delay: float | None
            try:
                self.run_pass()
                delay = self.next_due_in(self._barriers(), self._clock.now())
            except (OSError, WildError) as error:  # a full disk, a file wild may not write
                what = describe_os_error(error) if isinstance(error, OSError) else str(error)
                log.warning("barrier checks failed: %s; retrying in %.0fs", what, ERROR_RETRY_S)
                delay = ERROR_RETRY_S
            except Exception:  # a bug: the thread must outlive it, and its traceback helps
                log.exception("barrier check pass failed; retrying in %.0fs", ERROR_RETRY_S)
                delay = ERROR_RETRY_S
            if self._stopping.is_set():
                break
            self._poked.wait(timeout=delay)


def load_barriers(paths: WildPaths) -> tuple[Barrier, ...]:
    """The barriers in barriers.md now (a missing file has none)."""
    return parse(read_text(paths.barriers), file=str(paths.barriers)).barriers


def _refused_command(barrier: Barrier, approvals: Approvals, require: bool) -> str | None:
    command = command_of(barrier)
    if command is None or may_run(command, approval_required=require, approvals=approvals):
        return None
    return command


def open_unapproved_alerts(alerts_path: Path) -> dict[tuple[str, str], list[alerts.Alert]]:
    """The unapproved-command alerts still open in alerts.jsonl, by (barrier, command hash)."""
    index = alerts.AlertIndex(read_new(alerts_path, None).entries)
    found: dict[tuple[str, str], list[alerts.Alert]] = {}
    for alert in index.active():
        if alert.type != UNAPPROVED_TYPE:
            continue
        barrier_id, digest = alert.context.get("barrier"), alert.context.get("commandHash")
        if isinstance(barrier_id, str) and isinstance(digest, str):
            found.setdefault((barrier_id, digest), []).append(alert)
    return found


def _raised_unapproved(alerts_path: Path) -> set[tuple[str, str]]:
    return set(open_unapproved_alerts(alerts_path))


def check_all_now(
    paths: WildPaths,
    *,
    require_approval: bool,
    clock: Clock | None = None,
    wake: Wake | None = None,
    on_written: OnWritten | None = None,
    env: dict[str, str] | None = None,
    max_concurrency: int = 4,
) -> list[tuple[str, CheckResult]]:
    """`wild --check-barriers`: every waiting barrier once, whatever its interval; results kept."""
    checker = BarrierChecker(
        paths,
        clock=clock,
        wake=wake or (lambda _barrier_id: None),
        max_concurrency=max_concurrency,
        require_approval=lambda: require_approval,
        on_written=on_written,
        env=env,
    )
    waiting = [b for b in load_barriers(paths) if b.status == "waiting"]
    return checker.check_now(waiting)
