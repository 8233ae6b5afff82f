"""Benchmark: N instant runs through the public CLI (`wild --sweep FILE --run`), against the
same instant runs spawned by a plain Python loop and by `xargs -P`, with the same slots.

Run from the repository root: `PYTHONPATH=. python bench/bench_sweep_scale.py [N] [SLOTS]`
(default 1000 runs, 16 slots). It measures N/10 and N runs, each in a fresh project: every
run is `sh -c 'echo "$WILD_RUN_ID" >> spawns' --i=K`, so the count of each id in `spawns`
says it started exactly once. The baselines run the same shell command N times with SLOTS
at once. Figures (issue 23, "Speed and scale"): wild's overhead per run (its wall time per
run minus the plain loop's), every run started exactly once, and the loop's own CPU per run
and peak RSS at N against N/10 (flat: ≤ 1.2x). The loop's CPU and RSS are its own
(`getrusage(RUSAGE_SELF)` at its exit, in the process that runs `wild.cli.main`), not its
wrappers'.

Each project is deleted only once every measurement is done, not between the N/10 and the N
runs: this machine's disk is ext4 without a journal, which skips every inode freed in the
last 60 s (300 s while its inode table block is not yet written back) when it allocates one
(`recently_deleted`, reading each one's inode table entry, again at every allocation), so a
sweep started right after the N/10 project's ~5,000 files were deleted paid ~0.4-0.6 ms of
kernel CPU for each file it created (5 a run; 16 us otherwise): the previous measurement's
cleanup, not wild's overhead (docs/benchmarks.md, h59). For the same reason each size waits
(at most SETTLE_S) until a new file costs at most CALM_US of CPU in a fresh folder: an
earlier run's cleanup (this script's own, a test suite's) would otherwise be paid by the
sweep's files, more the further the sweep goes. A disk with a journal makes no such scan and
never waits. `WILD_BENCH_CALM_US` sets CALM_US where a calm disk costs more.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from figures import report

SIZE = 1000
SLOTS = 16
PROBE_FILES = 200  # files made to read what one costs here before each sweep
CALM_US = float(os.environ.get("WILD_BENCH_CALM_US", "40"))  # a new file's CPU, settled disk
SETTLE_S, SETTLE_STEP_S = 300.0, 10.0  # ext4's longest window, and how often to look
SPAWN = 'echo "$WILD_RUN_ID" >> {spawns}'
# The CLI, run in this process's child so that its own rusage is what it reports at exit.
CLI = """
import atexit, json, resource, sys
usage_path = sys.argv[1]
def said():
    use = resource.getrusage(resource.RUSAGE_SELF)
    with open(usage_path, "w") as out:
        json.dump({"cpu_s": use.ru_utime + use.ru_stime, "sys_s": use.ru_stime,
                   "rss_mb": use.ru_maxrss / 1024}, out)
atexit.register(said)
sys.argv = ["wild", *sys.argv[2:]]
from wild.cli import main
main()
"""


def project(folder: Path, runs: int, shell: str | None = None) -> Path:
    """A wild project with an approved sweep of `runs` instant runs of `sh -c SHELL`
    (default: each appends its id to `spawns`)."""
    from wild.barriers.approvals import approve
    from wild.commands.init import init_wild
    from wild.parsers.sweeps import SweepSpec, parse_sweep
    from wild.paths import WildPaths
    from wild.runs.resolve import program

    root = folder / "proj"
    root.mkdir()
    shell = SPAWN.format(spawns=folder / "spawns") if shell is None else shell
    command = "sh -c " + json.dumps(shell)
    spec = {
        "name": "instant",
        "base_command": command,
        "parameters": {"i": list(range(runs))},
        "resources": {"cpus": 1},
    }
    text = json.dumps(spec)
    (root / "sweep.json").write_text(text)
    init_wild(WildPaths(root / ".wild"))
    parsed = parse_sweep(text)
    assert isinstance(parsed, SweepSpec), parsed
    approve(root, program(parsed, python=sys.executable))
    return root


def create_cost_us(folder: Path, files: int = PROBE_FILES) -> float:
    """The CPU one new file costs in `folder` (kept: deleting them would add to what it
    measures), in microseconds: shown beside each figure, since it is the filesystem's state,
    not wild's, and wild makes 5 files a run (folder, claim, pid, log, marker)."""
    probe = folder / "create-probe"
    probe.mkdir()
    begin = time.process_time()
    for number in range(files):
        os.close(os.open(probe / str(number), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    return (time.process_time() - begin) * 1e6 / files


def settled_disk(folder: Path) -> tuple[float, float]:
    """What a new file costs in `folder` once the disk has settled (see the module's doc),
    and the seconds waited for it: probed every SETTLE_STEP_S, at most SETTLE_S."""
    begin, attempt = time.monotonic(), 0
    while True:
        attempt += 1
        probe = folder / f"settle-{attempt}"
        probe.mkdir()
        cost = create_cost_us(probe)
        waited = time.monotonic() - begin
        if cost <= CALM_US or waited >= SETTLE_S:
            return cost, waited
        time.sleep(SETTLE_STEP_S)


def wild_run(runs: int, slots: int, kept: contextlib.ExitStack) -> dict[str, float]:
    """N runs through the CLI in a fresh project, deleted when `kept` closes."""
    name = kept.enter_context(tempfile.TemporaryDirectory())
    folder = Path(name)
    create_us, settle_s = settled_disk(folder)
    os.environ["XDG_CONFIG_HOME"] = name  # the signing key and approvals: not the user's
    root = project(folder, runs)
    usage = folder / "usage.json"
    argv = [sys.executable, "-c", CLI, str(usage), "--sweep", "sweep.json", "--run"]
    argv += ["--run-slots", str(slots)]
    begin = time.perf_counter()
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - begin
    # The same probe right after the sweep: the loop frees no inode per run (strace: its
    # unlinks and renames are a handful per sweep, whatever its size), so a new file that
    # costs more after the sweep than before it was made dear by frees elsewhere on the disk
    # during the sweep, and the loop's kernel CPU per run rose with it, not with the sweep.
    create_after_us = create_cost_us(folder)  # its own `create-probe` beside the project
    spawns = folder / "spawns"
    counts = Counter(spawns.read_text().split() if spawns.exists() else [])
    if not usage.exists():
        raise SystemExit(f"wild failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    used = json.loads(usage.read_text())
    if not counts:
        raise SystemExit(f"wild ran nothing:\n{done.stdout[-2000:]}")
    return {
        "runs": runs,
        "wall_s": wall,
        "cpu_s": used["cpu_s"],
        "sys_s": used["sys_s"],
        "rss_mb": used["rss_mb"],
        "twice": sum(1 for n in counts.values() if n > 1),
        "never": runs - len(counts),
        "create_us": create_us,
        "create_after_us": create_after_us,
        "settle_s": settle_s,
    }


def python_loop(runs: int, slots: int) -> float:
    """The same commands, SLOTS at a time, by a plain Python loop: its wall time."""
    with tempfile.TemporaryDirectory() as name:
        spawns = Path(name) / "spawns"
        command = SPAWN.format(spawns=spawns)
        begin = time.perf_counter()
        going: set[subprocess.Popen[bytes]] = set()
        for number in range(runs):
            if len(going) >= slots:
                pid, _status = os.wait()
                going = {proc for proc in going if proc.pid != pid}
            env = {**os.environ, "WILD_RUN_ID": f"r{number}"}
            going.add(subprocess.Popen(["sh", "-c", command, f"--i={number}"], env=env))
        for proc in going:
            proc.wait()
        return time.perf_counter() - begin


def xargs(runs: int, slots: int) -> float:
    """The same commands by `xargs -P SLOTS`: its wall time."""
    with tempfile.TemporaryDirectory() as name:
        spawns = Path(name) / "spawns"
        script = 'WILD_RUN_ID="$1" sh -c ' + json.dumps(SPAWN.format(spawns=spawns)) + ' "--i=$1"'
        ids = "".join(f"r{number}\n" for number in range(runs)).encode()
        begin = time.perf_counter()
        subprocess.run(
            ["xargs", "-P", str(slots), "-n", "1", "sh", "-c", script, "sh"],
            input=ids, check=True,
        )  # fmt: skip
        return time.perf_counter() - begin


def measure(runs: int, slots: int, kept: contextlib.ExitStack) -> dict[str, float]:
    figures = wild_run(runs, slots, kept)
    figures["loop_s"] = python_loop(runs, slots)
    figures["xargs_s"] = xargs(runs, slots)
    return figures


def main() -> None:
    big = int(sys.argv[1]) if len(sys.argv) > 1 else SIZE
    slots = int(sys.argv[2]) if len(sys.argv) > 2 else SLOTS
    with contextlib.ExitStack() as kept:  # every project deleted after the last measurement
        small, large = measure(max(1, big // 10), slots, kept), measure(big, slots, kept)
    for f in (small, large):
        n = f["runs"]
        print(
            f"{int(n)} runs, {slots} slots: wild {f['wall_s']:.1f} s "
            f"({1000 * f['wall_s'] / n:.2f} ms/run), python loop {1000 * f['loop_s'] / n:.2f} "
            f"ms/run, xargs -P {1000 * f['xargs_s'] / n:.2f} ms/run; the loop's own CPU "
            f"{1000 * f['cpu_s'] / n:.2f} ms/run (in the kernel {1000 * f['sys_s'] / n:.2f}), "
            f"peak RSS {f['rss_mb']:.1f} MiB; "
            f"{int(f['twice'])} started twice, {int(f['never'])} never; a new file here "
            f"cost {f['create_us']:.0f} us of CPU before it, after {f['settle_s']:.0f} s of "
            f"waiting for the disk to settle (≤ {CALM_US:.0f} us), and "
            f"{f['create_after_us']:.0f} us right after it"
        )
    n = large["runs"]
    overhead = 1000 * (large["wall_s"] - large["loop_s"]) / n
    report(
        f"wild's overhead per instant run, {int(n)} runs on {slots} slots (vs a Python loop)",
        f"{overhead:.2f} ms/run ({large['wall_s'] / large['loop_s']:.0f}x the loop's wall)",
        "≤ 5 ms/run",
        overhead <= 5,
    )
    report(
        f"{int(n)} instant runs: every run started exactly once",
        f"{int(large['twice'])} started twice, {int(large['never'])} never started",
        "0 twice, 0 never",
        large["twice"] == 0 and large["never"] == 0,
    )
    cpu_small, cpu_large = small["cpu_s"] / small["runs"], large["cpu_s"] / n
    report(
        f"the loop's own CPU per run, {int(n)} vs {int(small['runs'])} runs",
        f"{1000 * cpu_large:.2f} ms vs {1000 * cpu_small:.2f} ms = {cpu_large / cpu_small:.2f}x",
        "flat: ≤ 1.2x",
        cpu_large / cpu_small <= 1.2,
    )
    rss = large["rss_mb"] / small["rss_mb"]
    report(
        f"the loop's peak RSS, {int(n)} vs {int(small['runs'])} runs",
        f"{large['rss_mb']:.1f} MiB vs {small['rss_mb']:.1f} MiB = {rss:.2f}x",
        "flat: ≤ 1.2x",
        rss <= 1.2,
    )


if __name__ == "__main__":
    main()
