"""The cost of knowing which files an iteration changed (`wild.loop.changes`): one snapshot
before the agent runs and one after, on a project of 10,000 files, as a plain folder and as a
git work tree (after `git status` has its index current, as any repository in use has).

Run: `python bench/bench_changes.py [FILES]` (default 10,000). The figure is the median of
the before + after pair and the diff, over 11 rounds, with 3 files edited in between.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from figures import report

from wild.loop import changes

ROUNDS = 11
GOAL_MS = 500.0  # against agent runs of a minute or more: under 1 % of one


def make_tree(root: Path, files: int) -> None:
    """`files` small files, 100 to a folder, plus a node_modules and a .wild that are skipped."""
    for n in range(files):
        folder = root / "src" / f"pkg{n // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n % 100:02d}.py").write_text(f"VALUE = {n}\n")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("x\n")
    (root / ".wild").mkdir()


def git(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b")
    env["GIT_COMMITTER_EMAIL"] = "b@x"
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def cpu_s() -> float:
    """CPU time of this process and of the git processes it waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(root: Path, kind: str) -> tuple[float, float, int]:
    """Median wall and CPU milliseconds of snapshot + snapshot + changed, and the files it
    found changed in the last round."""
    times: list[float] = []
    cpu: list[float] = []
    found = 0
    for round_ in range(ROUNDS):
        start, cpu_start = time.perf_counter(), cpu_s()
        before = changes.snapshot(root, root / ".wild")
        elapsed, cpu_elapsed = time.perf_counter() - start, cpu_s() - cpu_start
        for n in range(3):  # the "agent": three edits, one a new file
            (root / "src" / f"pkg{n:03d}" / "mod00.py").write_text(f"VALUE = {round_}{n}\n")
        (root / "src" / f"new-{kind}-{round_}.py").write_text("x\n")
        start, cpu_start = time.perf_counter(), cpu_s()
        diff = changes.changed(before, changes.snapshot(root, root / ".wild"))
        times.append((elapsed + time.perf_counter() - start) * 1000)
        cpu.append((cpu_elapsed + cpu_s() - cpu_start) * 1000)
        found = len(diff) if diff is not None else -1
    return statistics.median(times), statistics.median(cpu), found


def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_tree(root, files)
        plain = measure(root, "plain")
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "start")
        git(root, "status")  # the index's stat cache, as in a repository in use
        in_git = measure(root, "git")
    print(f"load average {os.getloadavg()[0]:.1f}")
    for kind, (ms, cpu_ms, found) in (("plain folder", plain), ("git", in_git)):
        print(f"{files:,} files, {kind}: {ms:.1f} ms wall, {cpu_ms:.1f} ms CPU, {found} found")
        report(
            f"files changed by an iteration, {files:,}-file project ({kind})",
            f"{ms:.1f} ms wall, {cpu_ms:.1f} ms CPU median (before + after + diff)",
            f"≤ {GOAL_MS:.0f} ms wall, the 4 edited files found",
            ms <= GOAL_MS and found == 4,
        )


if __name__ == "__main__":
    main()
