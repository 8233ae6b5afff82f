"""The append methods docs/formats.md shows are one write(2) each, up to the sizes it states.

Measured with strace: a line split into several writes can interleave with another writer's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STRACE = shutil.which("strace")
pytestmark = pytest.mark.skipif(STRACE is None, reason="needs strace to count write(2) calls")

# The documented limit for `printf '%s\n' "$json" >> file` in bash.
SHELL_LIMIT = 4096


_CALL = re.compile(r"^(\d+) +(\w+)\((.*)\) += (-?\d+)")


def _writes(tmp_path: Path, command: list[str], target: Path) -> list[int]:
    """Sizes of the writes `command` made to `target`, following the descriptors it opened
    it as (always with O_APPEND) through dup2 and close, as a shell's `>>` does."""
    trace = tmp_path / "trace"
    calls = "trace=openat,write,dup2,dup3,close,flock"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [str(STRACE), "-f", "-qq", "-o", str(trace), "-e", calls, *command],
        env=env,
        check=True,
        timeout=60,
        capture_output=True,
    )
    mine: set[tuple[str, str]] = set()  # (pid, fd) that refer to the target
    sizes: list[int] = []
    for line in trace.read_text().splitlines():
        found = _CALL.match(line)
        if found is None:
            continue
        pid, name, args, result = found.groups()
        first = args.split(", ")
        # wild opens its files relative to their folder's descriptor (openat, O_NOFOLLOW).
        if name == "openat" and first[1] in (f'"{target}"', f'"{target.name}"'):
            if "O_PATH" in first[2]:
                continue  # a path resolved (wild.procfs.real_path): it can neither read nor write
            assert "O_APPEND" in first[2], line
            mine.add((pid, result))
        elif name in ("dup2", "dup3"):
            alias = (pid, result)
            if (pid, first[0]) in mine:
                mine.add(alias)
            else:
                mine.discard(alias)
        elif name == "close":
            mine.discard((pid, first[0]))
        elif name == "write" and (pid, first[0]) in mine:
            sizes.append(int(result))
    return sizes


@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize("builtin", ["printf '%s\\n' \"$1\"", 'echo "$1"'])
def test_a_shell_append_up_to_the_documented_size_is_one_write(
    tmp_path: Path, shell: str, builtin: str
) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"no {shell}")
    target = tmp_path / "alerts.jsonl"
    target.touch()
    if os.stat(target).st_blksize < SHELL_LIMIT:
        pytest.skip("this filesystem's block size is under 4096 bytes (see docs/formats.md)")
    line = "x" * (SHELL_LIMIT - 1)
    command = [shell, "-c", f'{builtin} >> "$0"', str(target), line]
    assert _writes(tmp_path, command, target) == [SHELL_LIMIT]


def test_bash_splits_a_longer_line_which_is_why_the_limit_is_documented(tmp_path: Path) -> None:
    target = tmp_path / "alerts.jsonl"
    target.touch()
    line = "x" * (os.stat(target).st_blksize + 100)
    command = ["bash", "-c", 'printf "%s\\n" "$1" >> "$0"', str(target), line]
    assert len(_writes(tmp_path, command, target)) > 1


def _documented_python_append() -> str:
    """The Python one-liner as docs/formats.md shows it."""
    text = (ROOT / "docs" / "formats.md").read_text()
    block = re.search(r"```sh\n *(printf '%s\\n' \"\$json\" \| python3 .*?)\n *```", text, re.S)
    assert block is not None, "docs/formats.md lost its Python one-write append"
    return "\n".join(line.strip() for line in block.group(1).splitlines())


def test_the_documented_python_append_is_one_write_of_a_large_line(tmp_path: Path) -> None:
    wild_dir = tmp_path / ".wild"
    wild_dir.mkdir()
    target = wild_dir / "alerts.jsonl"
    json_line = '{"id":"big","severity":"critical","description":"' + "p" * 200_000 + '"}'
    script = tmp_path / "append.sh"
    script.write_text(f'cd "{tmp_path}"\njson=$(cat "$1")\n{_documented_python_append()}\n')
    payload = tmp_path / "line.json"
    payload.write_text(json_line)
    command = ["bash", str(script), str(payload)]
    trace_target = Path(".wild/alerts.jsonl")
    assert _writes(tmp_path, command, trace_target) == [len(json_line) + 1]
    assert target.read_text() == json_line + "\n"


def test_wild_alert_is_one_write_under_its_flock(tmp_path: Path) -> None:
    wild_dir = tmp_path / ".wild"
    subprocess.run(
        [sys.executable, "-m", "wild", "--init", "--dir", str(wild_dir)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        capture_output=True,
        timeout=60,
    )
    target = wild_dir / "alerts.jsonl"
    description = "w" * 100_000  # over 64 KiB
    command = [sys.executable, "-m", "wild", "--dir", str(wild_dir), "--alert"]
    command += ["--severity", "critical", "--source", "job", "--type", "t"]
    command += ["--description", description]
    sizes = _writes(tmp_path, command, target)
    assert sizes == [target.stat().st_size]
    assert sizes[0] > 100_000
    calls = [line.split(None, 1)[1] for line in (tmp_path / "trace").read_text().splitlines()]
    opened = next(i for i, call in enumerate(calls) if f'"{target.name}"' in call)
    fd = calls[opened].rsplit("= ", 1)[1]
    # Its own calls, in order (the folder's descriptor is closed in between).
    own = [
        call for call in calls[opened + 1 :] if call.startswith((f"flock({fd},", f"write({fd},"))
    ]
    assert own[0].split() == [f"flock({fd},", "LOCK_SH)", "=", "0"]
    assert own[1].startswith(f"write({fd}, ")
