"""The loop run read without click reads what click's command reads (issue 22 item 8).

`python -m wild "GOAL" --agent-cmd … --max-iterations 1` is read by
`wild.cli_options.parse_loop_run`, from the options' one description (`OPTIONS`, from which
wild.cli builds the click command), and runs the loop without importing click. Whatever it
reads, it must read as click does; whatever it cannot, it leaves to click (None).
"""

from __future__ import annotations

import io
import math
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli_support import init_wild_dir
from wild.__main__ import loop_run
from wild.cli import cli
from wild.cli_options import (
    FLAG,
    LOOP_RUN_OPTIONS,
    OPTIONS,
    SUBCOMMANDS,
    echo_line,
    parse_loop_run,
)

# The bench's command line (bench/bench_peer.py, launch).
BENCH = ["bench", "--agent-cmd", "sh agent.sh", "--max-iterations", "1", "--dir", "x/.wild"]
OTHER_FLAGS = sorted({f for o in OPTIONS for f in o.flags} - set(LOOP_RUN_OPTIONS))
WORDS = [
    "",
    "-",
    "--",
    "-h",
    "--help",
    "--version",
    "demo",
    "status",
    " List-Work ",
    "help",
    "0",
    "-1",
    "1e12",
    "1e13",
    "nan",
    "inf",
    "1_000",
    " 7 ",
    "65536",
    "101",
    "6h",
    "a=b",
    "--once",
    "--agent",
]


def click_params(argv: list[str]) -> dict[str, Any] | None:
    """The parameters click's `wild` gives for `argv`; None where it refuses them or acts."""
    try:
        with redirect_stdout(io.StringIO()):  # --help and --version print, then exit
            ctx = cli.make_context("wild", list(argv))
    except (click.exceptions.ClickException, click.exceptions.Exit):
        return None
    return dict(ctx.params)


def same(value: Any) -> tuple[type, str]:
    """A value as equality should see it: NaN equal to NaN, 1 not equal to 1.0 nor True."""
    return type(value), "nan" if isinstance(value, float) and math.isnan(value) else repr(value)


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """A goal or none, and the loop run's options with typical, odd and random values, in any
    order and either spelling (`--opt V`, `--opt=V`); now and then a word click must read."""
    words: list[str] = []
    for _ in range(draw(st.integers(0, 6))):
        flag = draw(st.sampled_from(sorted(LOOP_RUN_OPTIONS)))
        value = draw(
            st.one_of(
                st.sampled_from(WORDS),
                st.integers(-3, 70000).map(str),
                st.floats(allow_nan=True).map(str),
                st.text(max_size=8),
            )
        )
        if LOOP_RUN_OPTIONS[flag].kind == FLAG:
            words.append(flag if draw(st.integers(0, 9)) else f"{flag}={value}")
        elif draw(st.booleans()):
            words += [flag, value]
        else:
            words.append(f"{flag}={value}")
    if draw(st.booleans()):
        goal = draw(st.one_of(st.sampled_from(WORDS), st.text(max_size=12)))
        words.insert(draw(st.integers(0, len(words))), goal)
    if not draw(st.integers(0, 5)):  # a word only click reads
        other = draw(st.one_of(st.sampled_from(OTHER_FLAGS), st.sampled_from(WORDS)))
        words.insert(draw(st.integers(0, len(words))), other)
    if not draw(st.integers(0, 7)):  # a value left out at the end
        words.append(draw(st.sampled_from(sorted(LOOP_RUN_OPTIONS))))
    return words


@settings(max_examples=400, deadline=None)
@given(command_lines())
def test_the_loop_run_is_read_as_click_reads_it(argv: list[str]) -> None:
    fast = parse_loop_run(argv)
    if fast is None:
        return  # left to click, which reads it (and says what is wrong) itself
    by_click = click_params(argv)
    assert by_click is not None, f"click refuses {argv!r}, read as {fast!r}"
    assert {k: same(v) for k, v in fast.items()} == {k: same(v) for k, v in by_click.items()}


@pytest.mark.parametrize(
    "argv",
    [
        BENCH,
        ["Fix the flaky tests", "--agent", "codex", "--max-iterations", "20"],
        ["--goal", "demo", "--once", "--dir=.w", "--max-cost", "2.5", "--context-window", "0"],
        ["--max-time=4h", "--agent-timeout", "30m", "--run-slots", "4", "--sandbox"],
        ["--policy", "hands-off", "--duration", "6h", "--model", "m", "--run-backend", "local"],
        ["--webhook-port", "0", "--checkpoint-every", "3", "--max-tokens", "1000"],
        [],
    ],
)
def test_the_common_loop_runs_are_read_without_click(argv: list[str]) -> None:
    fast = parse_loop_run(argv)
    assert fast is not None
    assert fast == click_params(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["-h"],
        ["--version"],
        ["demo"],
        ["status"],  # click says: did you mean `wild --status`?
        ["--", "status"],
        ["a", "b"],
        ["--status"],
        ["g", "--serve"],
        ["g", "--port", "1"],
        ["g", "--policy-file", "p.md"],
        ["g", "--max-iterations", "0"],
        ["g", "--max-iterations", "x"],
        ["g", "--once=yes"],
        ["g", "--agent"],
        ["g", "--agent-cm", "x"],
        ["g", "--sweep", "--", "python", "train.py"],
    ],
)
def test_what_the_loop_run_cannot_read_is_left_to_click(argv: list[str]) -> None:
    assert parse_loop_run(argv) is None


def test_the_options_subcommands_are_the_commands() -> None:
    assert sorted(SUBCOMMANDS) == sorted(cli.subcommands)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="\x1b[];?0123456789mKAZ ~/-@\nxé", max_size=30))
def test_a_line_is_printed_as_click_prints_it(text: str) -> None:
    """Off a terminal click takes the terminal's escapes out of what it prints; so does the
    loop run's printing."""
    printed = []
    for echo in (echo_line, click.echo):
        stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
        with redirect_stdout(stdout):
            echo(text)
        printed.append(stdout.buffer.getvalue())
    assert printed[0] == printed[1]


@pytest.mark.parametrize(("encoding", "read"), [("utf-8", True), ("ascii", False)])
def test_a_stdout_click_would_wrap_is_left_to_click(encoding: str, read: bool) -> None:
    stdout = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    with redirect_stdout(stdout):
        assert (loop_run(BENCH) is not None) is read


# Runs `python -m wild` and says, at its exit, whether click was ever imported.
CLICK_LOADED = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write(f"click loaded: {'click' in sys.modules}\\n"))
sys.argv = ["wild", *sys.argv[1:]]
runpy.run_module("wild", run_name="__main__", alter_sys=True)
"""


def _wild(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLICK_LOADED, *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_the_loop_runs_its_agent_without_importing_click(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    (root / "tasks.md").write_text("# Tasks\n\n- [ ] [P1] task-001: Do it\n")
    (tmp_path / "agent.sh").write_text("cat > /dev/null\necho ran >> ran.txt\n")
    done = _wild(tmp_path, *BENCH[:-1], str(root))
    assert (tmp_path / "ran.txt").read_text() == "ran\n", done.stdout + done.stderr
    assert "wild stopped: reached 1 iteration" in done.stdout
    assert done.returncode == 4  # the iteration limit
    assert done.stderr.splitlines()[-1] == "click loaded: False"


# Counts the collector's passes from `python -m wild`'s start to its agent's spawn.
# Counted from the entry's start (`wild.__main__.main`): what runs before it (the interpreter's
# start, and the entry module's own compile where no byte code was written, as in CI) is not
# wild's to hold off.
PASSES = """
import gc, sys
def passes():
    return sum(generation["collections"] for generation in gc.get_stats())
def spawning(event, args):
    if event == "subprocess.Popen" and "agent.sh" in str(args[1]):
        sys.stderr.write(f"passes: {passes() - start}\\n")
sys.argv = ["wild", *sys.argv[1:]]
from wild.__main__ import main
sys.addaudithook(spawning)
start = passes()
main()
"""


def test_the_collector_is_held_off_from_the_start_to_the_agent(tmp_path: Path) -> None:
    """wild's imports make many objects and free almost none: the collector's passes over
    them (8 before the loop's action) would find nothing to free."""
    root = init_wild_dir(tmp_path)
    (root / "tasks.md").write_text("# Tasks\n\n- [ ] [P1] task-001: Do it\n")
    (tmp_path / "agent.sh").write_text("cat > /dev/null\n")
    done = subprocess.run(
        [sys.executable, "-c", PASSES, *BENCH[:-1], str(root)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert "passes: 0" in done.stderr.splitlines(), done.stdout + done.stderr


@pytest.mark.parametrize(
    ("argv", "code", "error"),
    [
        # read without click, refused by the same code as click's command refuses it
        (("a", "--goal", "b"), 2, "Error: give the goal once"),
        # read without click, refused by the loop: said as click's command says it
        (("a", "--agent-cmd", "false", "--max-time", "soon"), 2, "Error: --max-time soon"),
        # left to click
        (("a", "--max-iterations", "0"), 2, "Error: Invalid value for '--max-iterations'"),
    ],
)
def test_a_failed_loop_run_is_said_as_clicks_command_says_it(
    tmp_path: Path, argv: tuple[str, ...], code: int, error: str
) -> None:
    done = _wild(tmp_path, *argv)
    lines = done.stderr.splitlines()
    assert done.returncode == code, done.stderr
    assert any(line.startswith(error) for line in lines), done.stderr
    assert lines[-1] == "click loaded: True"  # the message is click's own
    by_click = subprocess.run(
        [sys.executable, "-c", "from wild.cli import main; main()", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (by_click.returncode, by_click.stderr) == (done.returncode, "\n".join(lines[:-1]) + "\n")
