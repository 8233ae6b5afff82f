"""The whole loop with the real Claude Code CLI (`python -m wild … --agent claude`) against the
scripted Messages API: a premature COMPLETE rejected by a failing completion check, and a cost
limit that holds across a restart. Outcomes are checked on disk, not only in promise tags."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents.claude_server import Script, ToolUse, Turn, Usage, serve
from tests.agents.test_claude_real import _claude_binary
from tests.cli_support import init_wild_dir

pytestmark = pytest.mark.claude

LOOP_TIMEOUT_S = 300.0  # a safety net for a hung CLI, not a speed check
REPORT_CHECK = """# Completion Checks

- Strategy: all
- Mode: verify

## [PENDING] report
- Type: file-contains
- File: report.md
- Pattern: best lr: [0-9.]+
"""


def run_wild(project: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_MODEL")
    }
    env.update(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="test",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        WILD_CLAUDE_BINARY=_claude_binary(),
    )
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # Claude Code refuses to skip permissions as root otherwise
    return subprocess.run(
        [sys.executable, "-m", "wild", *args, "--agent", "claude", "--dir", str(project / ".wild")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=LOOP_TIMEOUT_S,
        check=False,
    )


def iteration_of(prompt: str) -> int:
    found = re.search(r"# Wild Loop - Iteration (\d+)", prompt)
    return int(found.group(1)) if found else 0


def test_claude_completes_early_is_rejected_then_makes_the_check_pass(tmp_path: Path) -> None:
    project = tmp_path
    root = init_wild_dir(project)
    (root / "checks.md").write_text(REPORT_CHECK)

    def script(prompt: str) -> list[Turn]:
        if iteration_of(prompt) == 1:  # claims victory without doing anything
            return [Turn("Everything is done.\n\n<promise>COMPLETE</promise>")]
        write = ToolUse(
            "Bash",
            {"command": "printf 'best lr: 0.003\\n' > report.md", "description": "Write report"},
        )
        return [
            Turn("The report check fails; I will write the report.", write),
            Turn("The report is written.\n\n<promise>COMPLETE</promise>"),
        ]

    with serve(script) as (base_url, recorded):
        done = run_wild(project, base_url, "Find the best learning rate and report it")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "wild stopped: all work complete (2 iterations)"
    assert (project / "report.md").read_text() == "best lr: 0.003\n"  # Claude's own tool wrote it
    assert "## [PASSING] report\n" in (root / "checks.md").read_text()
    second = (root / "logs" / "iteration-2.prompt.md").read_text()
    assert "## CURRENT WORK: Completion checks fail" in second
    assert "- report: report.md does not exist" in second
    assert [iteration_of(_prompt(r)) for r in recorded.main_requests] == [1, 2, 2]


def _prompt(request: object) -> str:
    assert isinstance(request, dict)
    messages = request["messages"]
    content = messages[0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_a_cost_limit_stops_claude_and_holds_across_a_restart(tmp_path: Path) -> None:
    project = tmp_path
    root = init_wild_dir(project)
    (root / "tasks.md").write_text("- [ ] [P1] task-001: Note A\n- [ ] [P1] task-002: Note B\n")
    script: Script = [Turn("Noted.\n\n<promise>TASK_COMPLETE</promise>")]
    # Two million input tokens a message: Claude Code prices this well past a dollar.
    with serve(script, Usage(input_tokens=2_000_000)) as (base_url, recorded):
        first = run_wild(project, base_url, "Take notes", "--max-cost", "1")
        requests_after_first = len(recorded.main_requests)
        again = run_wild(project, base_url, "Take notes", "--max-cost", "1")
    assert first.returncode == 4, first.stdout + first.stderr
    assert re.search(r"reached the cost limit \(\$\d+\.\d\d of \$1\.00\)", first.stdout)
    assert requests_after_first == 1  # one agent run, then the limit
    assert "- [x] [P1] task-001" in (root / "tasks.md").read_text()
    assert "- [ ] [P1] task-002" in (root / "tasks.md").read_text()
    assert again.returncode == 4, again.stdout + again.stderr
    assert again.stdout.splitlines()[-1].endswith("(0 iterations)")
    assert len(recorded.main_requests) == requests_after_first  # no agent started again
