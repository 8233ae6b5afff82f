"""A counting stand-in for `sbatch`, `squeue` and `scancel`: executables put first on PATH.

Each call appends its argv (one JSON line) to `calls.jsonl` in the state folder named by
`FAKE_SLURM_DIR`, so a test counts exactly how often wild asked the controller. The queue
is the text file `queue` in squeue's `%i|%T|%N|%j` form: `sbatch` adds a PENDING job, the
test (or bench) moves jobs on by rewriting it, `scancel` drops the job. A file `<command>.fail`
makes that command print its content on stderr and exit 1 (a controller error, a refusal).
Nothing runs: the caller writes the exit markers a real wrapper would.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path

COMMANDS = ("sbatch", "squeue", "scancel")
STATE_VAR = "FAKE_SLURM_DIR"
HERE = str(Path(__file__).resolve().parent)
# -S -E: no site packages, no PYTHON* variables, so a call costs about 10 ms.
LAUNCHER = """#!{python} -SE
import sys
import time
sys.path.insert(0, {here!r})
import fake_slurm
fake_slurm.main({command!r})
"""


def install(bin_dir: Path, state_dir: Path) -> dict[str, str]:
    """Write the three executables; the environment changes that put them in front."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "queue").touch()
    for command in COMMANDS:
        exe = bin_dir / command
        exe.write_text(LAUNCHER.format(python=sys.executable, here=HERE, command=command))
        exe.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", STATE_VAR: str(state_dir)}


def calls(state_dir: Path, command: str | None = None) -> list[list[str]]:
    """Every recorded call (argv), or only those of `command`."""
    log = state_dir / "calls.jsonl"
    found = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [argv for argv in found if command is None or argv[0] == command]


def set_state(state_dir: Path, job_id: str, state: str | None) -> None:
    """Move a job to `state` (RUNNING, COMPLETED, …), or out of the queue (None)."""
    with _locked(state_dir):
        queue = state_dir / "queue"
        rows = [row.split("|", 3) for row in queue.read_text().splitlines() if row]
        kept = [
            "|".join([job, state or old, "node1" if state == "RUNNING" else nodes, name])
            for job, old, nodes, name in rows
            if job != job_id or state is not None
        ]
        queue.write_text("".join(f"{row}\n" for row in kept))


class _locked:
    def __init__(self, state_dir: Path) -> None:
        self.handle = (state_dir / ".lock").open("a")

    def __enter__(self) -> None:
        fcntl.flock(self.handle, fcntl.LOCK_EX)

    def __exit__(self, *_: object) -> None:
        self.handle.close()


def main(command: str) -> None:
    state_dir = Path(os.environ[STATE_VAR])
    argv = [command, *sys.argv[1:]]
    with _locked(state_dir):
        with (state_dir / "calls.jsonl").open("a") as log:
            log.write(json.dumps(argv) + "\n")
        failure = state_dir / f"{command}.fail"
        if failure.exists():
            sys.stderr.write(failure.read_text())
            sys.exit(1)
        queue = state_dir / "queue"
        if command == "squeue":
            sys.stdout.write(queue.read_text())
        elif command == "sbatch":
            counter = state_dir / "last_job"
            job = int(counter.read_text()) + 1 if counter.exists() else 1
            counter.write_text(str(job))
            name = next(arg.split("=", 1)[1] for arg in argv if arg.startswith("--job-name="))
            with queue.open("a") as rows:
                rows.write(f"{job}|PENDING||{name}\n")
            print(job, flush=True)
            slow = state_dir / "sbatch.slow"
            if slow.exists():  # queued, but the answer never reaches the caller in time
                time.sleep(float(slow.read_text()))
    if command == "scancel":
        set_state(state_dir, argv[-1], None)
