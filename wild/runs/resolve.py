"""What each run of a sweep executes: its `resolved_instruction`, one shell command line.

Pure. Every value reaches the command as one `--key=value` word (or, by the sweep's `args`
style, the two words `--key value`, or `key=value` for a Hydra app), quoted with `shlex`, in
grid order; a run's params come after the skill's (or fallback's) `args`, and a param wins
over an arg of the same name. Text goes as it is, booleans as `true`/`false`, numbers, lists
and objects as JSON. What a skill kind resolves to (seed 002 §5.1):

- `base_command`: `<base_command> --k=v …`
- `python_function` `pkg.mod:fn`: `<python> -m wild.runs.call_function pkg.mod:fn --k=v …`
  (a subprocess that imports the module from the run's workdir and calls `fn(k=v, …)`)
- `python_script` `path.py`: `<python> path.py --k=v …`
- `shell_script` `path.sh`: `bash path.sh --k=v …`
- `prompt_playbook`: the playbook is guidance for agents, not a command, so the run executes
  `fallback.instruction_text --k=v …` (with `fallback.args`): seed 002's hybrid fallback.

`<python>` is the interpreter wild runs under, so `wild.runs.call_function` is importable.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from wild.parsers.sweeps import ArgsStyle, SweepSpec

RUNNER_MODULE = "wild.runs.call_function"


def value_text(value: Any) -> str:
    """A value as a command-line word: text as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def flags(values: Mapping[str, Any], style: ArgsStyle = "--key=value") -> list[str]:
    """The values as words in `style`, shell-quoted, in the mapping's order."""
    if style == "--key value":
        pairs = ((f"--{key}", value_text(value)) for key, value in values.items())
        return [shlex.quote(word) for pair in pairs for word in pair]
    prefix = "--" if style == "--key=value" else ""
    return [shlex.quote(f"{prefix}{key}={value_text(value)}") for key, value in values.items()]


def _command(words: Iterable[str], values: Mapping[str, Any], style: ArgsStyle) -> str:
    return " ".join([*words, *flags(values, style)])


def _text_command(spec: SweepSpec) -> tuple[str, Mapping[str, Any]]:
    """The command text a sweep gives directly: `base_command`, or a playbook's fallback."""
    if spec.skill is None and spec.base_command is not None:
        return spec.base_command, {}
    if spec.fallback is not None:
        return spec.fallback.instruction_text, spec.fallback.args
    raise ValueError(f"sweep {spec.name!r} has no command; validate_sweep requires one")


def _words(spec: SweepSpec, *, python: str) -> tuple[list[str], Mapping[str, Any]]:
    """The program's words, and the `args` its runs' flags start from."""
    skill = spec.skill
    if skill is None or skill.kind == "prompt_playbook":
        text, args = _text_command(spec)
        return [text], args
    if skill.kind == "python_function":
        return [shlex.quote(python), "-m", RUNNER_MODULE, skill.target], skill.args
    if skill.kind == "python_script":
        return [shlex.quote(python), shlex.quote(skill.target)], skill.args
    return ["bash", shlex.quote(skill.target)], skill.args


def program(spec: SweepSpec, *, python: str) -> str:
    """What every run of `spec` executes, before its `--key=value` words: the command a human
    approves once for the whole sweep (each value reaches it quoted, as one word)."""
    return " ".join(_words(spec, python=python)[0])


def resolve_instruction(spec: SweepSpec, params: Mapping[str, Any], *, python: str) -> str:
    """The exact command one run of `spec` with `params` executes, in its workdir."""
    words, args = _words(spec, python=python)
    return _command(words, {**args, **params}, spec.args_style)
