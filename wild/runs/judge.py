"""A run's status as it is now, judged from its folder without the loop: a `running` line
whose attempt left its exit marker has ended, and a local run whose wrapper is gone without
one is lost, as the supervisor will record it (`wild.runs.decide.settled`). For read
commands: nothing is written and nothing is killed."""

from __future__ import annotations

from wild.liveness import this_host
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths
from wild.runs import decide, markers
from wild.runs.backend import Observed
from wild.runs.local import wrapper_alive


def judged(paths: WildPaths, run: RunRecord, now: str) -> RunRecord:
    """`run` as the supervisor will record it once it looks; as recorded when it runs, or
    when this host cannot tell (a Slurm job, a run on another host, one not started yet)."""
    if run.status != "running":
        return run
    run_dir = paths.run_dir(run.id)
    marker = markers.read_marker(run_dir)
    if marker.ends(run.attempt):
        return decide.settled(run, Observed("ended"), marker, None, now) or run
    if run.backend != "local" or (run.host is not None and run.host != this_host()):
        return run
    pid = int(run.job_id) if run.job_id and run.job_id.isdigit() else markers.read_pid(run_dir)
    if pid is None or wrapper_alive(paths, run, pid):
        return run
    marker = markers.read_marker(run_dir)  # it may have ended between the two looks
    observed = Observed("ended") if marker.ends(run.attempt) else Observed("gone")
    if observed.liveness == "gone":
        observed = Observed("gone", f"wrapper process {pid} is gone and left no exit marker")
    return decide.settled(run, observed, marker, None, now) or run
