"""What one launched instant run costs the process tree, with no loop: a wrapper launcher
(wild.runs.launcher) starts N instant runs, BATCH at a time, and this prints the CPU and the
minor page faults per run of the launcher, its wrappers and what they start
(`RUSAGE_CHILDREN`, once the launcher is reaped). Counts, not a goal: it reports no figure.

Run from the repository root: `PYTHONPATH=. python bench/launcher_cpu.py [N] [BATCH]`
(default 400 runs, 8 at a time); each run is the sweep benchmark's instruction,
`sh -c 'echo "$WILD_RUN_ID" >> spawns' --i=K`, and each id must be in `spawns` once.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from wild.runs.launcher import Launcher

SIZE, BATCH = 400, 8
WAIT_S = 60.0  # no run takes longer than this to leave its marker


def main(runs: int, batch: int) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        spawns = folder / "spawns"
        line = "sh -c " + json.dumps(f'echo "$WILD_RUN_ID" >> {spawns}')
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        launcher = Launcher(sys.executable, folder)
        for first in range(0, runs, batch):
            asked = []
            for number in range(first, min(runs, first + batch)):
                run_dir = folder / f"r{number}"
                run_dir.mkdir()
                args = ["--run-dir", str(run_dir), "--run-id", run_dir.name, "--attempt", "1"]
                args += ["--workdir", name, "--", f"{line} --i={number}"]
                env = {"PATH": os.environ["PATH"], "WILD_RUN_ID": run_dir.name}
                asked.append((args, env, run_dir))
            launcher.launch_all(asked)
            deadline = time.monotonic() + WAIT_S
            while not all((run_dir / "exit").exists() for _a, _e, run_dir in asked):
                if time.monotonic() > deadline:
                    raise SystemExit("a run left no exit marker")
                time.sleep(0.0005)
        launcher.close()
        launcher.proc.wait()
        time.sleep(0.2)  # the last wrappers reaped by the launcher before it exited
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        seen = spawns.read_text().split()
        if sorted(seen) != sorted(f"r{number}" for number in range(runs)):
            raise SystemExit("not every run started exactly once")
    user = (after.ru_utime - before.ru_utime) * 1000 / runs
    system = (after.ru_stime - before.ru_stime) * 1000 / runs
    faults = (after.ru_minflt - before.ru_minflt) / runs
    print(
        f"{runs} launched instant runs, {batch} at a time: CPU {user + system:.2f} ms per run "
        f"(user {user:.2f}, system {system:.2f}), {faults:.0f} minor faults per run"
    )


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else SIZE,
        int(sys.argv[2]) if len(sys.argv) > 2 else BATCH,
    )
