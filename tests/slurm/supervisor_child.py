"""A run supervisor on Slurm in a process of its own that SIGKILLs itself right after its
Nth sbatch answered, before the run's line is written: `python supervisor_child.py WILD_DIR
TAG N` (SLURM_CONF in the environment)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.slurm.test_slurm_supervisor import slurm_supervisor
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths
from wild.runs.backend import Submitted
from wild.runs.slurm import SlurmBackend


def main() -> None:
    paths, tag, die_after = WildPaths(Path(sys.argv[1])), sys.argv[2], int(sys.argv[3])
    sup = slurm_supervisor(paths, tag)
    backend = sup.backends["slurm"]
    assert isinstance(backend, SlurmBackend)
    submit = backend.submit
    done = []

    def submit_then_die(run: RunRecord, env: Mapping[str, str]) -> Submitted:
        submitted = submit(run, env)
        done.append(run.id)
        if len(done) == die_after:
            os.kill(os.getpid(), signal.SIGKILL)  # the job is queued; its line never written
        return submitted

    backend.submit = submit_then_die  # type: ignore[method-assign]
    sup.step()


if __name__ == "__main__":
    main()
