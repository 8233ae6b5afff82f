"""SIGKILL the real `wild` loop at random moments of a real run, restarting it each time, then
check what a night of crashes must leave: nothing corrupt, nothing lost, nothing run twice at
once, no process left. Shared by the suite's test and the soak script run by hand.

The agent (a custom `--agent-cmd`) records every run: a `start` line when it begins (after
checking that no earlier run of any item still runs: `overlap` otherwise), the `setsid`
grandchild it leaves behind, and an `end` line just before it gives its promise.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from wild.commands.init import init_wild
from wild.parsers import human as human_md
from wild.parsers import tasks as tasks_md
from wild.parsers.events_log import parse_events
from wild.parsers.state import LoadedState, parse_state
from wild.paths import WildPaths
from wild.store.alerts_log import read_new

WAIT_S = 60.0  # a loop that has not finished by then is a failure
MARK = "WILD_ORPHANS_TEST"  # in the environment of the loops and so of all their descendants

AGENT = r"""
import os, random, subprocess, sys, time
from pathlib import Path

here = Path(__file__).parent
sys.stdin.read()

def ticks(pid):
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()
    return None if fields[0] in "ZX" else fields[19]

def record(line):
    fd = os.open(here / "runs.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, (line + "\n").encode())  # one write: whole even if we are killed
    os.close(fd)

me, item = os.getpid(), os.environ["WILD_WORK_ID"]
runs = (here / "runs.log").read_text().splitlines() if (here / "runs.log").exists() else []
ended = {line.split()[2] for line in runs if line.startswith("end ")}
for row in (line.split() for line in runs):
    if row[0] == "start" and row[2] not in ended and ticks(int(row[2])) == row[3]:
        record(f"overlap {item} {me} {row[1]} {row[2]}")
record(f"start {item} {me} {ticks(me)} {os.environ['WILD_ITERATION']}")
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                         start_new_session=True)
record(f"child {item} {child.pid} {ticks(child.pid)}")
time.sleep(random.uniform(0.05, 0.2))
record(f"end {item} {me}")
kind = os.environ["WILD_WORK_TYPE"]
print("<promise>" + ("COMPLETE" if kind == "planning" else "TASK_COMPLETE") + "</promise>")
"""


@dataclass
class Figures:
    kills: int = 0
    kills_during_agent: int = 0
    runs: int = 0
    reruns: int = 0  # finished runs beyond one per task: the kill came after the agent's end
    overlaps: int = 0
    left_alive: int = 0
    problems: int = 0
    reused_numbers: int = 0  # logs named `iteration-N.2.log`: a number given to a second run


class Project:
    """A project with `tasks` tasks and the recording agent."""

    def __init__(self, root: Path, tasks: int) -> None:
        self.root = root
        self.paths = WildPaths(root / "proj" / ".wild")
        init_wild(self.paths)
        lines = [f"- [ ] [P2] task-{n:03d}: Step {n}" for n in range(1, tasks + 1)]
        self.paths.tasks.write_text("# Tasks\n\n" + "\n".join(lines) + "\n")
        self.tasks = [f"task-{n:03d}" for n in range(1, tasks + 1)]
        (root / "agent.py").write_text(AGENT)
        self.output = root / "loop.out"

    def start(self) -> subprocess.Popen[bytes]:
        with self.output.open("ab") as out:
            return subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "wild",
                    "Do every step",
                    "--agent-cmd",
                    f"{sys.executable} {self.root / 'agent.py'}",
                    "--dir",
                    str(self.paths.root),
                ],
                cwd=self.root,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, MARK: str(self.root)},
            )

    def runs(self) -> list[list[str]]:
        log = self.root / "runs.log"
        return [line.split() for line in log.read_text().splitlines()] if log.exists() else []

    def marked(self) -> list[int]:
        """Processes still alive that descend from one of our loops (they carry the mark)."""
        entry = f"{MARK}={self.root}".encode()
        found = []
        for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue
            if entry in environ.split(b"\0"):
                found.append(pid)
        return found

    def problems(self) -> list[str]:
        """What does not parse in `.wild/`."""
        found: list[str] = []
        state = parse_state(self.paths.state.read_bytes(), "state.json")
        if not isinstance(state, LoadedState) or state.problems:
            found.append(f"state.json: {state}")
        for name, problems in (
            ("tasks.md", tasks_md.parse(self.paths.tasks.read_text()).problems),
            ("human.md", human_md.parse(self.paths.human.read_text()).problems),
            ("alerts.jsonl", read_new(self.paths.alerts, None).problems),
            ("events.log", parse_events(self.paths.events.read_bytes(), "events.log")[1]),
        ):
            found += [f"{name}: {problem}" for problem in problems]
        return found


def kill_at_random(project: Project, kills: int, seed: int, max_delay_s: float) -> Figures:
    """`kills` loops SIGKILLed at random moments, then one run to the end; the figures.

    A moment is drawn as a random number of the agent's records to wait for (0 to 3: before
    any agent, while one runs, after one ended but before the loop judged it) plus a random
    delay up to `max_delay_s`, so kills land all over a run, not only during the loop's start.
    """
    rng = random.Random(seed)
    figures = Figures()
    for _ in range(kills):
        proc = project.start()
        before = len(project.runs())
        target = before + rng.randint(0, 3)
        deadline = time.monotonic() + WAIT_S
        while len(project.runs()) < target and proc.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"the loop made no progress:\n{project.output.read_text()}")
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, max_delay_s))  # the random moment itself, not a wait
        proc.send_signal(signal.SIGKILL)
        figures.kills += proc.wait() == -signal.SIGKILL  # not when it had already ended
        rows = project.runs()[before:]  # what this loop's agents recorded
        started = {r[2] for r in rows if r[0] == "start"}
        figures.kills_during_agent += bool(started - {r[2] for r in rows if r[0] == "end"})
    last = project.start()
    try:
        last.wait(WAIT_S + len(project.tasks))  # the work left: about a second a task at most
    finally:
        last.kill()
        last.wait()
    if last.returncode != 0:
        raise AssertionError(f"the last loop failed:\n{project.output.read_text()}")
    rows = project.runs()
    figures.runs = sum(r[0] == "start" for r in rows)
    finished = Counter(r[1] for r in rows if r[0] == "end" and r[1].startswith("task-"))
    figures.reruns = sum(n - 1 for n in finished.values() if n > 1)
    figures.overlaps = sum(r[0] == "overlap" for r in rows)
    deadline = time.monotonic() + WAIT_S
    while project.marked() and time.monotonic() < deadline:
        time.sleep(0.05)
    figures.left_alive = len(project.marked())
    figures.problems = len(project.problems())
    figures.reused_numbers = len(list(project.paths.logs.glob("iteration-*.*.log")))
    tasks = tasks_md.parse(project.paths.tasks.read_text()).tasks
    lost = [t.id for t in tasks if t.status != "complete"]
    if [t.id for t in tasks] != project.tasks or lost or set(finished) != set(project.tasks):
        raise AssertionError(f"tasks lost or duplicated: {lost}, finished {dict(finished)}")
    return figures


def main() -> int:
    """The soak: `python tests/reliability/soak_orphans_sigkill.py [KILLS] [SEED]`."""
    import tempfile

    kills = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    with tempfile.TemporaryDirectory() as tmp:
        started = time.monotonic()
        project = Project(Path(tmp), tasks=kills + 10)  # work left for every loop to be killed in
        figures = kill_at_random(project, kills, seed, max_delay_s=0.1)
        print(f"{figures} in {time.monotonic() - started:.0f} s")
    bad = figures.overlaps or figures.left_alive or figures.problems or figures.reused_numbers
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
