"""A prompt too long for one argument reaches a built-in agent whole (issue 24 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_support import init_wild_dir, invoke
from wild.agents.registry import MAX_ARG_BYTES


def test_a_200_kb_human_input_reaches_claude_on_stdin_and_the_loop_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = init_wild_dir(tmp_path)
    seen = tmp_path / "seen"
    seen.mkdir()
    claude = tmp_path / "bin" / "claude"  # stands in for Claude Code: keeps what it was given
    claude.parent.mkdir()
    claude.write_text(f'#!/bin/sh\ncat > {seen}/stdin\nprintf "%s\\n" "$@" > {seen}/argv\n')
    claude.chmod(0o755)
    monkeypatch.setenv("PATH", f"{claude.parent}:/usr/bin:/bin")
    monkeypatch.setenv("IS_SANDBOX", "1")
    pasted = "".join(f"log line {n}: something went wrong here\n" for n in range(5000))
    assert len(pasted.encode()) > 200_000
    assert invoke("--human-input", pasted, "--dir", str(root)).exit_code == 0
    result = invoke("Fix what the log shows", "--agent", "claude", "--once", "--dir", str(root))
    assert result.exit_code == 0, result.output
    assert "more than a command-line argument" not in result.output
    argv = (seen / "argv").read_text().splitlines()
    assert argv[:4] == ["-p", "--output-format", "stream-json", "--verbose"]
    assert all(len(arg.encode()) <= MAX_ARG_BYTES for arg in argv)
    stdin = (seen / "stdin").read_text()
    assert "log line 4999: something went wrong here" in stdin
    assert result.output.splitlines()[-1] == "wild stopped: one iteration done (1 iteration)"
