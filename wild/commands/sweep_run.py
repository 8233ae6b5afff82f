"""`wild --sweep FILE --run` and `wild --run-sweeps`: sweeps run to the end with no agent, as
a Hydra launcher or submitit would run them.

The loop's own run machinery does the work (wild.loop.runs_effect.LoopRuns: the supervisor,
the backends, the approval gate and its alert), under the loop's lock, so a loop and a
runner never drive the same runs. A runner killed (even by SIGKILL) leaves its runs going;
the next `wild --run-sweeps` adopts them, and no run starts twice. It sleeps on file events:
each run's exit marker wakes it (wild.wake), with the loop's slow poll as the safety net.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from wild.clock import Clock
from wild.errors import WildError
from wild.output import plural
from wild.parsers.runs import RunIndex, RunRecord
from wild.paths import WildPaths
from wild.record import record

if TYPE_CHECKING:
    from wild.loop.runs_effect import LoopRuns
    from wild.runs.supervisor import RunSupervisor
    from wild.wake import FolderWatcher

PROGRESS_EVERY_S = 0.5  # the progress line's refresh, at most


@record
class Terminal:
    """Where the runner talks: plain lines, redrawn status lines, and a yes/no question
    (None: no terminal to ask on)."""

    out: Callable[[str], None]
    status: Callable[[str], None]
    ask: Callable[[str], bool] | None


def ask_on_terminal(question: str) -> bool:
    """A yes/no question on the terminal; anything but y/yes is no."""
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def terminal(out: Callable[[str], None]) -> Terminal:
    """The process's terminal: status lines redrawn in place on a TTY, questions only when
    both ends are a terminal."""
    from wild.output import Console  # noqa: PLC0415

    console = Console(out, sys.stdout, tty=sys.stdout.isatty())
    asks = sys.stdin.isatty() and sys.stdout.isatty()
    return Terminal(console, console.status, ask_on_terminal if asks else None)


def run_sweeps(
    paths: WildPaths,
    clock: Clock,
    term: Terminal,
    *,
    sweeps: Iterable[str] = (),
    run_slots: int | None = None,
) -> None:
    """Run every queued run to the end (and adopt the running ones); then the comparison
    table of each sweep that had runs open. A WildError when a sweep's runs wait for an
    approval no one gave, or when runs failed."""
    from wild.commands.runs_cmds import approval_required  # noqa: PLC0415
    from wild.loop.model import LoopOptions  # noqa: PLC0415
    from wild.loop.runs_effect import LoopRuns, poll_cycle_s, run_settings  # noqa: PLC0415
    from wild.store.events_log import EventLog  # noqa: PLC0415
    from wild.store.loop_lock import running_loop, take_loop_lock  # noqa: PLC0415
    from wild.store.self_writes import SelfWrites  # noqa: PLC0415
    from wild.wake import FolderWatcher, Waker, install_signal_handlers  # noqa: PLC0415

    poll_s = poll_cycle_s(os.environ)
    with take_loop_lock(paths.root, lambda: running_loop(paths.state)):
        runs = LoopRuns(
            paths,
            clock,
            EventLog(paths.events, clock),
            approval_required=lambda: approval_required(paths, clock.now()),
            **run_settings(paths, LoopOptions("", run_slots=run_slots)),
        )
        seen = set(sweeps)
        shown: dict[str, str] = {}
        said_at = -PROGRESS_EVERY_S
        told: set[str] = set()
        waker, interrupted = Waker(), threading.Event()
        # Ctrl-C (or SIGTERM) only sets `interrupted` and wakes the wait: never a
        # KeyboardInterrupt in the middle of a supervisor step's writes.
        restore = install_signal_handlers(waker, interrupted)
        try:
            with FolderWatcher(paths.root, waker, SelfWrites(), watch_runs=True) as watcher:
                while not interrupted.is_set():
                    result = runs.supervise()
                    for problem in result.problems:
                        if problem not in told:  # once each, as the loop alerts once
                            told.add(problem)
                            term.out(f"⚠️  {problem}")
                    supervisor = runs.supervisor
                    seen.update(supervisor.open_sweeps())
                    going = supervisor.busy()
                    # A progress line reads every run of its sweep: said at most every
                    # PROGRESS_EVERY_S (and at the end), not at each of 10,000 runs' ends.
                    wait_s = poll_s
                    since = time.monotonic() - said_at
                    if not going or since >= PROGRESS_EVERY_S:
                        said_at = time.monotonic()
                        _progress(supervisor.index, seen, shown, clock, term)
                    else:
                        wait_s = min(poll_s, PROGRESS_EVERY_S - since)  # then say it
                    if not going:
                        break
                    if not supervisor.running_count():
                        _refuse_held(paths, clock, supervisor.open_runs())
                    _wait(watcher, runs, wait_s, interrupted)
        finally:
            restore()
        if interrupted.is_set():
            _interrupted(runs.supervisor, term)
            raise KeyboardInterrupt
        if not seen:
            term.out(f"{paths.runs_log}: no run is queued or running; nothing to run")
            return
        _finish(paths, runs.supervisor.index, sorted(seen), term)


def _wait(watcher: FolderWatcher, runs: LoopRuns, poll_s: float, woke: threading.Event) -> None:
    """Until a file event or the runs' poll cycle; meanwhile, while a sweep with early
    stopping has runs going, its rule looks at their new metric lines every CHECK_S (only
    the metrics: the backends are polled at their own cycle)."""
    from wild.runs.early_stopping import CHECK_S  # noqa: PLC0415
    from wild.wake import TIMEOUT  # noqa: PLC0415

    deadline = time.monotonic() + poll_s
    while not woke.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return
        watching = runs.early_stopping.watching(runs.supervisor.index)
        reasons = watcher.wait_for_work(min(left, CHECK_S) if watching else left)
        if reasons != [TIMEOUT] or not watching or runs.stop_early():
            return


def _progress(
    index: RunIndex, sweeps: set[str], shown: dict[str, str], clock: Clock, term: Terminal
) -> None:
    """Each sweep's progress line, when it changed since it was last said."""
    from wild.loop.research_step import sweep_progress  # noqa: PLC0415

    for sweep_id in sorted(sweeps & index.sweeps.keys()):
        line = sweep_progress(index, sweep_id, clock.now())
        if shown.get(sweep_id) != line:  # said when it changes, not each wake
            shown[sweep_id] = line
            term.status(line)


def _refuse_held(paths: WildPaths, clock: Clock, open_runs: Sequence[RunRecord]) -> None:
    """With nothing running and every open run held by the approval gate, waiting would be
    forever: say which sweeps wait and how to approve them, and stop (runs stay queued)."""
    from wild.commands.runs_cmds import gate_notes  # noqa: PLC0415

    if any(run.status != "queued" for run in open_runs):
        return
    notes = gate_notes(paths, open_runs, clock.now())
    if len(notes) < len(open_runs):
        return  # some may start: the next wake starts them
    waiting = sorted({run.sweep for run in open_runs})
    raise WildError(
        f"{plural(len(open_runs), 'run')} of sweep {', '.join(waiting)} await your approval of "
        f"the command they run; run `wild --approve {waiting[0]}` (see `wild --runs`), then "
        "`wild --run-sweeps`"
    )


def _interrupted(supervisor: RunSupervisor, term: Terminal) -> None:
    """Ctrl-C: on a terminal, ask whether to stop the runs; else leave them and say how."""
    going = supervisor.open_runs()
    if not going:
        return
    sweeps = sorted({run.sweep for run in going})
    term.out("")
    if term.ask is not None and term.ask(f"Stop the {plural(len(going), 'run')} left?"):
        for run in going:
            supervisor.stop(run.id)
        term.out(f"Stopped {plural(len(going), 'run')}.")
        return
    term.out(
        f"Left {plural(len(going), 'run')} queued or running: `wild --run-sweeps` takes them up "
        f"again, `wild --stop-run {sweeps[0]}` stops a sweep's runs"
        + (f" (sweeps: {', '.join(sweeps)})" if len(sweeps) > 1 else "")
    )


def _finish(paths: WildPaths, index: RunIndex, sweeps: list[str], term: Terminal) -> None:
    """Each sweep's comparison table (as `wild --compare`); a WildError if runs failed."""
    from wild.metrics.comparison import sweep_comparison  # noqa: PLC0415
    from wild.parsers.run_compare import format_comparison  # noqa: PLC0415
    from wild.parsers.run_table import run_ids_of  # noqa: PLC0415

    failed = []
    for sweep_id in sweeps:
        sweep = index.sweeps.get(sweep_id)
        if sweep is None:
            continue
        term.out("")
        comparison = sweep_comparison(paths, index, sweep)
        term.out(format_comparison(comparison, f"{sweep.id} ({sweep.name})"))
        failed += run_ids_of(index, sweep_id, "failed")
    if failed:
        raise WildError(
            f"{plural(len(failed), 'run')} failed: {', '.join(failed)}; read their logs with "
            "`wild --runs`, rerun one with `wild --rerun ID` and `wild --run-sweeps`"
        )
