"""The `slurm` run backend: one sbatch per run, one squeue per status cycle, scancel to stop.

Each run becomes one job named `<tag>.<run id>` whose batch script (kept as
`.wild/runs/<id>/job.sh`) exports the run's WILD_* variables and `exec`s the same wrapper
every backend uses (wild/runs/wrapper.py), which writes `.wild/runs/<id>/log` and the exit
marker, also when the instruction fails or Slurm signals the job. The marker's appearance
wakes the loop; `poll` is for what no marker reports: one `squeue --me --states=all` for all
of the loop's jobs, whatever their number. A job gone from the queue without its marker is
lost only after a grace period; a controller that does not answer makes every run `unknown`
for that cycle (never an end), and the next cycle asks again. The decisions are in
wild.runs.slurm_jobs; here are the commands.

Settings (`BackendContext.settings`, all optional): `slurm_poll_s` (the status cycle the
supervisor keeps while a Slurm run is active, default 30), `slurm_grace_s` (how long a job
may be missing before it is lost, default 60), `slurm_python` (the interpreter that runs the
wrapper on the nodes, default this one), `slurm_partition` and `slurm_extra_args` (site
defaults under every sweep's `"slurm"` object), `slurm_command_timeout_s` (default 60).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence

from wild.clock import Clock, SystemClock
from wild.errors import WildError
from wild.parsers.runs import RunRecord
from wild.runs import markers, slurm_jobs
from wild.runs.backend import BackendContext, Observed, Submitted
from wild.runs.slurm_jobs import SlurmOptions
from wild.runs.wrapper_command import WRAPPER
from wild.store.files import atomic_write
from wild.store.runs_log import read_runs

DEFAULTS = {
    "slurm_poll_s": 30.0,
    "slurm_grace_s": 60.0,
    "slurm_command_timeout_s": 60.0,
}
JOB_FILE = "slurm_job"  # `<attempt> <job id>`, written as soon as sbatch answers
_GONE_ALREADY = ("invalid job id", "already completing or completed", "job has already finished")


def _seconds(settings: Mapping[str, str], key: str) -> float:
    text = settings.get(key)
    if text is None:
        return DEFAULTS[key]
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise WildError(f'{key} must be a number of seconds above 0, not "{text}"')
    return value


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines else "no output")[:300]


class SlurmBackend:
    """Runs on a Slurm cluster; `poll_interval_s` is the status cycle (`slurm_poll_s`)."""

    name = "slurm"

    def __init__(self, context: BackendContext, clock: Clock | None = None) -> None:
        self.context = context
        self.clock = clock or SystemClock()
        settings = context.settings
        self.poll_interval_s = _seconds(settings, "slurm_poll_s")
        self.grace_s = _seconds(settings, "slurm_grace_s")
        self.command_timeout_s = _seconds(settings, "slurm_command_timeout_s")
        self.python = settings.get("slurm_python") or sys.executable
        self.site = SlurmOptions(
            settings.get("slurm_partition") or None,
            slurm_jobs.extra_args_setting(settings.get("slurm_extra_args"), "slurm_extra_args"),
        )
        self._missing_since: dict[tuple[str, str], float] = {}  # (run id, job id) → monotonic
        self._sweep_options: dict[str, SlurmOptions] = {}

    # ----------------------------------------------------------------- the protocol

    def admit(self, queued: Iterable[RunRecord], active: Sequence[RunRecord]) -> list[RunRecord]:
        """All of them: Slurm keeps the queue, and its limits are the cluster's to enforce."""
        return list(queued)

    def submit(self, run: RunRecord, env: Mapping[str, str]) -> Submitted:
        """One `sbatch --parsable`; WildError with Slurm's own words when it refuses."""
        paths = self.context.paths
        run_dir = paths.run_dir(run.id).resolve()
        run_dir.mkdir(parents=True, exist_ok=True)
        script = run_dir / "job.sh"
        text = slurm_jobs.batch_script(
            run,
            env=env,
            python=self.python,
            wrapper=str(WRAPPER),
            run_dir=str(run_dir),
            workdir=str(paths.project / run.workdir),
        )
        atomic_write(script, text.encode())
        argv = slurm_jobs.sbatch_argv(
            run, self.context.tag, self.options(run), str(run_dir / "slurm.out"), str(script)
        )
        done = self._command(argv, env={**os.environ, **env})
        if isinstance(done, str):
            # No answer is not a no: the controller may have queued the job all the same.
            job = self._queued_job(run)
            if job is None:
                raise WildError(f"run {run.id}: {done}")
            done = subprocess.CompletedProcess(argv, 0, job, "")
        job = slurm_jobs.parse_job_id(done.stdout)
        if done.returncode != 0 or job is None:
            said = _one_line(done.stderr or done.stdout)
            raise WildError(
                f"run {run.id}: sbatch refused the job (exit {done.returncode}): {said}; "
                'check the sweep\'s "slurm" partition and extra_args and the resources'
            )
        # So a loop that dies before recording the job id still finds the job (`adopt`).
        atomic_write(run_dir / JOB_FILE, f"{run.attempt} {job}\n".encode())
        return Submitted(job_id=job)

    def poll(self, active: Sequence[RunRecord]) -> dict[str, Observed]:
        """Markers first (no controller needed), then ONE squeue for every other job."""
        seen: dict[str, Observed] = {}
        waiting: list[tuple[RunRecord, str]] = []
        for run in active:
            if self._has_marker(run):
                seen[run.id] = Observed("ended")
            elif run.job_id is None:
                seen[run.id] = Observed("unknown", "no Slurm job id recorded for this run")
            else:
                waiting.append((run, run.job_id))
        if not waiting:
            return seen
        rows = self._queue()
        if isinstance(rows, str):
            seen.update({run.id: Observed("unknown", rows) for run, _ in waiting})
            return seen
        now = self.clock.monotonic()
        missing_since: dict[tuple[str, str], float] = {}  # only the runs still waited for
        for run, job in waiting:
            row = slurm_jobs.run_job(rows, job, run.id)
            missing = None
            if row is None or row.state not in slurm_jobs.ACTIVE:
                since = missing_since[(run.id, job)] = self._missing_since.get((run.id, job), now)
                missing = now - since
            seen[run.id] = slurm_jobs.observe(run, row, missing_for_s=missing, grace_s=self.grace_s)
        self._missing_since = missing_since
        return seen

    def cancel(self, run: RunRecord) -> None:
        """A waiting job is cancelled outright (no marker: its wrapper never ran); a running
        one gets SIGTERM in its batch process alone, the wrapper, which stops the run's group
        and writes the marker with reason "stopped". Signalling the whole job instead would
        race the wrapper to the run's processes and lose that reason. Pending first: a job
        cannot go back from running to pending between the two calls, so none is missed.
        A job that has already left the queue is not an error."""
        if run.job_id is None:
            return
        for how in (["--state=PENDING"], ["--state=RUNNING", "--batch", "--signal=TERM"]):
            done = self._command(["scancel", *how, run.job_id])
            if isinstance(done, str):
                raise WildError(f"run {run.id}: {done}")
            said = f"{done.stderr}\n{done.stdout}".lower()
            if done.returncode != 0 and not any(words in said for words in _GONE_ALREADY):
                raise WildError(
                    f"run {run.id}: scancel {run.job_id} failed (exit {done.returncode}): "
                    f"{_one_line(done.stderr or done.stdout)}; stop the job by hand with scancel"
                )

    def adopt(self, run: RunRecord) -> Submitted | None:
        """The job of an attempt submitted but never recorded (the loop died in between):
        by the job id `submit` left in the run's folder, else by the job's name in one
        squeue; None when no job and no marker is found (the supervisor marks it lost)."""
        recorded = self._recorded_job(run)
        if recorded is not None:
            return Submitted(job_id=recorded)
        rows = self._queue()
        if isinstance(rows, str):
            raise WildError(f"run {run.id}: cannot look for its job: {rows}")
        job = slurm_jobs.latest_job(rows, self.context.tag, run.id)
        if job is not None:
            return Submitted(job_id=job)
        return Submitted(job_id="") if self._has_marker(run) else None

    def never_started(self, run: RunRecord) -> bool:
        """Whether a claimed attempt was never submitted: no job id left by `submit`, no job
        of its name in the queue (pending, running or recently ended), and no pid file or
        marker from a wrapper of it. False when the queue cannot be read."""
        rows = self._queue()
        if isinstance(rows, str) or self._recorded_job(run) is not None:
            return False
        run_dir = self.context.paths.run_dir(run.id)
        return (
            slurm_jobs.latest_job(rows, self.context.tag, run.id) is None
            and markers.read_pid(run_dir) is None
            and not markers.read_marker(run_dir).present
        )

    # ----------------------------------------------------------------- helpers

    def _queue(self) -> dict[str, slurm_jobs.QueueRow] | str:
        """The one squeue of a status cycle: every job of this user, ended ones included."""
        argv = ["squeue", "--me", "--noheader", "--states=all"]
        done = self._command([*argv, f"--format={slurm_jobs.QUEUE_FORMAT}"])
        if isinstance(done, str):
            return done
        if done.returncode != 0:
            return slurm_jobs.queue_error(done.returncode, done.stderr, done.stdout)
        return slurm_jobs.parse_queue(done.stdout)

    def _queued_job(self, run: RunRecord) -> str | None:
        """This run's job waiting or running in the queue, if one is (after a lost answer)."""
        rows = self._queue()
        if isinstance(rows, str):
            return None
        alive = {job: row for job, row in rows.items() if row.state in slurm_jobs.ACTIVE}
        return slurm_jobs.latest_job(alive, self.context.tag, run.id)

    def _recorded_job(self, run: RunRecord) -> str | None:
        try:
            text = (self.context.paths.run_dir(run.id) / JOB_FILE).read_text().split()
        except OSError:
            return None
        match = len(text) == 2 and text[0] == str(run.attempt) and text[1].isdigit()
        return text[1] if match else None

    def options(self, run: RunRecord) -> SlurmOptions:
        """The run's `"slurm"` options (its own line's, else its sweep's), over the site's."""
        if "slurm" in run.raw:
            own = SlurmOptions.from_json(run.raw["slurm"], f"run {run.id}")
        else:
            own = self._sweep_slurm(run.sweep)
        return own.under(self.site)

    def _sweep_slurm(self, sweep_id: str) -> SlurmOptions:
        """The sweep's `"slurm"` object from runs.jsonl, read once per sweep."""
        if sweep_id not in self._sweep_options:
            sweep = read_runs(self.context.paths.runs_log).index.sweeps.get(sweep_id)
            spec: Mapping[str, object] = sweep.spec if sweep is not None else {}
            options = SlurmOptions.from_json(spec.get("slurm"), f"sweep {sweep_id}")
            self._sweep_options[sweep_id] = options
        return self._sweep_options[sweep_id]

    def _has_marker(self, run: RunRecord) -> bool:
        """The run's exit marker is there, and is this attempt's (not a rerun's old one)."""
        return markers.read_marker(self.context.paths.run_dir(run.id)).ends(run.attempt)

    def _command(
        self, argv: list[str], env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str] | str:
        """Run a Slurm client; a string says why it could not give an answer."""
        try:
            return subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=self.command_timeout_s,
                env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except FileNotFoundError:
            return (
                f"{argv[0]} is not on PATH: run the loop where Slurm's client commands are "
                "installed, or pick another run backend"
            )
        except subprocess.TimeoutExpired:
            if argv[0] == "squeue":
                return slurm_jobs.queue_error(None, "", "", self.command_timeout_s)
            return f"{argv[0]} gave no answer within {self.command_timeout_s:g} s; is slurmctld up?"
        except OSError as error:
            return f"cannot run {argv[0]}: {error}"
