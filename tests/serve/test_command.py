"""`wild --serve` as a user runs it: the URL with a fresh token on stdout, Ctrl-C to stop."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.cli_support import init_wild_dir, invoke

WAIT_S = 20
SERVE = [sys.executable, "-X", "faulthandler", "-m", "wild", "--serve", "--port", "0"]


def test_serve_prints_a_url_with_a_fresh_token_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    tokens: list[str] = []
    # A shell's background job (`pytest &`) ignores SIGINT, and an ignored signal stays ignored
    # across exec; a handler does not (the child starts with the default). So Ctrl-C reaches
    # the server as it would from a terminal, however this suite was started.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _serve_twice(root, tokens)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert tokens[0] != tokens[1]
    assert len(tokens[0]) >= 40


def _serve_twice(root: Path, tokens: list[str]) -> None:
    for _ in range(2):
        proc = subprocess.Popen(
            # -X faulthandler: if it ever hangs, SIGABRT prints where each thread is.
            [*SERVE, "--dir", str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            found = re.search(r"(http://127\.0\.0\.1:\d+/)\?token=(\S+)", line)
            assert found is not None, line
            tokens.append(found.group(2))
            # As a browser: the URL's token becomes a cookie, and the redirect carries it.
            browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
            with browser.open(found.group(0), timeout=WAIT_S) as page:
                assert b"<title>wild dashboard</title>" in page.read()
            proc.send_signal(signal.SIGINT)
            try:
                rest, _ = proc.communicate(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGABRT)
                dump, _ = proc.communicate(timeout=WAIT_S)
                raise AssertionError(
                    f"no stop {WAIT_S} s after Ctrl-C; its threads:\n{dump}"
                ) from None
        finally:
            proc.kill()
            proc.wait()
        assert proc.returncode == 0, rest
        assert "Dashboard stopped." in rest


def test_a_taken_port_is_one_clear_error(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = invoke("--serve", "--port", str(port), "--dir", str(root))
    assert result.exit_code == 1
    assert f"Error: port {port} on 127.0.0.1 is in use" in result.output


def test_serve_needs_an_initialised_folder(tmp_path: Path) -> None:
    result = invoke("--serve", "--dir", str(tmp_path / "nothing"))
    assert result.exit_code == 1
    assert "wild --init" in result.output


def test_a_goal_with_serve_works_in_a_fresh_folder(tmp_path: Path) -> None:
    """Issue 24 item 8: `wild "GOAL" --serve` said "run `wild --init` first" where `wild
    "GOAL"` alone creates `.wild/`; the dashboard doc shows this exact command."""
    agent = tmp_path / "agent.sh"
    agent.write_text('#!/bin/sh\ncat >/dev/null\necho "<promise>COMPLETE</promise>"\n')
    agent.chmod(0o755)
    command = [*SERVE[:5], "Say hello", *SERVE[5:], "--agent-cmd", str(agent)]
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=WAIT_S, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"Dashboard for \.wild: http://127\.0\.0\.1:\d+/\?token=\S+", lines[0])
    assert "✅ All work complete." in lines
    assert (tmp_path / ".wild" / "tasks.md").is_file()
