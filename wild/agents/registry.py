"""The built-in agent CLIs and the exact command line wild runs for each (SPEC §6)."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from wild.errors import UsageError, WildError
from wild.record import record

OutputFormat = Literal["text", "stream-json"]
CUSTOM = "custom"
# Linux refuses a single argv element over 32 pages (MAX_ARG_STRLEN, with its NUL byte).
MAX_ARG_BYTES = 32 * 4096 - 1


@record
class Lit:
    """A fixed argument."""

    text: str


@record
class Prompt:
    """The prompt itself."""


@record
class Model:
    """`flag M`, only when a model was chosen."""

    flag: str


@record
class Skip:
    """A permission-skipping flag, dropped when the policy keeps permissions on."""

    flag: str


@record
class PromptFile:
    """The path of the file holding the whole prompt."""


Part = Lit | Prompt | Model | Skip | PromptFile

# The argument of CLIs that want one next to a prompt they read on stdin.
STDIN_NOTE = "Your instructions are the text given on standard input: follow them."


@record
class LongForm:
    """How the CLI takes a prompt too long for one argument: `template` instead of the usual
    one, with the prompt on stdin when `stdin` (each CLI's own documented way)."""

    template: tuple[Part, ...]
    stdin: bool
    how: str  # the CLI's behaviour relied on, for people


@record
class AgentSpec:
    """One built-in agent: its binary, argument template, output format, and the way it takes
    a prompt over MAX_ARG_BYTES (None: it has none, the prompt is cut to fit)."""

    name: str
    binary: str
    template: tuple[Part, ...]
    output_format: OutputFormat
    long_form: LongForm | None


AGENTS: dict[str, AgentSpec] = {
    spec.name: spec
    for spec in (
        AgentSpec(
            "claude",
            "claude",
            (
                Lit("-p"),
                Prompt(),
                Lit("--output-format"),
                Lit("stream-json"),
                Lit("--verbose"),
                Model("--model"),
                Skip("--dangerously-skip-permissions"),
            ),
            "stream-json",
            LongForm(
                (
                    Lit("-p"),
                    Lit("--output-format"),
                    Lit("stream-json"),
                    Lit("--verbose"),
                    Model("--model"),
                    Skip("--dangerously-skip-permissions"),
                ),
                stdin=True,
                how="`claude -p` reads the prompt from stdin when no prompt argument is given",
            ),
        ),
        AgentSpec(
            "opencode",
            "opencode",
            (Lit("run"), Model("-m"), Prompt()),
            "text",
            LongForm(
                (Lit("run"), Model("-m"), Lit(STDIN_NOTE)),
                stdin=True,
                how="`opencode run MESSAGE` reads piped stdin to its end as the message's context",
            ),
        ),
        AgentSpec(
            "codex",
            "codex",
            (Lit("exec"), Model("--model"), Skip("--full-auto"), Prompt()),
            "text",
            LongForm(
                (Lit("exec"), Model("--model"), Skip("--full-auto"), Lit("-")),
                stdin=True,
                how="`codex exec -` reads the prompt from stdin",
            ),
        ),
        AgentSpec(
            "gemini",
            "gemini",
            (Model("-m"), Skip("--yolo"), Lit("-p"), Prompt()),
            "text",
            LongForm(
                (Model("-m"), Skip("--yolo"), Lit("-p"), Lit(STDIN_NOTE)),
                stdin=True,
                how="`gemini -p TEXT` appends TEXT to the input on stdin",
            ),
        ),
        AgentSpec(
            "copilot",
            "copilot",
            (Lit("-p"), Prompt(), Model("--model"), Skip("--allow-all-tools")),
            "text",
            None,  # copilot takes the prompt as an argument only
        ),
        AgentSpec(
            "cursor-agent",
            "cursor-agent",
            (
                Lit("-p"),
                Lit("--output-format"),
                Lit("stream-json"),
                Model("--model"),
                Skip("--force"),
                Prompt(),
            ),
            "stream-json",
            LongForm(
                (
                    Lit("-p"),
                    Lit("--output-format"),
                    Lit("stream-json"),
                    Model("--model"),
                    Skip("--force"),
                ),
                stdin=True,
                how="cursor-agent reads the prompt from stdin when none is given",
            ),
        ),
        AgentSpec(
            "aider",
            "aider",
            (Skip("--yes-always"), Model("--model"), Lit("--message"), Prompt()),
            "text",
            LongForm(
                (Skip("--yes-always"), Model("--model"), Lit("--message-file"), PromptFile()),
                stdin=False,
                how="`aider --message-file F` reads the prompt from a file",
            ),
        ),
    )
}
AGENT_NAMES: tuple[str, ...] = (*AGENTS, CUSTOM)


def binary_env_var(agent: str) -> str:
    """`WILD_<AGENT>_BINARY`, e.g. `WILD_CURSOR_AGENT_BINARY`."""
    return f"WILD_{agent.upper().replace('-', '_')}_BINARY"


def agent_spec(agent: str) -> AgentSpec:
    """The built-in spec; `custom` and unknown names are not in the table."""
    spec = AGENTS.get(agent)
    if spec is None:
        raise UsageError(
            f"unknown agent {agent!r}; choose one of: {', '.join(AGENT_NAMES)} "
            "(custom needs --agent-cmd 'CMD ...')"
        )
    return spec


def output_format(agent: str) -> OutputFormat:
    """How to read the agent's stdout: custom commands are plain text."""
    return "text" if agent == CUSTOM else agent_spec(agent).output_format


def _too_long(prompt: str) -> bool:
    return len(prompt.encode("utf-8", "surrogateescape")) > MAX_ARG_BYTES


def prompt_on_stdin(agent: str, prompt: str = "") -> bool:
    """Custom commands get the prompt on stdin; built-ins get it in argv (and stdin is closed),
    except a prompt too long for argv, which goes on stdin where the CLI reads it there."""
    if agent == CUSTOM:
        return True
    form = agent_spec(agent).long_form
    return _too_long(prompt) and form is not None and form.stdin


def cut_to_fit(prompt: str, prompt_file: Path) -> str:
    """`prompt` with its middle cut so that it fits one argument, and a note in its place that
    points at the whole prompt in `prompt_file`. The middle: the goal and the work come first
    and the signals last, while what makes a prompt huge is the text quoted between them (a
    pasted log in a human input)."""
    data = prompt.encode("utf-8", "surrogateescape")
    if len(data) <= MAX_ARG_BYTES:
        return prompt
    note = (
        f"\n\n[… wild cut {{}} bytes here to fit a command-line argument; the whole prompt is"
        f" in {prompt_file}: read it there …]\n\n"
    )
    room = MAX_ARG_BYTES - len(note.format(len(data)).encode()) - 8  # margin for the count
    head = data[: room // 2].decode("utf-8", "ignore")
    tail = data[len(data) - room // 2 :].decode("utf-8", "ignore")
    cut = (
        len(data)
        - len(head.encode("utf-8", "surrogateescape"))
        - len(tail.encode("utf-8", "surrogateescape"))
    )
    return head + note.format(cut) + tail


def _binary(spec: AgentSpec, environ: Mapping[str, str]) -> list[str]:
    override = environ.get(binary_env_var(spec.name), "").strip()
    if not override:
        return [spec.binary]
    try:
        # Split so a wrapper with arguments works (`python tests/fake_agent.py`).
        words = shlex.split(override)
    except ValueError as error:
        raise WildError(
            f"{binary_env_var(spec.name)}={override!r} cannot be split ({error}); "
            "quote paths that contain spaces"
        ) from error
    return words or [spec.binary]


_PROMPT_FILE_REF = re.compile(r"\$\{WILD_PROMPT_FILE\}|\$WILD_PROMPT_FILE\b")


def _custom_command(agent_cmd: str | None, prompt_file: Path) -> list[str]:
    if not agent_cmd or not agent_cmd.strip():
        raise UsageError("--agent custom needs --agent-cmd 'CMD ...' (the prompt comes on stdin)")
    try:
        words = shlex.split(agent_cmd)
    except ValueError as error:
        raise UsageError(
            f"--agent-cmd {agent_cmd!r} cannot be split ({error}); fix its quoting"
        ) from error
    # No shell runs the command, so expand the one variable a user may name in it ourselves.
    return [_PROMPT_FILE_REF.sub(str(prompt_file), word) for word in words]


def agent_program(agent: str, agent_cmd: str | None, environ: Mapping[str, str]) -> str:
    """The program an iteration of `agent` execs (argv[0]), so it can be checked before any
    file is written."""
    if agent == CUSTOM:
        return _custom_command(agent_cmd, Path())[0]
    return _binary(agent_spec(agent), environ)[0]


def cannot_start(agent: str, program: str, reason: str) -> str:
    """Why `program` cannot run as `agent`, and what to do about it."""
    fix = "--agent-cmd" if agent == CUSTOM else f"{binary_env_var(agent)} (or --agent-cmd)"
    return (
        f"cannot start agent {program!r}: {reason}; install it, or point {fix} at a program"
        " that exists"
    )


def build_command(
    agent: str,
    prompt: str,
    model: str | None,
    *,
    prompt_file: Path,
    skip_permissions: bool,
    agent_cmd: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """The argv for one iteration; `environ` (default `os.environ`) supplies binary overrides.

    `custom` runs `agent_cmd` as given (no model flag: the command is the user's); the loop feeds
    it the prompt on stdin (see `prompt_on_stdin`).
    """
    if agent == CUSTOM:
        return _custom_command(agent_cmd, prompt_file)
    spec = agent_spec(agent)
    template = spec.template
    if _too_long(prompt):
        # Never refused (a pasted 200 KB log must not end the loop): the CLI's own long form,
        # or else the prompt cut to fit, pointing at the whole one.
        if spec.long_form is not None:
            template = spec.long_form.template
        else:
            prompt = cut_to_fit(prompt, prompt_file)
    argv = _binary(spec, os.environ if environ is None else environ)
    for part in template:
        if isinstance(part, Lit):
            argv.append(part.text)
        elif isinstance(part, Prompt):
            argv.append(prompt)
        elif isinstance(part, PromptFile):
            argv.append(str(prompt_file))
        elif isinstance(part, Model):
            if model:
                argv += [part.flag, model]
        elif skip_permissions:
            argv.append(part.flag)
    return argv
