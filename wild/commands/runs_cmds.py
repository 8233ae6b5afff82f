"""`wild --sweep FILE|-` (validate and record a sweep) and `wild --runs` (list the runs)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from wild.barriers.command_gate import gate
from wild.clock import Clock
from wild.commands.sweep_input import read_sweep, refused
from wild.errors import WildError
from wild.output import plural
from wild.parsers.runs import RunIndex, RunRecord, SweepRecord
from wild.paths import WildPaths
from wild.policy.trust import hold_policy
from wild.runs import attempts, decide, retry, signing
from wild.runs.record_sweep import record_sweep
from wild.store.runs_log import RunLog, read_runs
from wild.workspace import read_trust, require_initialised, stated_policy


def submit_sweep(
    paths: WildPaths,
    source: str,
    *,
    now: datetime,
    run_backend: str | None,
    stdin: TextIO = sys.stdin,
    command: Sequence[str] | None = None,
) -> SweepRecord:
    """Validate the sweep in `source` (a file, `-` for stdin, or `--` for the Hydra
    `command`) and record it; an invalid one is a usage error listing every problem, and
    nothing is recorded."""
    require_initialised(paths)
    spec = read_sweep(paths, source, stdin, command)
    outcome = record_sweep(paths, spec, now=now, run_backend=run_backend)
    if outcome.sweep is None:
        raise refused(source, outcome.errors)
    return outcome.sweep


def sweep_summary(sweep: SweepRecord) -> dict[str, Any]:
    return {
        "sweep": sweep.id,
        "runs": len(sweep.run_ids),
        "cut": sweep.cut,
        "sampled": bool(sweep.cut and sweep.spec.get("sample")),
        "barrier": sweep.barrier,
        "task": sweep.task,
    }


def format_sweep(summary: Mapping[str, Any]) -> str:
    cut = ""
    if summary["cut"] and summary.get("sampled"):
        cut = f"; max_runs sampled them at random, {summary['cut']} grid points left out"
    elif summary["cut"]:
        cut = (
            f"; max_runs cut the grid: its last {summary['cut']} points are left out "
            '("sample": true draws the kept points at random)'
        )
    runs = f"{summary['runs']} run{'s' if summary['runs'] != 1 else ''}"
    text = (
        f"{summary['sweep']}\n{runs} queued{cut}; "
        f"analysis {summary['task']} waits for barrier {summary['barrier']}"
    )
    if summary.get("awaiting_approval"):
        text += (
            f"\nThey run once you approve their command: {summary['awaiting_approval']}\n"
            f"  wild --approve {summary['sweep']}"
        )
    return text


def list_runs(
    paths: WildPaths, sweep_id: str | None
) -> tuple[RunIndex, list[RunRecord], list[str]]:
    """The runs (of one sweep, or all in file order) and the file's problems as text."""
    log, runs = listed_runs(paths, sweep_id)
    return log.index, runs, [str(p) for p in log.problems]


def listed_runs(paths: WildPaths, sweep_id: str | None) -> tuple[RunLog, list[RunRecord]]:
    """runs.jsonl read whole, and its runs (of one sweep, or all in file order)."""
    require_initialised(paths)
    log = read_runs(paths.runs_log)
    if sweep_id is None:
        return log, list(log.index.runs.values())
    if sweep_id not in log.index.sweeps:
        known = ", ".join(log.index.sweeps) or "none yet"
        raise WildError(
            f"{paths.runs_log}: no sweep {sweep_id} (known: {known}); "
            "list them all with `wild --runs`"
        )
    return log, list(log.index.of_sweep(sweep_id))


def runs_listing(paths: WildPaths, sweep_id: str | None, now: datetime, *, as_json: bool) -> str:
    """`wild --runs [--sweep ID]`: the runs judged now, with their live figures."""
    shown = runs_output(paths, sweep_id, now, as_json=as_json)
    return shown.decode(errors="replace") if isinstance(shown, bytes) else shown


def runs_output(
    paths: WildPaths, sweep_id: str | None, now: datetime, *, as_json: bool
) -> str | bytes:
    """`runs_listing` as printed: `wild --runs --json` kept in runs.json-view.json comes as
    its bytes (megabytes at 10,000 runs: printed as they are, not decoded and encoded)."""
    from wild.commands import runs_listing as kept_listing  # noqa: PLC0415
    from wild.commands.runs_table import format_live, live_figures, live_json  # noqa: PLC0415
    from wild.metrics import kept_views  # noqa: PLC0415
    from wild.output import to_json  # noqa: PLC0415

    require_initialised(paths)
    shown: str | bytes | None
    if as_json:
        repeated_of = partial(deterministic_failures, paths)
        shown = kept_listing.listing_json(paths, sweep_id, now, repeated_of)
    else:
        notes_of = partial(run_notes, paths, now=now)
        shown = kept_listing.listing_text(paths, sweep_id, now, notes_of)
    if shown is not None:
        return shown
    name = f"runs {sweep_id or '*'} {'json' if as_json else 'text'}"
    kept = kept_views.kept_view(paths, name)
    if kept is not None:
        return kept
    taken, runs_log = time.time_ns(), kept_views.runs_log_signature(paths)  # before the read
    log, runs = listed_runs(paths, sweep_id)
    index, problems = log.index, [str(p) for p in log.problems]
    rows, settled = live_figures(paths, index, runs, now)
    notes = gate_notes(paths, [run for run, *_ in rows], now)
    repeated = deterministic_failures(paths, [run for run, *_ in rows])
    text = (
        to_json(live_json(rows, notes, repeated))
        if as_json
        else format_live(rows, problems, notes, repeated)
    )
    # A listing of ended runs depends on their files alone; a live one also on now.
    if not problems and all(run.terminal for run, *_ in rows):
        ids = [run.id for run in runs]
        kept_views.keep_view(paths, name, text, run_ids=ids, runs_log=runs_log, taken_ns=taken)
        if as_json and settled and log.cursor is not None and rows:
            kept_listing.keep_json(paths, sweep_id, log.cursor, text, index.sweeps)
    return text


def watch_listing(
    paths: WildPaths,
    sweep_id: str | None,
    clock: Clock,
    clear: Callable[[], None],
    out: Callable[[str], None],
) -> None:
    """`wild --runs --watch`: the listing redrawn whenever a run's file or runs.jsonl
    changes (file events: no timer)."""
    from wild.commands.watch import watch_runs  # noqa: PLC0415
    from wild.metrics.readers import metric_readers  # noqa: PLC0415
    from wild.metrics.sources import roots, watched_folders  # noqa: PLC0415

    index, runs, _ = list_runs(paths, sweep_id)
    folders: set[Path] = set()
    for run in runs:
        sweep = index.sweeps.get(run.sweep)
        spec = sweep.spec if sweep is not None else None
        folders |= watched_folders(roots(paths, run, spec, metric_readers()))
    # Folders inside .wild/ are followed already (the watch covers all of it).
    outside = sorted(f for f in folders if not f.is_relative_to(paths.root))

    def redraw() -> None:
        text = runs_listing(paths, sweep_id, clock.now(), as_json=False)
        clear()
        out(text)

    watch_runs(paths, outside, redraw)


def deterministic_failures(paths: WildPaths, runs: Sequence[RunRecord]) -> set[str]:
    """The failed runs that failed as their previous attempt did (only reruns are read)."""
    return {run.id for run in runs if attempts.deterministic_failure(paths.run_dir(run.id), run)}


def run_notes(paths: WildPaths, runs: Sequence[RunRecord], now: datetime) -> dict[str, str]:
    """What `wild --runs` says in a run's status: why it waits, or that it failed as before."""
    notes = {run_id: retry.DETERMINISTIC for run_id in deterministic_failures(paths, runs)}
    notes.update(gate_notes(paths, runs, now))
    return notes


def approval_required(paths: WildPaths, now: datetime) -> bool:
    """Whether the policy in force (as the loop holds it) requires approved commands."""
    _approvals, recorded = read_trust(paths)
    return hold_policy(stated_policy(paths, now), recorded, now).policy.command_approval == (
        "required"
    )


def gate_notes(paths: WildPaths, runs: Sequence[RunRecord], now: datetime) -> dict[str, str]:
    """Why a queued run does not start: its sweep's program awaits a human's approval under
    the policy in force, or its line is not one wild wrote (the loop refuses it)."""
    queued = [run for run in runs if run.status == "queued"]
    if not queued:
        return {}
    approvals, _recorded = read_trust(paths)
    required = approval_required(paths, now)
    admission = decide.admission(
        queued, key=signing.load_key(), may_run=gate(approvals, approval_required=required)
    )
    notes = {run.id: f"awaiting approval: wild --approve {run.sweep}" for run in admission.held}
    notes.update({run.id: "refused: not queued by wild" for run in admission.forged})
    return notes


def run_action(
    paths: WildPaths, opts: Mapping[str, Any], now: datetime, *, as_json: bool
) -> str | bytes:
    """`wild --runs [--sweep ID]` or `wild --sweep FILE|-`: what to print (bytes: a kept
    `wild --runs --json`, printed as they are)."""
    from wild.output import to_json  # noqa: PLC0415  (as the other handlers: only when used)

    if opts["stop_run"] is not None:
        return act_on_run(paths, opts["stop_run"], stop=True)
    if opts["rerun"] is not None:
        return act_on_run(paths, opts["rerun"], stop=False)
    if opts["runs"]:
        return runs_output(paths, opts["sweep"], now, as_json=as_json)
    sweep = submit_sweep(
        paths,
        opts["sweep"],
        now=now,
        run_backend=opts["run_backend"],
        command=opts.get("sweep_command"),
    )
    summary = sweep_summary(sweep)
    queued = read_runs(paths.runs_log).index.of_sweep(sweep.id)
    if gate_notes(paths, queued, now):  # the policy holds them until a human approves
        summary["awaiting_approval"] = sweep.raw.get(signing.COMMAND_FIELD)
    return to_json(summary) if as_json else format_sweep(summary)


ALL = "all"  # `wild --stop-run all`: every queued or running run (before a `wild --stop`)


def act_on_run(paths: WildPaths, run_id: str, *, stop: bool) -> str:
    """`wild --stop-run ID|SWEEP_ID|all` / `--rerun ID`: asked of the running loop (it owns
    the runs), or done here when none runs (a rerun is then queued for the next loop)."""
    require_initialised(paths)
    index = read_runs(paths.runs_log).index
    if stop and (run_id == ALL or run_id in index.sweeps):
        # `all`, or a sweep's id: each of its runs still queued or running.
        of = index.runs.values() if run_id == ALL else index.of_sweep(run_id)
        open_ids = [r.id for r in of if not r.terminal]
        _act(paths, open_ids, stop=True)
        return f"Stopping {plural(len(open_ids), 'run')}: {', '.join(open_ids) or 'none was open'}"
    run = index.runs.get(run_id)
    if run is None:
        raise WildError(f"{paths.runs_log}: no run {run_id}; list them with `wild --runs`")
    if stop and run.terminal:
        raise WildError(f"run {run_id} is {run.status} already; nothing to stop")
    if not stop and not run.terminal:
        raise WildError(f"run {run_id} is {run.status}; stop it first (wild --stop-run {run_id})")
    refusal = None if stop else retry.rerun_refusal(run, index.sweeps.get(run.sweep))
    if refusal is not None:  # said here: a running loop would only log it
        raise WildError(refusal)
    if _act(paths, [run_id], stop=stop):
        return f"Asked the loop in {paths.root} to {'stop' if stop else 'rerun'} {run_id}"
    return f"{'Stopped' if stop else 'Queued a new attempt of'} {run_id}" + (
        "" if stop else "; the next `wild` loop starts it"
    )


def _act(paths: WildPaths, run_ids: Sequence[str], *, stop: bool) -> bool:
    """Ask the running loop to act on each run (each its own request, so a loop acts on each
    as on one), or act here when none runs; whether a loop was asked."""
    from wild import control  # noqa: PLC0415  (only these actions need them)
    from wild.commands.watch import running_loop_pid  # noqa: PLC0415

    if running_loop_pid(paths) is not None:
        for run_id in run_ids:
            control.request(paths, "stop-run" if stop else "rerun", target=run_id)
        return True
    if run_ids:
        _act_here(paths, run_ids, stop=stop)
    return False


def _act_here(paths: WildPaths, run_ids: Sequence[str], *, stop: bool) -> None:
    from wild.clock import SystemClock  # noqa: PLC0415
    from wild.loop.model import ActOnRuns, LoopOptions  # noqa: PLC0415
    from wild.loop.runs_effect import LoopRuns, run_settings  # noqa: PLC0415
    from wild.store.events_log import EventLog  # noqa: PLC0415

    clock = SystemClock()
    runs = LoopRuns(
        paths, clock, EventLog(paths.events, clock), **run_settings(paths, LoopOptions(""))
    )
    errors = runs.act(ActOnRuns("stop_run" if stop else "rerun", tuple(run_ids)))
    if errors:
        raise WildError("; ".join(errors))
