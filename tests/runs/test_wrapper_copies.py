"""The run wrapper keeps small standard-library copies of what wild and the standard library
own (it imports neither: each import delays the run's start). Each copy agrees with the
module it stands for, and the wrapper loads none of those modules before the run starts."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wild.clock import iso_ms
from wild.liveness import this_host
from wild.parsers.runs import Resources, RunRecord
from wild.runs import markers, wrapper
from wild.runs.wrapper_command import wrapper_argv

# Modules a run's start must not wait for (each costs milliseconds to import).
SLOW_IMPORTS = {
    "argparse", "ctypes", "subprocess", "json", "typing", "re", "signal", "socket",
    "datetime", "threading", "contextlib", "importlib.util", "enum",
}  # fmt: skip


@given(st.text())
def test_json_text_is_the_json_string_of_any_text(text: str) -> None:
    assert json.loads(wrapper.json_text(text)) == text


@given(
    st.dictionaries(
        st.text(), st.one_of(st.none(), st.integers(), st.text(), st.booleans()), max_size=6
    )
)
def test_json_object_reads_back_as_json_dumps_writes_it(fields: dict[str, object]) -> None:
    assert json.loads(wrapper.json_object(fields)) == json.loads(json.dumps(fields))


def test_signal_names_are_the_ones_the_signal_module_gives() -> None:
    for number in range(1, 70):
        try:
            expected = signal.Signals(number).name
        except ValueError:
            expected = f"signal {number}"
        assert wrapper.signal_name(number) == expected


@given(st.floats(min_value=0, max_value=4_000_000_000, allow_nan=False))
def test_times_are_written_as_wild_writes_them(seconds: float) -> None:
    moment = datetime.fromtimestamp(seconds, UTC)
    assert wrapper.now_text(seconds) == iso_ms(moment)


def test_the_marker_is_the_one_wild_reads(tmp_path: Path) -> None:
    words = ["--run-dir", str(tmp_path), "--run-id", "s1-007", "--attempt", "3"]
    args = wrapper.parse_arguments([*words, "--workdir", "/", "--", "true"])
    text = wrapper.marker_text(args, 137, "SIGKILL", "stopped", 'a "detail"\n\\ é')
    read = markers.parse_marker(text.encode(), "exit")
    assert read.marker == markers.ExitMarker(
        run="s1-007",
        attempt=3,
        exit_code=137,
        signal="SIGKILL",
        ended_at=read.marker.ended_at if read.marker else None,
        host=this_host(),
        reason="stopped",
        detail='a "detail"\n\\ é',
    )
    assert this_host() == socket.gethostname()
    assert text.endswith("}\n") and text.count("\n") == 1


def test_the_command_line_wild_writes_is_the_one_the_wrapper_reads() -> None:
    run = RunRecord(
        id="s1-001",
        sweep="s1",
        params={"lr": 0.1},
        status="queued",
        attempt=2,
        resources=Resources(time_s=90.5),
        resolved_instruction="python train.py --lr=0.1 -- 'x y'",
    )
    argv = wrapper_argv(run, python="python", run_dir="/r/s1-001", workdir="/w")
    args = wrapper.parse_arguments(argv[4:])  # after `python -I -S wrapper.py`
    assert (args.run_dir, args.run_id, args.attempt, args.workdir) == (
        "/r/s1-001",
        "s1-001",
        2,
        "/w",
    )
    assert args.time_limit == 90.5 and args.grace == wrapper.GRACE_S
    assert args.instruction == run.resolved_instruction


def test_a_bad_command_line_is_refused_with_the_usage(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", wrapper.__file__, "--run-dir", str(tmp_path), "--", "true"],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert done.returncode == wrapper.USAGE_EXIT
    assert "usage: wrapper.py" in done.stderr and "--attempt" in done.stderr


def test_the_wrapper_becomes_the_subreaper_of_the_run() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    check = (
        "import ctypes, sys; sys.path.insert(0, sys.argv[1]); import wrapper\n"
        "assert wrapper.become_subreaper()\n"
        "flag = ctypes.c_int(); libc = ctypes.CDLL(None)\n"
        "libc.prctl(37, ctypes.byref(flag), 0, 0, 0); print(flag.value)\n"
    )
    assert libc is not None  # prctl exists here, so the copy must take
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", check, str(Path(wrapper.__file__).parent)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    assert done.stdout.strip() == "1"


def test_nothing_slow_is_imported_before_the_run_starts(tmp_path: Path) -> None:
    """The modules loaded when the wrapper forks the instruction's shell: none of wild's by
    name and none of the slow ones."""
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import wrapper\n"
        "start = wrapper._start\n"
        "def seen(args, fd, env):\n"
        "    print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
        "    return start(args, fd, env)\n"
        "wrapper._start = seen\n"
        "sys.exit(wrapper.main(sys.argv[2:]))\n"
    )
    argv = [sys.executable, "-I", "-S", "-c", probe, str(Path(wrapper.__file__).parent)]
    argv += ["--run-dir", str(tmp_path / "r"), "--run-id", "r", "--attempt", "1"]
    argv += ["--workdir", str(tmp_path), "--", "true"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stderr.split())
    assert "os" in loaded and "_signal" in loaded  # the probe saw the wrapper's modules
    assert not loaded & SLOW_IMPORTS
    assert not [name for name in loaded if name.startswith("wild")]
    assert markers.read_marker(tmp_path / "r").marker is not None


def test_a_launched_wrapper_names_itself_loading_no_module() -> None:
    """A launched wrapper sets its /proc name (`wild-run`, what tells it is a run's wrapper)
    with `os` alone: a text file would import its codec in every forked wrapper, a module the
    launcher has not loaded (~0.3 ms of CPU and copied pages per run, issue 23)."""
    probe = (
        "import os, sys; sys.path.insert(0, sys.argv[1]); import wrapper\n"
        "wrapper._capped_log(); wrapper._procfs(); wrapper._prctl()  # what the launcher loads\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    before = set(sys.modules)\n"
        "    wrapper._name_self(wrapper.LAUNCHED_NAME)\n"
        "    comm = open('/proc/self/comm', 'rb').read().decode().strip()\n"
        "    print(comm, *sorted(set(sys.modules) - before))\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
    )
    argv = [sys.executable, "-I", "-S", "-c", probe, str(Path(wrapper.__file__).parent)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [wrapper.LAUNCHED_NAME]


_ENV = {"PATH": os.environ["PATH"], "RUN": "r 1", "EMPTY": "", "Q": "a\"b'c$d"}
_PLAIN_TEXT = st.text(alphabet="abcXYZ019_./:,+@%=-", min_size=1, max_size=6)
_QUOTED_CHAR = st.characters(min_codepoint=32, max_codepoint=126, blacklist_characters='"\\$`')
_DOUBLE_PART = st.one_of(
    st.text(alphabet=_QUOTED_CHAR, max_size=4),
    st.sampled_from(['\\"', "\\\\", "\\$", "\\`", "\\a", "\\ "]),
    st.sampled_from(["$RUN", "${RUN}", "$EMPTY", "${Q}", "$UNSET", "${UNSET}x"]),
)
_PART = st.one_of(
    _PLAIN_TEXT,
    st.text(
        alphabet=st.characters(min_codepoint=9, max_codepoint=126, blacklist_characters="'"),
        max_size=6,
    ).map(lambda text: f"'{text}'"),
    st.lists(_DOUBLE_PART, max_size=4).map(lambda parts: '"' + "".join(parts) + '"'),
)
_WORDS = st.lists(st.lists(_PART, min_size=1, max_size=3).map("".join), max_size=4)
_ARGV = "import sys; sys.stdout.buffer.write(repr(sys.argv[1:]).encode())"


@settings(max_examples=60, deadline=None)
@given(_WORDS)
def test_a_plain_command_is_read_as_the_shell_reads_it(words: list[str]) -> None:
    """The words the wrapper runs a plain command with, without a shell, are the ones
    `/bin/sh -c` gives the same program (quotes, escapes and the environment's variables)."""
    instruction = " ".join([sys.executable, "-c", f"'{_ARGV}'", *words])
    read = wrapper.plain_command(instruction, _ENV)
    assert read is not None
    shell = subprocess.run(
        ["/bin/sh", "-c", instruction], env=_ENV, capture_output=True, check=True
    )
    assert repr(read[3:]) == shell.stdout.decode()


@pytest.mark.parametrize(
    "instruction",
    [
        "echo hi",  # a builtin: the shell's own
        "A=1 prog",  # an assignment
        "prog $RUN",  # unquoted: split and globbed by the shell
        "prog *.py",
        "prog ~/x",
        "prog > out",
        "prog; other",
        "prog | other",
        "prog &",
        'prog "$(date)"',
        'prog "`date`"',
        'prog "$1"',
        'prog "$PWD"',  # the shell sets it itself
        "prog a\\ b",
        "prog 'open",
        "",
    ],
)
def test_anything_but_a_plain_command_is_left_to_the_shell(instruction: str) -> None:
    assert wrapper.plain_command(instruction, _ENV) is None


@pytest.mark.parametrize("variable", ["IFS", "OPTIND", "PPID"])
def test_an_environment_the_shell_would_change_leaves_the_command_to_it(variable: str) -> None:
    assert wrapper.plain_command("prog a", {**_ENV, variable: "x"}) is None
    assert wrapper.plain_command("prog a", {"RUN": "no PATH"}) is None
