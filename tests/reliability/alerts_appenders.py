"""Many real processes appending alerts at once while the loop's reader reads incrementally.

Writers: `wild --alert` (some lines over 64 KiB), Python processes doing one `os.write` per line
(up to 150 KB), bash `printf … >>` loops (lines within the documented 4096 bytes), and writers
that die mid-line: forked children that write part of a line and SIGKILL themselves, and
writers the scenario kills from outside once they have written part of a line. Meanwhile the
reader follows the file with `read_new` (the cursor the loop saves), `AlertLog` (the loop's
index) and the summary (read commands). Used by `test_alerts_appenders.py` and, scaled up, as
a soak: `python -m tests.reliability.alerts_appenders --scale 20`.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wild.parsers.alerts_file import AlertCursor
from wild.parsers.lines import Problem
from wild.store.alerts_log import AlertLog, read_new
from wild.store.alerts_summary import read_open_alerts

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 600

_PYTHON_APPENDER = """
import json, os, random, sys
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(name)
fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
for i in range(count):
    pad = "p" * rng.choice([10, 1000, 5000, 70_000, 150_000])
    line = json.dumps({"id": f"{name}-{i}", "severity": "critical", "description": pad})
    data = line.encode() + b"\\n"
    assert os.write(fd, data) == len(data)
"""

_SHELL_APPENDER = r"""
path=$1; name=$2; count=$3
pad=$(head -c 3900 /dev/zero | tr '\0' s)
i=0
while [ "$i" -lt "$count" ]; do
  desc=${pad:0:$(( i * 397 % 3900 ))}
  line="{\"id\":\"$name-$i\",\"severity\":\"warning\",\"description\":\"$desc\"}"
  printf '%s\n' "$line" >> "$path"
  i=$((i + 1))
done
"""

_WILD_APPENDER = r"""
dir=$1; name=$2; count=$3
i=0
while [ "$i" -lt "$count" ]; do
  if [ $((i % 2)) = 1 ]; then desc=$(head -c 70000 /dev/zero | tr '\0' w); else desc="small $i"; fi
  "$WILD_PYTHON" -m wild --dir "$dir" --alert --severity critical --source "$name" \
    --type t --description "$desc" || exit 1
  i=$((i + 1))
done
"""

# Each child writes a cut-off alert line and kills itself before the rest: a torn write. Then
# the parent appends a whole line of its own.
_SELF_KILLING = """
import json, os, random, signal, sys
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(name)
for i in range(count):
    line = json.dumps({"id": f"{name}-{i}", "severity": "critical",
                       "description": "d" * rng.choice([10, 3000, 100_000])}).encode()
    cut = rng.randrange(1, len(line))
    pid = os.fork()
    if pid == 0:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        os.write(fd, line[:cut])
        os.kill(os.getpid(), signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    # The next writer may be this one (its line glued onto the fragment) or any other.
    after = json.dumps({"id": f"{name}-after-{i}", "severity": "critical"}).encode() + b"\\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    assert os.write(fd, after) == len(after)
    os.close(fd)
"""

# Writes part of a line, says so, and waits to be killed from outside.
_KILLED_FROM_OUTSIDE = """
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
os.write(fd, b'{"id":"' + sys.argv[2].encode() + b'","severity":"critical","description":"')
print("torn", flush=True)
sys.stdin.read()
"""


@dataclass(frozen=True)
class Outcome:
    """What was written and what each reader read."""

    written: list[str]  # ids of every complete line, from the writers themselves
    incremental: list[str]  # ids in the order the chained incremental reads met them
    whole: list[str]  # ids of one full read at the end
    loop: list[str]  # ids in the loop's index (AlertLog refreshed as it went)
    summary: list[str]  # open alert ids as the read commands' summary gives them
    problems: list[Problem]
    resets: int  # incremental reads that had to start again (must be 0: nothing truncates)
    reads: int


def _spawn(args: list[str], **more: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WILD_PYTHON": sys.executable}
    return subprocess.Popen(args, env=env, text=True, **more)


def run(folder: Path, scale: int = 1) -> Outcome:
    """Run every writer at once against `folder/.wild/alerts.jsonl` while reading it."""
    wild_dir = folder / ".wild"
    init = _spawn([sys.executable, "-m", "wild", "--init", "--dir", str(wild_dir)])
    assert init.wait(TIMEOUT_S) == 0
    path, summary_path = wild_dir / "alerts.jsonl", folder / "summary.json"
    py_count, sh_count, wild_count, dead_count = 60 * scale, 150 * scale, 4 * scale, 15 * scale
    python = [
        _spawn([sys.executable, "-c", _PYTHON_APPENDER, str(path), f"py{k}", str(py_count)])
        for k in range(2)
    ]
    shells = [
        _spawn(["bash", "-c", _SHELL_APPENDER, "sh", str(path), f"sh{k}", str(sh_count)])
        for k in range(2)
    ]
    wilds = [
        _spawn(
            ["bash", "-c", _WILD_APPENDER, "sh", str(wild_dir), f"wild{k}", str(wild_count)],
            stdout=subprocess.PIPE,
        )
        for k in range(2)
    ]
    dying = [
        _spawn([sys.executable, "-c", _SELF_KILLING, str(path), "dead", str(dead_count)]),
    ]
    outside = [
        _spawn(
            [sys.executable, "-c", _KILLED_FROM_OUTSIDE, str(path), f"killed-{k}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        for k in range(scale)
    ]
    log = AlertLog(path)
    cursor: AlertCursor | None = None
    incremental: list[str] = []
    resets = reads = 0

    def read_once() -> None:
        nonlocal cursor, resets, reads
        result = read_new(path, cursor)
        incremental.extend(a.id for a in result.entries)
        resets += result.reset
        reads += 1
        cursor = result.cursor
        log.refresh()
        if reads % 4 == 1:  # the summary rewrites every open alert: too slow for every read
            read_open_alerts(path, summary_path, file="alerts.jsonl")

    for proc in outside:
        assert proc.stdout is not None and proc.stdout.readline() == "torn\n"
        read_once()
        proc.kill()  # SIGKILL, its line half written
        proc.wait(TIMEOUT_S)
    writers = [*python, *shells, *wilds, *dying]
    deadline = time.monotonic() + TIMEOUT_S
    while any(proc.poll() is None for proc in writers) and time.monotonic() < deadline:
        read_once()
        time.sleep(0.01)  # pacing only: the checks below do not depend on when reads happen
    printed = [proc.communicate(timeout=TIMEOUT_S)[0] for proc in wilds]
    assert [proc.wait(TIMEOUT_S) for proc in writers] == [0] * len(writers)
    read_once()
    written = [f"py{k}-{i}" for k in range(2) for i in range(py_count)]
    written += [f"sh{k}-{i}" for k in range(2) for i in range(sh_count)]
    written += [alert_id for out in printed for alert_id in out.split()]
    written += [f"dead-after-{i}" for i in range(dead_count)]
    whole = read_new(path, None)
    summary, _ = read_open_alerts(path, summary_path, file="alerts.jsonl")
    return Outcome(
        written=written,
        incremental=incremental,
        whole=[a.id for a in whole.entries],
        loop=[a.id for a in log.index.all()],
        summary=[a.id for a in summary],
        problems=list(whole.problems),
        resets=resets,
        reads=reads,
    )


def duplicates(ids: list[str]) -> list[str]:
    return sorted(alert_id for alert_id, n in Counter(ids).items() if n > 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=20, help="writers' work times this")
    parser.add_argument("--folder", type=Path, default=Path("/tmp/wild-alerts-soak"))
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    outcome = run(args.folder, args.scale)
    lost = sorted(set(outcome.written) - set(outcome.incremental))
    extra = sorted(set(outcome.incremental) - set(outcome.written))
    print(
        f"{len(outcome.written)} alerts written, {len(outcome.incremental)} read in "
        f"{outcome.reads} incremental reads, {len(lost)} lost, {len(extra)} invented, "
        f"{len(duplicates(outcome.incremental))} read twice, {outcome.resets} resets, "
        f"{len(outcome.problems)} problem lines, {time.monotonic() - started:.1f} s"
    )
    sys.exit(1 if lost or extra or duplicates(outcome.incremental) or outcome.resets else 0)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    main()
