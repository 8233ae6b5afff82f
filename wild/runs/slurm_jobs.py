"""The Slurm backend's decisions, without I/O: sbatch arguments, the batch script, and what one
`squeue` answer means for each run.

wild.runs.slurm runs the commands; everything it decides comes from here, so the tests feed
text in and read arguments and observations out.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping

from wild.errors import WildError
from wild.parsers.runs import Resources, RunRecord
from wild.record import record
from wild.runs.backend import Observed
from wild.runs.wrapper_command import wrapper_argv

# Job id, state, nodes, then the name last: a job name may itself hold the separator.
QUEUE_FORMAT = "%i|%T|%N|%j"
# States in which the job still holds (or waits for) its allocation; the rest are ends
# squeue keeps showing for MinJobAge seconds with --states=all.
WAITING = frozenset({"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"})
ACTIVE = WAITING | frozenset(
    {"RUNNING", "COMPLETING", "SUSPENDED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED"}
)
# What the wrapper needs after its time limit to stop the run (its SIGTERM → SIGKILL grace)
# and write the marker, before Slurm's own --time limit would kill the wrapper too.
TIME_MARGIN_S = 60.0


@record
class SlurmOptions:
    """A sweep's `"slurm"` object: the partition and extra sbatch arguments, passed through."""

    partition: str | None = None
    extra_args: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, value: object, where: str) -> SlurmOptions:
        """The options of a sweep's `"slurm"` value; WildError naming `where` when malformed."""
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise WildError(f'{where}: "slurm" must be an object like {{"partition": "gpu"}}')
        partition, extra = value.get("partition"), value.get("extra_args", [])
        if partition is not None and (not isinstance(partition, str) or not partition.strip()):
            raise WildError(f'{where}: "slurm.partition" must be a partition name (a string)')
        if not isinstance(extra, list) or not all(isinstance(arg, str) for arg in extra):
            raise WildError(
                f'{where}: "slurm.extra_args" must be a list of strings, '
                'like ["--account=proj42", "--qos=short"]'
            )
        return cls(partition, tuple(extra))

    def under(self, site: SlurmOptions) -> SlurmOptions:
        """These options over the site's defaults: the sweep's partition wins, its extra
        arguments come after the site's (so sbatch lets the later one win)."""
        return SlurmOptions(self.partition or site.partition, site.extra_args + self.extra_args)


def job_name(tag: str, run_id: str) -> str:
    """`<tag>.<run id>`: the tag finds the loop's jobs in one query, the id tells a human."""
    return f"{tag}.{run_id}"


def slurm_time(seconds: float) -> str:
    """Whole minutes (Slurm's granularity), rounded up, with the wrapper's margin added."""
    return str(max(1, math.ceil((seconds + TIME_MARGIN_S) / 60)))


def resource_args(resources: Resources) -> list[str]:
    """`--cpus-per-task`, `--gres=gpu:N` (only for N > 0), `--mem`, `--time`.

    A share of a GPU asks Slurm for one whole GPU: plain gres has no fractions (sharing a
    GPU between jobs needs a site's MPS or shard setup, which wild cannot assume)."""
    args = [f"--cpus-per-task={resources.cpus}"]
    if resources.gpus > 0:
        args.append(f"--gres=gpu:{math.ceil(resources.gpus)}")
    if resources.memory_gb is not None:
        args.append(f"--mem={max(1, math.ceil(resources.memory_gb * 1024))}M")
    if resources.time_s is not None:
        args.append(f"--time={slurm_time(resources.time_s)}")
    return args


def sbatch_argv(
    run: RunRecord, tag: str, options: SlurmOptions, output: str, script: str
) -> list[str]:
    """The one `sbatch --parsable` command that submits `run`."""
    argv = ["sbatch", "--parsable", f"--job-name={job_name(tag, run.id)}", f"--output={output}"]
    argv += resource_args(run.resources)
    if options.partition is not None:
        argv.append(f"--partition={options.partition}")
    return [*argv, *options.extra_args, script]


def batch_script(
    run: RunRecord,
    *,
    env: Mapping[str, str],
    python: str,
    wrapper: str,
    run_dir: str,
    workdir: str,
) -> str:
    """The job's script: the WILD_* variables, then the wrapper in place of the shell (exec),
    so Slurm's signals reach the wrapper, which writes the log and the exit marker."""
    exports = [
        f"export {key}={shlex.quote(value)}"
        for key, value in sorted(env.items())
        if key.startswith("WILD_") and key.isidentifier()
    ]
    command = wrapper_argv(run, python=python, run_dir=run_dir, workdir=workdir, wrapper=wrapper)
    return "\n".join(
        [
            "#!/bin/sh",
            f"# wild run {run.id}, attempt {run.attempt}, sweep {run.sweep}",
            *exports,
            "exec " + shlex.join(command),
            "",
        ]
    )


def parse_job_id(stdout: str) -> str | None:
    """The job id `sbatch --parsable` printed (`123` or `123;cluster`); None if there is none."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None
    job = lines[-1].split(";", 1)[0].strip()
    return job if job.isdigit() else None


@record
class QueueRow:
    """One job in squeue's answer."""

    job_id: str
    state: str
    nodes: str
    name: str


def parse_queue(stdout: str) -> dict[str, QueueRow]:
    """squeue's jobs by job id; lines that do not parse are skipped."""
    rows = {}
    for line in stdout.splitlines():
        fields = line.strip().split("|", 3)
        if len(fields) != 4:
            continue
        job, state, nodes, name = fields
        # A state may carry a suffix (`CANCELLED by 0`, `COMPLETING+`): the word is the state.
        word = state.split()[0].rstrip("+") if state.split() else ""
        rows[job] = QueueRow(job, word, nodes, name)
    return rows


def run_job(rows: Mapping[str, QueueRow], job_id: str, run_id: str) -> QueueRow | None:
    """The run's job in squeue's answer, found by job id and checked by the run id in its
    name. The tag is not required: a loop restarted under another tag still finds its jobs."""
    row = rows.get(job_id)
    return row if row is not None and row.name.endswith(f".{run_id}") else None


def latest_job(rows: Mapping[str, QueueRow], tag: str, run_id: str) -> str | None:
    """The newest job named for this loop's run (a loop that died right after sbatch)."""
    named = [int(row.job_id) for row in rows.values() if row.name == job_name(tag, run_id)]
    return str(max(named)) if named else None


UNKNOWN_UNTIL_ANSWER = (
    "runs on Slurm are unknown until the controller answers again "
    "(wild asks again next cycle; check `scontrol ping`)"
)


def queue_error(code: int | None, stderr: str, stdout: str, timeout_s: float = 0.0) -> str:
    """One line for a failed squeue (`code` None: it gave no answer within `timeout_s`):
    what Slurm said, and that wild asks again next cycle."""
    if code is None:
        return f"squeue gave no answer within {timeout_s:g} s; {UNKNOWN_UNTIL_ANSWER}"
    said = (stderr.strip() or stdout.strip() or "no output").splitlines()[-1][:200]
    return f"squeue failed (exit {code}): {said}; {UNKNOWN_UNTIL_ANSWER}"


def observe(
    run: RunRecord,
    row: QueueRow | None,
    *,
    missing_for_s: float | None,
    grace_s: float,
) -> Observed:
    """What one squeue answer means for a run that has no exit marker yet.

    A job in the queue runs (or waits). A job that left the queue, or ended in it, without
    its marker gets `grace_s` for the marker to arrive (a shared filesystem can show it late,
    the wrapper may be writing it) and is `gone` after that.
    """
    if row is not None and row.state in ACTIVE:
        where = f" on {row.nodes}" if row.nodes and row.state not in WAITING else ""
        return Observed("running", f"job {row.job_id} {row.state}{where}")
    if row is not None and not row.nodes:
        # Cancelled (or failed) while it waited: no wrapper ever ran, no marker can come.
        return Observed("gone", f"Slurm job {row.job_id} {row.state} before it started")
    seen = f"ended {row.state}" if row is not None else "left the queue"
    if missing_for_s is None or missing_for_s < grace_s:
        return Observed(
            "running",
            f"job {run.job_id} {seen} without an exit marker yet; "
            f"marked lost if none arrives within {grace_s:g} s",
        )
    return Observed(
        "gone",
        f"Slurm job {run.job_id} {seen} without writing an exit marker "
        f"(see .wild/runs/{run.id}/slurm.out)",
    )


def extra_args_setting(text: str | None, where: str) -> tuple[str, ...]:
    """`slurm_extra_args` as a shell-quoted string (`--account=p42 --qos=short`)."""
    try:
        return tuple(shlex.split(text or ""))
    except ValueError as error:
        raise WildError(f"{where}: cannot split slurm_extra_args: {error}") from None
