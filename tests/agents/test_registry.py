"""Every built-in agent's exact command line, binary overrides, custom commands, bad names."""

from __future__ import annotations

from pathlib import Path

import pytest

from wild.agents.registry import (
    AGENT_NAMES,
    AGENTS,
    MAX_ARG_BYTES,
    STDIN_NOTE,
    binary_env_var,
    build_command,
    cut_to_fit,
    output_format,
    prompt_on_stdin,
)
from wild.errors import UsageError, WildError

P = "Fix the failing test.\nThen say <promise>TASK_COMPLETE</promise>."
PF = Path("/proj/.wild/prompts/iteration-3.md")

# (agent, model, skip_permissions) -> exact argv, straight from the SPEC §6 table.
CASES = [
    (
        "claude",
        None,
        True,
        [
            "claude",
            "-p",
            P,
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
        ],
    ),
    (
        "claude",
        "opus",
        True,
        [
            "claude",
            "-p",
            P,
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "opus",
            "--dangerously-skip-permissions",
        ],
    ),
    (
        "claude",
        "opus",
        False,
        ["claude", "-p", P, "--output-format", "stream-json", "--verbose", "--model", "opus"],
    ),
    ("opencode", None, True, ["opencode", "run", P]),
    (
        "opencode",
        "anthropic/claude-sonnet-4",
        False,
        ["opencode", "run", "-m", "anthropic/claude-sonnet-4", P],
    ),
    ("codex", None, True, ["codex", "exec", "--full-auto", P]),
    ("codex", "gpt-5", True, ["codex", "exec", "--model", "gpt-5", "--full-auto", P]),
    ("codex", "gpt-5", False, ["codex", "exec", "--model", "gpt-5", P]),
    ("gemini", None, True, ["gemini", "--yolo", "-p", P]),
    ("gemini", "gemini-2.5-pro", True, ["gemini", "-m", "gemini-2.5-pro", "--yolo", "-p", P]),
    ("gemini", "gemini-2.5-pro", False, ["gemini", "-m", "gemini-2.5-pro", "-p", P]),
    ("copilot", None, True, ["copilot", "-p", P, "--allow-all-tools"]),
    ("copilot", "gpt-5", True, ["copilot", "-p", P, "--model", "gpt-5", "--allow-all-tools"]),
    ("copilot", "gpt-5", False, ["copilot", "-p", P, "--model", "gpt-5"]),
    (
        "cursor-agent",
        None,
        True,
        ["cursor-agent", "-p", "--output-format", "stream-json", "--force", P],
    ),
    (
        "cursor-agent",
        "sonnet-4",
        True,
        [
            "cursor-agent",
            "-p",
            "--output-format",
            "stream-json",
            "--model",
            "sonnet-4",
            "--force",
            P,
        ],
    ),
    (
        "cursor-agent",
        "sonnet-4",
        False,
        ["cursor-agent", "-p", "--output-format", "stream-json", "--model", "sonnet-4", P],
    ),
    ("aider", None, True, ["aider", "--yes-always", "--message", P]),
    ("aider", "sonnet", True, ["aider", "--yes-always", "--model", "sonnet", "--message", P]),
    ("aider", "sonnet", False, ["aider", "--model", "sonnet", "--message", P]),
]


@pytest.mark.parametrize(("agent", "model", "skip", "expected"), CASES)
def test_builtin_command_lines_are_exactly_the_spec_table(
    agent: str, model: str | None, skip: bool, expected: list[str]
) -> None:
    argv = build_command(agent, P, model, prompt_file=PF, skip_permissions=skip, environ={})
    assert argv == expected


def test_every_builtin_agent_is_covered_by_the_table() -> None:
    assert {case[0] for case in CASES} == set(AGENTS)
    assert AGENT_NAMES == (
        "claude",
        "opencode",
        "codex",
        "gemini",
        "copilot",
        "cursor-agent",
        "aider",
        "custom",
    )


def test_an_empty_model_is_no_model() -> None:
    argv = build_command("opencode", P, "", prompt_file=PF, skip_permissions=True, environ={})
    assert argv == ["opencode", "run", P]


@pytest.mark.parametrize(
    ("agent", "variable"),
    [
        ("claude", "WILD_CLAUDE_BINARY"),
        ("cursor-agent", "WILD_CURSOR_AGENT_BINARY"),
        ("aider", "WILD_AIDER_BINARY"),
    ],
)
def test_binary_variable_names(agent: str, variable: str) -> None:
    assert binary_env_var(agent) == variable


def test_binary_override_replaces_only_the_binary() -> None:
    environ = {"WILD_CURSOR_AGENT_BINARY": "/opt/cursor/bin/cursor-agent"}
    argv = build_command(
        "cursor-agent", P, None, prompt_file=PF, skip_permissions=False, environ=environ
    )
    assert argv == ["/opt/cursor/bin/cursor-agent", "-p", "--output-format", "stream-json", P]


def test_binary_override_may_be_a_wrapper_with_arguments() -> None:
    environ = {"WILD_CLAUDE_BINARY": "python3 tests/fake_agent.py", "WILD_CODEX_BINARY": "x"}
    argv = build_command("claude", P, None, prompt_file=PF, skip_permissions=False, environ=environ)
    assert argv == [
        "python3",
        "tests/fake_agent.py",
        "-p",
        P,
        "--output-format",
        "stream-json",
        "--verbose",
    ]


def test_binary_override_is_read_from_the_process_environment_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WILD_GEMINI_BINARY", "'/opt/my tools/gemini'")
    argv = build_command("gemini", P, None, prompt_file=PF, skip_permissions=True)
    assert argv == ["/opt/my tools/gemini", "--yolo", "-p", P]


def test_unsplittable_binary_override_is_a_clear_error() -> None:
    with pytest.raises(WildError) as caught:
        build_command(
            "aider",
            P,
            None,
            prompt_file=PF,
            skip_permissions=True,
            environ={"WILD_AIDER_BINARY": "'/opt/aider"},
        )
    assert str(caught.value) == (
        'WILD_AIDER_BINARY="\'/opt/aider" cannot be split (No closing quotation); '
        "quote paths that contain spaces"
    )


def test_custom_command_is_split_and_gets_the_prompt_file_path() -> None:
    argv = build_command(
        "custom",
        P,
        "ignored-model",
        prompt_file=PF,
        skip_permissions=True,
        agent_cmd="my-agent --input \"$WILD_PROMPT_FILE\" --log '${WILD_PROMPT_FILE}.log' -v",
    )
    assert argv == ["my-agent", "--input", str(PF), "--log", f"{PF}.log", "-v"]
    assert prompt_on_stdin("custom") is True
    assert prompt_on_stdin("claude") is False


def test_custom_without_a_command_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as caught:
        build_command("custom", P, None, prompt_file=PF, skip_permissions=True, agent_cmd="  ")
    assert str(caught.value) == (
        "--agent custom needs --agent-cmd 'CMD ...' (the prompt comes on stdin)"
    )


def test_custom_with_bad_quoting_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as caught:
        build_command(
            "custom", P, None, prompt_file=PF, skip_permissions=True, agent_cmd="run 'unclosed"
        )
    assert str(caught.value) == (
        '--agent-cmd "run \'unclosed" cannot be split (No closing quotation); fix its quoting'
    )


def test_unknown_agent_lists_the_valid_names() -> None:
    with pytest.raises(WildError) as caught:
        build_command("claude-code", P, None, prompt_file=PF, skip_permissions=True, environ={})
    assert str(caught.value) == (
        "unknown agent 'claude-code'; choose one of: claude, opencode, codex, gemini, copilot, "
        "cursor-agent, aider, custom (custom needs --agent-cmd 'CMD ...')"
    )
    assert caught.value.exit_code == 2


LONG = "goal\n" + "> pasted log line\n" * 12_000 + "signals\n"  # 204 KB, over MAX_ARG_BYTES


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ("claude", ["claude", "-p", "--output-format", "stream-json", "--verbose"]),
        ("opencode", ["opencode", "run", STDIN_NOTE]),
        ("codex", ["codex", "exec", "-"]),
        ("gemini", ["gemini", "-p", STDIN_NOTE]),
        ("cursor-agent", ["cursor-agent", "-p", "--output-format", "stream-json"]),
    ],
)
def test_a_prompt_too_long_for_argv_goes_on_stdin_where_the_cli_reads_it(
    agent: str, expected: list[str]
) -> None:
    """Issue 24 item 4: a 200 KB human input once ended the loop ("more than a command-line
    argument can hold")."""
    argv = build_command(agent, LONG, None, prompt_file=PF, skip_permissions=False, environ={})
    assert argv == expected
    assert prompt_on_stdin(agent, LONG) is True
    assert prompt_on_stdin(agent, P) is False


def test_aider_reads_a_long_prompt_from_its_file() -> None:
    argv = build_command("aider", LONG, None, prompt_file=PF, skip_permissions=True, environ={})
    assert argv == ["aider", "--yes-always", "--message-file", str(PF)]
    assert prompt_on_stdin("aider", LONG) is False


def test_a_long_prompt_for_a_cli_without_a_long_form_is_cut_in_the_middle() -> None:
    argv = build_command("copilot", LONG, None, prompt_file=PF, skip_permissions=False, environ={})
    assert argv[:2] == ["copilot", "-p"]
    sent = argv[2]
    assert len(sent.encode()) <= MAX_ARG_BYTES
    head, rest = sent.split("\n\n[… wild cut ", 1)
    note, tail = rest.split(" …]\n\n", 1)
    cut, _ = note.split(" ", 1)
    assert note.endswith(f"; the whole prompt is in {PF}: read it there")
    assert LONG.startswith(head) and LONG.endswith(tail) and tail.endswith("signals\n")
    assert len(head) + int(cut) + len(tail) == len(LONG)
    assert cut_to_fit(P, PF) == P
    at_limit = build_command(
        "claude", "x" * MAX_ARG_BYTES, None, prompt_file=PF, skip_permissions=True, environ={}
    )
    assert at_limit[2] == "x" * MAX_ARG_BYTES


def test_output_formats() -> None:
    formats = {name: output_format(name) for name in AGENT_NAMES}
    assert formats == {
        "claude": "stream-json",
        "opencode": "text",
        "codex": "text",
        "gemini": "text",
        "copilot": "text",
        "cursor-agent": "stream-json",
        "aider": "text",
        "custom": "text",
    }
