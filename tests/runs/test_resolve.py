"""What each skill kind resolves to, and that the command runs what it says."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wild.parsers.sweeps import SweepSpec, validate_sweep
from wild.runs import call_function
from wild.runs.resolve import resolve_instruction
from wild.runs.skill_targets import target_problems

PY = "/opt/py 3/bin/python"


def spec_of(**fields: Any) -> SweepSpec:
    spec = validate_sweep({"name": "s", "parameters": {"lr": [0.1]}, **fields})
    assert isinstance(spec, SweepSpec), spec
    return spec


PARAMS = {"lr": 0.001, "name": "it's a b", "on": True}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"base_command": "python train.py"},
            "python train.py --lr=0.001 '--name=it'\"'\"'s a b' --on=true",
        ),
        (
            {"skill": {"kind": "python_function", "target": "pkg.mod:fit", "args": {"lr": 9}}},
            "'/opt/py 3/bin/python' -m wild.runs.call_function pkg.mod:fit --lr=0.001 "
            "'--name=it'\"'\"'s a b' --on=true",
        ),
        (
            {"skill": {"kind": "python_script", "target": "skills/train.py", "args": {"s": [1]}}},
            "'/opt/py 3/bin/python' skills/train.py '--s=[1]' --lr=0.001 "
            "'--name=it'\"'\"'s a b' --on=true",
        ),
        (
            {"skill": {"kind": "shell_script", "target": "run.sh"}},
            "bash run.sh --lr=0.001 '--name=it'\"'\"'s a b' --on=true",
        ),
        (
            {
                "skill": {"kind": "prompt_playbook", "target": "tune.md"},
                "fallback": {"instruction_text": "python score.py", "args": {"k": 3}},
            },
            "python score.py --k=3 --lr=0.001 '--name=it'\"'\"'s a b' --on=true",
        ),
    ],
)
def test_each_kind_resolves_to_one_quoted_command(fields: dict[str, Any], expected: str) -> None:
    assert resolve_instruction(spec_of(**fields), PARAMS, python=PY) == expected
    # Every value is one shell word, so the script sees exactly --key=value.
    assert shlex.split(expected)[-3:] == ["--lr=0.001", "--name=it's a b", "--on=true"]


def test_a_python_function_runs_with_its_params_as_keyword_arguments(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "__init__.py").write_text("raise SystemExit('imported!')\n")
    (tmp_path / "fit.py").write_text(
        "def train(lr, batch_size, tag):\n    return {'lr': lr, 'bs': batch_size, 'tag': tag}\n"
    )
    spec = spec_of(skill={"kind": "python_function", "target": "fit:train"})
    assert target_problems(spec, tmp_path) == []
    command = resolve_instruction(
        spec, {"lr": 0.5, "batch-size": 8, "tag": "a b"}, python=sys.executable
    )
    # Run as the wrapper runs it: one argument to /bin/sh -c.
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"lr": 0.5, "bs": 8, "tag": "a b"}\n'


def test_the_runner_refuses_words_that_are_not_key_value() -> None:
    assert call_function.parse_arguments(["--a=1", "b"]) == (
        f"'b' is not --key=value; {call_function.USAGE}"
    )
    assert call_function.parse_arguments(["--x=[1, 2]", "--y=abc"]) == {"x": [1, 2], "y": "abc"}


def test_missing_targets_are_named_and_nothing_is_imported(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("raise SystemExit('imported!')\n")
    (tmp_path / "pkg" / "mod.py").write_text("import os\nfit = 1\ndef other(): pass\n")

    def problems(**skill: str) -> list[str]:
        return target_problems(spec_of(skill=skill), tmp_path)

    assert problems(kind="python_function", target="pkg.mod:fit") == []
    assert problems(kind="python_function", target="pkg.mod:os") == []
    assert problems(kind="python_function", target="pkg.mod:train") == [
        f"\"skill.target\" 'pkg.mod:train': {tmp_path}/pkg/mod.py defines no top-level 'train'"
    ]
    assert problems(kind="python_function", target="nope.mod:f") == [
        f"\"skill.target\" 'nope.mod:f': no module 'nope.mod' importable from {tmp_path}"
    ]
    assert problems(kind="python_script", target="train.py") == [
        f"\"skill.target\" 'train.py': no file {tmp_path}/train.py; reference an existing "
        "python script (relative to the workdir)"
    ]
    bad_workdir = spec_of(base_command="x", workdir="missing")
    assert target_problems(bad_workdir, tmp_path) == [
        f"\"workdir\" 'missing': no folder {tmp_path}/missing; give a folder of the project"
    ]
