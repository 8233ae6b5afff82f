"""Every shell example in the README and docs/ runs as written.

Each fenced `bash`, `sh` or `console` block says how it is checked in its info string:
`example=NAME` runs it here, line by line in a fresh project, after the scenario NAME sets the
scene (files the text says exist, the agents' binaries stood in by a scripted agent that
confirms the goal at once); `norun=REASON` names why a block is not run here (see NOT_RUN).
A block with neither fails, so a new example cannot go untested by accident. A `console`
block whose command is meant to fail says its status with `exit=N`.

The block runs as one bash script in a terminal whose human answers yes to wild's questions
(approving and loosening the policy ask there), so a line may use what an earlier one set.
Each line must exit 0, unless its comment says otherwise (`# exits 1`). In a `console` block
the `$ ` lines are the commands, and an `output=exact` block (one command) must print what
it shows. A line that serves the dashboard alone (`wild --serve` without a goal) gets Ctrl-C
once it printed its URL, as a user would stop it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import termios
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELLS = ("bash", "sh", "console")
FENCE = re.compile(r"^(`{3,})(\w*)(.*)$")
ATTRIBUTE = re.compile(r"(\w+)=(\"[^\"]*\"|\S+)")
EXITS = re.compile(r"#.*\bexits (\d+)\b")
URL = re.compile(r"http://127\.0\.0\.1:\d+/\S*")
LINE_TIMEOUT_S = 120.0
# Why a block may stay unrun, and what covers it instead.
NOT_RUN = {
    "setup": "the README's set-up commands: .ci/run runs them verbatim (tests/test_docs.py)",
    "soak": "a long soak, run by hand; the suite runs the same code at a small scale",
    "bench": "the benchmarks, run by hand (bench/run_all.py); their figures are in the doc",
    "live": "the output of a live loop (its pids and times); tests/test_status*.py check it",
}


@dataclass(frozen=True)
class ShellExample:
    """One fenced shell block of a doc."""

    doc: str
    line: int
    lang: str
    attrs: dict[str, str]
    body: str

    @property
    def id(self) -> str:
        return f"{self.doc}@{self.line}"

    def commands(self) -> list[tuple[str, str]]:
        """(command, the output a console block shows after it), continuation lines joined."""
        lines = self.body.splitlines()
        found: list[tuple[str, str]] = []
        shown: list[str] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            if self.lang == "console" and not line.startswith("$ "):
                shown.append(line)
                i += 1
                continue
            if found and self.lang == "console":
                found[-1] = (found[-1][0], "\n".join(shown))
            shown = []
            command = line[2:] if self.lang == "console" else line
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            if command.strip() and not command.lstrip().startswith("#"):
                found.append((command, ""))
            i += 1
        if found and self.lang == "console":
            found[-1] = (found[-1][0], "\n".join(shown))
        return found


def shell_examples() -> list[ShellExample]:
    found: list[ShellExample] = []
    for doc in DOCS:
        lines = doc.read_text().splitlines()
        i = 0
        while i < len(lines):
            match = FENCE.match(lines[i])
            if match is None:
                i += 1
                continue
            fence, lang, rest = match.groups()
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith(fence))
            if lang in SHELLS:
                attrs = {k: v.strip('"') for k, v in ATTRIBUTE.findall(rest)}
                body = "\n".join(lines[i + 1 : end])
                found.append(
                    ShellExample(doc.relative_to(ROOT).as_posix(), i + 1, lang, attrs, body)
                )
            i = end + 1
    return found


EXAMPLES = shell_examples()
RUN = [e for e in EXAMPLES if "example" in e.attrs]


def _runs_it(test_file: str, block: str) -> bool:
    path = ROOT / test_file
    doc = block.split("@", 1)[0]
    return path.is_file() and path.is_relative_to(ROOT / "tests") and doc in path.read_text()


def test_every_shell_example_is_run_or_says_why_not() -> None:
    untold = [e.id for e in EXAMPLES if "example" not in e.attrs and "norun" not in e.attrs]
    assert untold == []
    reasons = {e.id: e.attrs["norun"] for e in EXAMPLES if "norun" in e.attrs}
    # A reason is one of NOT_RUN, or the test file that runs the block's very commands.
    assert {k: v for k, v in reasons.items() if v not in NOT_RUN and not _runs_it(v, k)} == {}
    assert sorted({e.attrs["example"] for e in RUN} - set(SCENES)) == []


# ---------------------------------------------------------------------- the stand-in agent

RESULT = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "result": "Done.\n<promise>COMPLETE</promise>",
    "total_cost_usd": 0.001,
    "usage": {"input_tokens": 10, "output_tokens": 5},
}
# A scripted agent for the docs' examples: it finishes whatever it is given at once, with the
# promise its work type asks for (docs/agents.md); Claude Code's stream-json when asked for it
# (--output-format), plain text otherwise.
AGENT = f"""#!/bin/sh
case "$WILD_WORK_TYPE" in
  human-input) promise=HUMAN_INPUT_PROCESSED ;;
  alert) promise=ALERT_RESOLVED ;;
  task) promise=TASK_COMPLETE ;;
  monitoring) promise=MONITORING_COMPLETE ;;
  *) promise=COMPLETE ;;
esac
case " $* " in
  *" --output-format "*)
    printf '%s\\n' {shlex.quote(json.dumps(RESULT))} | sed "s/COMPLETE/$promise/" ;;
  *) printf 'Done.\\n<promise>%s</promise>\\n' "$promise" ;;
esac
"""
AGENTS = ("CLAUDE", "CODEX", "OPENCODE", "GEMINI", "COPILOT", "CURSOR_AGENT", "AIDER")


@dataclass
class Scene:
    """Where a block runs: its folder and environment."""

    folder: Path
    env: dict[str, str]

    def wild(self, *args: str) -> None:
        result = subprocess.run(
            [sys.executable, "-m", "wild", *args],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr


def _fresh(scene: Scene) -> None:
    """A fresh folder: the block starts from nothing."""


def _ralph(scene: Scene) -> None:
    """An open-ralph-wiggum loop in the project and in a sibling folder (`--migrate --from`),
    and another project under the home folder (`WILD_DIR=~/exp1/.wild`)."""
    for folder in (scene.folder, scene.folder.parent / "old-project"):
        (folder / ".ralph").mkdir(parents=True)
        (folder / ".ralph" / "PROMPT.md").write_text("Make the tests pass.\n")
    other = Path(scene.env["HOME"]) / "exp1"
    other.mkdir()
    Scene(other, scene.env).wild("--init")


def _failed_run(scene: Scene) -> None:
    """A project whose sweep's run s20261125-1a2b-003 failed, as wild recorded it."""
    from wild.parsers.runs import RunRecord
    from wild.paths import WildPaths
    from wild.runs import signing
    from wild.store.runs_log import append_records

    scene.wild("--init")
    run = RunRecord(
        id="s20261125-1a2b-003",
        sweep="s20261125-1a2b",
        params={"lr": 0.01},
        resolved_instruction="python train.py --lr=0.01",
        status="failed",
        exit_code=1,
    )
    paths = WildPaths(scene.folder / ".wild")
    append_records(paths.runs_log, [signing.sign(signing.load_key(), run)])


def _list_work(scene: Scene) -> None:
    """The queue the `--list-work --json` example shows: an alert and two tasks."""
    scene.wild("--init")
    wild = scene.folder / ".wild"
    (wild / "tasks.md").write_text(
        "# Tasks\n\n- [ ] [P1] task-001: Preprocess the data\n- [ ] [P2] task-002: Train\n"
        "  - dependsOn: task-001\n"
    )
    alert = {
        "id": "alert-20260208-104523-9f2c",
        "timestamp": "2026-02-08T10:45:23Z",
        "severity": "critical",
        "source": "training-job-3",
        "type": "OOM",
        "description": "GPU memory exhausted",
        "status": "pending",
    }
    (wild / "alerts.jsonl").write_text(json.dumps(alert) + "\n")


def _experiments(scene: Scene) -> None:
    """A project here, and two under ~/experiments for `--serve --dir ~/experiments`."""
    scene.wild("--init")
    for name in ("lr-sweep", "ablation"):
        project = Path(scene.env["HOME"]) / "experiments" / name
        project.mkdir(parents=True)
        Scene(project, scene.env).wild("--init")


SCENES: dict[str, Callable[[Scene], None]] = {
    "fresh": _fresh,
    "ralph": _ralph,
    "failed-run": _failed_run,
    "list-work": _list_work,
    "experiments": _experiments,
}


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    folder = tmp_path / "project"
    folder.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    agent = bin_dir / "scripted-agent"
    agent.write_text(AGENT)
    agent.chmod(0o755)
    (folder / "my-agent.sh").write_text(AGENT)
    (folder / "my-agent.sh").chmod(0o755)
    wild = bin_dir / "wild"
    wild.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m wild "$@"\n')
    wild.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WILD_")}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(ROOT),
        IS_SANDBOX="1",  # the stand-in is not Claude Code, but wild warns as root otherwise
        **{f"WILD_{name}_BINARY": str(agent) for name in AGENTS},
    )
    yield Scene(folder, env)


def _serves_alone(command: str) -> bool:
    """`wild --serve` without a goal serves until Ctrl-C."""
    words = shlex.split(command, comments=True)
    if "wild" not in words or "--serve" not in words:
        return False
    rest = words[words.index("wild") + 1 :]
    positional = [
        w
        for i, w in enumerate(rest)
        if not w.startswith("-") and (i == 0 or rest[i - 1] not in VALUED)
    ]
    return not positional


VALUED = {"--port", "--dir"}
# A dashboard served alone: started as a job of its own (job control on, so it does not ignore
# SIGINT as a non-interactive shell's background job would), Ctrl-C once its URL is printed
# (30 s at most), its status kept for the line's check. The last line's output is removed
# first: the job truncates the file only once it runs, and a URL read from the previous
# dashboard's output interrupted this one before it had started (exit 130, under load).
SERVE_ALONE = (
    "rm -f .serve.out; set -m; {command} > .serve.out 2>&1 & pid=$!; set +m; "
    "for _ in $(seq 300); do grep -qs 'http://' .serve.out && break; sleep 0.1; done; "
    "kill -INT $pid; wait $pid; status=$?; cat .serve.out; (exit $status)"
)


def script(example: ShellExample) -> str:
    """The block as one bash script (so a line may use what an earlier one set), each line's
    exit status checked against what it says; a dashboard served alone gets Ctrl-C."""
    lines = ["set -o pipefail"]
    for number, (command, _shown) in enumerate(example.commands()):
        said = EXITS.search(command)
        expected = int(said.group(1)) if said else int(example.attrs.get("exit", "0"))
        run = command
        if _serves_alone(command):
            run = SERVE_ALONE.format(command=re.sub(r"\s+#.*$", "", command))
        lines += [
            f"echo {shlex.quote(FENCE_MARK + str(number))} >&2",
            run,
            f'rc=$?; [ "$rc" -eq {expected} ] || {{ echo "line {number}: exit $rc, not '
            f'{expected}: "{shlex.quote(command)} >&2; exit 97; }}',
        ]
    return "\n".join(lines) + "\n"


FENCE_MARK = "::example-line "


def _take_terminal() -> None:
    """In the child, after setsid: the pty on stdin becomes its controlling terminal, and
    Ctrl-C's signals act as at a terminal. A suite started as a background job (`cmd &` in a
    script) runs with SIGINT and SIGQUIT ignored, which every child inherits and which bash
    cannot reset for a signal ignored at its entry: the examples' `kill -INT` of a
    `wild --serve` then did nothing, and the example hung with the server holding its port."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def _answer_yes(controller: int) -> None:
    """The human at the terminal: says yes to each question wild asks on /dev/tty."""
    seen = b""
    answered = 0
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # every process holding the terminal has ended
            return
        if not chunk:
            return
        seen += chunk
        while seen.count(b"[y/N]") > answered:
            os.write(controller, b"y\n")
            answered += 1


def run_at_a_terminal(script_text: str, scene: Scene) -> subprocess.CompletedProcess[str]:
    """The block run as a person runs it: in a terminal (approving and loosening the policy
    ask there), output captured."""
    controller, terminal = os.openpty()
    try:
        proc = subprocess.Popen(
            ["bash", "-c", script_text],
            cwd=scene.folder,
            env=scene.env,
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=_take_terminal,  # noqa: PLW1509 (the child runs no thread of ours)
        )
    finally:
        os.close(terminal)
    human = threading.Thread(target=_answer_yes, args=(controller,), daemon=True)
    human.start()
    try:
        out, err = proc.communicate(timeout=LINE_TIMEOUT_S)
    finally:
        proc.kill()
        human.join(timeout=10)
        os.close(controller)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("example", RUN, ids=[e.id for e in RUN])
def test_the_example_runs_as_written(example: ShellExample, scene: Scene) -> None:
    SCENES[example.attrs["example"]](scene)
    result = run_at_a_terminal(script(example), scene)
    assert result.returncode == 0, f"{example.id}:\n{result.stdout}\n{result.stderr}"
    if example.attrs.get("output") == "exact":
        (command, shown), *_ = example.commands()
        printed = result.stdout + "".join(
            line + "\n" for line in result.stderr.splitlines() if not line.startswith(FENCE_MARK)
        )
        assert printed.rstrip("\n") == shown, command
