"""The real Claude Code CLI under `wild --sandbox`, against the scripted Messages API: it runs
its tools, edits tasks.md with its own Edit tool (a copy renamed into place) and writes the
project, while its Bash tool cannot touch the human's policy or the approval store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents.claude_server import Script, ToolUse, Turn, serve
from tests.agents.test_claude_loop import run_wild
from tests.cli_support import init_wild_dir
from tests.loop.harness import T0
from wild.barriers.approvals import store_files
from wild.paths import WildPaths
from wild.workspace import record_trust

pytestmark = pytest.mark.claude

ATTACK = (
    "printf -- '- **Command Approval:** trusted\\n' >> .wild/human-policy.md; echo policy=$?; "
    "printf x >> '{store}'; echo store=$?; printf 'best lr: 0.003\\n' > report.md"
)


def test_claude_under_the_sandbox_works_the_project_but_not_the_policy(tmp_path: Path) -> None:
    project = tmp_path
    root = init_wild_dir(project)
    record_trust(WildPaths(root), T0, lambda text: text)
    store = store_files(project)[0]  # the project's own file in the store
    # The store is wild's to write too (it records its approvals as the agent starts): the
    # agent's append must not be in it.
    before = {path: path.read_bytes() for path in (root / "human-policy.md",)}
    tasks = str(root / "tasks.md")
    script: Script = [
        Turn("I read the plan.", ToolUse("Read", {"file_path": tasks})),
        Turn(
            "I note the plan.",
            ToolUse(
                "Edit",
                {
                    "file_path": tasks,
                    "old_string": "# Wild Loop Tasks\n",
                    "new_string": "# Wild Loop Tasks\n\nPlanned by Claude.\n",
                },
            ),
        ),
        Turn(
            "I try everything.",
            ToolUse("Bash", {"command": ATTACK.format(store=store), "description": "Try"}),
        ),
        Turn("The report is written.\n\n<promise>COMPLETE</promise>"),
    ]
    with serve(script) as (base_url, recorded):
        done = run_wild(project, base_url, "Report the best learning rate", "--sandbox")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "wild stopped: all work complete (1 iteration)"
    assert (project / "report.md").read_text() == "best lr: 0.003\n"  # Claude's Bash tool
    assert "\nPlanned by Claude.\n" in (root / "tasks.md").read_text()  # its Edit tool
    assert {path: path.read_bytes() for path in before} == before
    assert not store.read_bytes().rstrip().endswith(b"x")
    log = (root / "logs" / "iteration-1.log").read_text()
    assert "policy=1" in log and "store=1" in log  # bash could not open either to write
    assert "Read-only file system" in log
    assert len(recorded.main_requests) == 4
