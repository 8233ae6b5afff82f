"""The loop imports, before its first agent starts, only what deciding and starting it needs.

Issue 8: launch → first agent running took 162 ms, most of it imports the agent's start does
not need (the run backends and importlib.metadata, the barrier checker, the sweep parser).
Issue 22: it was 4.4× `python -c 'import click, orjson'` starting the same agent; the sweep
analysis' metrics and the checks' runner came off the start path too. They load when first
used, or once the agent runs; this fails when one creeps back in front.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

# Run the loop in a fresh interpreter; list the modules loaded when the agent is about to be
# spawned (its command is being built: the runner's last step before the fork), when its gate
# opens (the runner's one-byte write: the agent's program runs from then on), and at the end.
# Whether the garbage collector runs is noted at the go, once the agent ended (its output is
# read) and at the end; and at the go, whether human.md's section patterns were compiled.
PROBE = """
import sys
# What the interpreter loaded before wild (a site's .pth may import tempfile, as certifi's
# does): only what wild's launch imports is listed.
before = set(sys.modules)
import gc
import os
import re
# Patterns only later work uses (issue 22 item 8): compiled when first used, not on the way.
LAZY = {
    "output lone surrogate": "[\\ud800-\\udfff]",
    "clock year": r"(?<!\\d)\\d{4}(?!\\d)",
    "lines other breaks": r"[^\\n]*\\n|[^\\n]+\\Z",
    "lines undecodable": "[\\udc80-\\udcff]",
    "masking fence run": r"`{3,}|~{3,}",
    "field_values duration": r"(?P<n>\\d+(?:\\.\\d*)?|\\.\\d+)[ \\t]*(?P<unit>[A-Za-z]*)",
    "jsonl structure": rb'["{}\\[\\]]',
    "tasks edits task number": r"task-([0-9]+)",
    "tasks edits newlines": r"\\s*[\\r\\n]+\\s*",
    "policy whole duration": (
        r"\\s*(?:(?<![\\d.])(\\d+(?:\\.\\d+)?)\\s*"
        r"(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)(?![a-z])[\\s,]*(?:and\\s+)?)+"
    ),
    "policy plain field": (
        r"[ \\t]*[-*+][ \\t]+(?P<key>[A-Za-z][A-Za-z \\t-]*?)[ \\t]*:[ \\t]*(?P<value>.*)"
    ),
}
real_compile = re.compile
seen = []
def compiling(pattern, flags=0):
    seen.append(pattern)
    return real_compile(pattern, flags)
re.compile = compiling
from wild.agents import orphans, runner
from wild.__main__ import main
from wild import record
# Each exec of a record method's code (a shape not written out in wild.record_inits).
real_compiled_codes = record._compiled_codes
execs = []
def compiled_codes(text):
    execs.append(text.splitlines()[1].strip())
    return real_compiled_codes(text)
record._compiled_codes = compiled_codes
real = orphans.dying_with_parent
real_write = os.write
real_read = runner._read_output
at_spawn = []
at_go = []
collecting = {}
compiled = {}
def listing(*args, **kwargs):
    if not at_spawn:
        at_spawn.append(sorted(set(sys.modules) - before))
        compiled["record code"] = list(execs)
    return real(*args, **kwargs)
def writing(fd, data):
    if at_spawn and not at_go and data == b"\\n":
        at_go.append(sorted(set(sys.modules) - before))
        collecting["go"] = gc.isenabled()
        grammar = getattr(sys.modules["wild.parsers.human"], "_grammar", None)
        compiled["human.md sections"] = grammar.cache_info().currsize if grammar else None
        compiled["lazy"] = sorted(name for name, source in LAZY.items() if source in seen)
    return real_write(fd, data)
def reading(*args, **kwargs):
    collecting.setdefault("agent_ended", gc.isenabled())
    return real_read(*args, **kwargs)
orphans.dying_with_parent = listing
os.write = writing
runner._read_output = reading
out_path = sys.argv[1]
sys.argv = ["wild", *sys.argv[2:]]
try:
    main()
except SystemExit:
    pass
finally:
    collecting["end"] = gc.isenabled()
    import json  # not orjson: importing it first would import dataclasses before wild does
    with open(out_path, "w") as out:
        out.write(json.dumps({"spawn": at_spawn[0] if at_spawn else None,
                                "go": at_go[0] if at_go else None,
                                "end": sorted(sys.modules),
                                "collecting": collecting,
                                "compiled": compiled}))
"""

# Not before the first agent starts (a name or a package prefix). filelock is not here: the
# loop marks the task started in tasks.md, under wild's lock, before the agent starts.
LATE = (
    "wild.runs.backend",  # with importlib.metadata: only when a run starts
    "importlib.metadata",
    "email",
    "wild.runs.supervisor",
    "wild.runs.record_sweep",
    "wild.runs.markers",
    "wild.parsers.sweeps",  # only when a reply holds a sweep
    "wild.agents.sweep_tags",
    "wild.barriers.checker",  # started once the agent runs (its gate open)
    "concurrent.futures",
    "wild.barriers.webhook",  # only with --webhook-port
    "http.server",
    "wild.agents.orphan_watch",  # the watcher's, after the loop died
    "wild.commands.edits",  # only with --policy
    "wild.policy.presets",
    # Issue 22: a sweep's analysis reads metrics (the trackers' decoders, the comparison across
    # seeds, statistics with fractions and decimal); the checks' runner runs once work is done;
    # the logs are compacted once they grew.
    "wild.metrics.comparison",
    "wild.metrics.kept",
    "wild.parsers.run_compare",
    "wild.parsers.early_stop",
    "wild.runs.table",
    "statistics",
    "fractions",
    "decimal",
    "wild.completion.run",
    "wild.store.alerts_compaction",  # once alerts.jsonl grew
    "wild.store.runs_compaction",  # once runs.jsonl grew
    # The agent's output is read once it ended: the stream-json reader and the rate-limit
    # detector, with zoneinfo (a reset time's zone).
    "wild.agents.stream_json",
    "zoneinfo",
    # What only a run that ended needs: its judgement and the claims it makes (the signals'
    # reader, with their records and patterns), a task's checks, the end of the plan.
    "wild.loop.judge",
    "wild.loop.claims",
    "wild.loop.ending",
    "wild.loop.task_checks",
    "wild.agents.signals",
    # Random ids come from os.urandom: secrets (with hmac) only makes a webhook's token.
    "secrets",
    "hmac",
    # The folder watcher starts once the agent runs, comparing the files with the baseline it
    # took before the first read: watchdog (with logging and queue) is not on the way.
    "watchdog",
    "logging",
    # The loop run is read without click (wild.cli_options): click and its command (~11 ms)
    # are the other commands', and a failure's.
    "click",
    "wild.cli",
    # The devices a sandbox binds are looked for only under --sandbox.
    "glob",
    # OpenSSL's sha256 (~2.4 ms to load): the few small things hashed before the go (the
    # approval store's file name, wild's own writes) take CPython's own (wild.digest).
    "_hashlib",
    # The `ctypes` package (~1.1 ms): the subreaper's prctl and the swap's renameat2 are
    # called through `_ctypes` alone (wild.libc).
    "ctypes",
    # `string` (~0.9 ms with Template's pattern): the prompt is filled by
    # wild.prompt_files.safe_substitute.
    "string",
    # `inspect` with `ast`, `dis` and `tokenize` (~4.5 ms of CPU): `dataclasses` imports it
    # for the docstring of a class it makes itself; wild's records make their own
    # (wild.record._import_dataclasses).
    "inspect",
    "ast",
    "dis",
    "tokenize",
    # `tempfile` with `shutil` and `random` (~3 ms): wild's crash-safe writes name their temp
    # files themselves (wild.store.files.temp_beside), an agent's prompt on stdin is a memfd.
    "tempfile",
    "shutil",
    "random",
)

AGENT = "cat > /dev/null\necho '<promise>TASK_COMPLETE</promise>'\n"


def late(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in LATE)]


def test_the_first_agent_starts_before_what_only_later_work_needs(tmp_path: Path) -> None:
    root = tmp_path / ".wild"
    subprocess.run([sys.executable, "-m", "wild", "--init", "--dir", str(root)], check=True)
    (root / "tasks.md").write_text("# Tasks\n\n- [ ] [P1] task-001: Do it\n")
    (tmp_path / "agent.sh").write_text(AGENT)
    listing = tmp_path / "modules.json"
    loop = [sys.executable, "-c", PROBE, str(listing), "build it", "--agent-cmd", "sh agent.sh"]
    result = subprocess.run(
        [*loop, "--max-iterations", "1", "--dir", str(root)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    found = orjson.loads(listing.read_bytes())
    assert found["spawn"] is not None, result.stdout + result.stderr  # the agent was started
    assert "wild.loop.driver" in found["spawn"]
    assert late(found["spawn"]) == []
    # Nor while it waits at its gate (the run's record written, its log opened): the checker
    # starts once the agent's program runs.
    assert found["go"] is not None, result.stdout + result.stderr
    assert late(found["go"]) == []
    # The listing can fail: the checker and the watcher, started once the agent ran, show up
    # at the end.
    assert "wild.barriers.checker" in found["end"]
    assert "watchdog.observers" in found["end"]
    assert "_hashlib" in found["end"]  # loaded while the agent works, for the later hashing
    # The collector waits until the first agent runs (it would walk the imports' objects and
    # free nothing), then runs as ever: while the agent works and after the loop.
    assert found["collecting"] == {"go": False, "agent_ended": True, "end": True}
    # human.md holds no input: its sections' patterns (~3 ms to compile) are not compiled.
    # Nor the patterns only later work uses (~1 ms to compile): a character that is not UTF-8,
    # a hand-written time, a duration, a line break other than "\\n", a fence, a torn JSON
    # line, a new task's number, a policy field without bold.
    # Nor a record's `__init__`, `__eq__`, `__hash__` or `__repr__` (~0.25 ms each): every
    # shape used before the agent is written out in wild.record_inits (SHAPES, METHODS in
    # tests/record_inits_source.py); a record changed to a new shape shows up here.
    assert found["compiled"] == {"human.md sections": 0, "lazy": [], "record code": []}
