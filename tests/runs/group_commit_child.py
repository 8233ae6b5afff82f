"""A run supervisor that dies by SIGKILL inside a step's group commit, for
tests/runs/test_group_commit.py: `python group_commit_child.py WILD_DIR SLOTS WHERE`, WHERE
"after-claims" (the step's claims are durable, no run started yet) or "after-starts" (every
run of the step started, their `running` lines not yet written). With a fourth argument
"launcher", a first step runs whole (it starts the wrapper launcher and the first runs in it,
and prints the launcher's pid), then it dies in the second step's commit, once the first runs
have ended."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from tests.runs.helpers import local, supervisor
from wild.paths import WildPaths
from wild.runs import attempts
from wild.runs import supervisor as supervisor_module
from wild.store.runs_log import append_records


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    paths = WildPaths(Path(sys.argv[1]))
    where = sys.argv[3]
    backend = local(paths, slots=int(sys.argv[2]))
    sup = supervisor(paths, backend)
    if sys.argv[4:] == ["launcher"]:
        started = sup.step().started
        assert backend._launcher is not None and not backend._children  # all launched
        print(backend._launcher.pid, flush=True)
        deadline = time.monotonic() + 30
        for run in started:  # until the first runs have ended: the next run is next
            while not (paths.run_dir(run.id) / "exit").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
    if where == "after-claims":
        claim_all = attempts.claim_all

        def claim_then_die(claims: Any) -> list[bool]:
            taken = claim_all(claims)
            if claims:
                _die()
            return taken

        attempts.claim_all = claim_then_die
    else:

        def die_before_running_lines(path: Path, records: Any) -> None:
            records = list(records)
            if any(record.status == "running" for record in records):
                _die()
            append_records(path, records)

        # The supervisor's own name for the appender (imported from wild.store.runs_log).
        setattr(supervisor_module, "append_records", die_before_running_lines)  # noqa: B010
    sup.step()
    raise SystemExit("the step should have died in its group commit")


if __name__ == "__main__":
    main()
