"""The gap between instant iterations of two or more wild trees, alternated in one run (an A/B).

Run: `python bench/gap_ab.py ROUNDS TREE [TREE …]`, each TREE a wild source tree (a checkout,
or `git archive REF | tar -x -C DIR`). Each round runs one loop of 20 instant iterations per
tree, in turn, each from a fresh project (`bench_peer.py`'s agent, tasks and measure: the
agent's last act to the next agent's first act), so a machine that changes pace slows every
tree alike; the p50 of each tree's gaps is reported, and each tree's ratio to the first. Not a
`bench_*.py`: it needs the trees it compares, which `run_all.py` does not have. How
docs/benchmarks.md measures one change against the commit before it (issue 22 item 8).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_peer import ITERATIONS, Projects, gaps, run, wild_loop
from figures import report


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    rounds, trees = int(sys.argv[1]), [Path(tree).resolve() for tree in sys.argv[2:]]
    for tree in trees:  # byte-compiled once, as an install is
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "wild")], check=True)
    found: dict[Path, list[float]] = {tree: [] for tree in trees}
    with tempfile.TemporaryDirectory() as tmp:
        projects = Projects(Path(tmp))
        for _ in range(rounds):
            for tree in trees:
                root = projects.wild(ITERATIONS + 5)
                env = dict(os.environ, PYTHONPATH=str(tree))
                run(wild_loop(root, ITERATIONS), root, env=env)
                found[tree] += gaps(root)[1:]  # the first gap holds the watcher's start
    first = statistics.median(found[trees[0]])
    for tree in trees:
        p50 = statistics.median(found[tree])
        value = f"{p50:.2f} ms ({p50 / first:.3f}× {trees[0].name}, {len(found[tree])} gaps)"
        report(f"gap between iterations, p50, {tree.name}", value, "A/B, no goal", None)


if __name__ == "__main__":
    main()
