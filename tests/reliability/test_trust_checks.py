"""Issue 20 item 4: an agent that deletes a check from checks.md ended the loop "complete",
with no alert and no status problem. Weakening checks.md during an agent's run is held like
loosening the policy: the old check stands until `wild --approve @checks`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson

from tests.cli_support import invoke
from tests.loop.harness import TASK, new_project, say
from wild.wake import WakeReason

CHECKS = """# Completion Checks

- Strategy: all
- Mode: verify

## [PENDING] report-exists
- Type: file-exists
- File: report.md
"""
NO_CHECKS = "# Completion Checks\n"


def _weakened_alerts(root: Path) -> list[dict[str, object]]:
    alerts = root / "alerts.jsonl"
    lines = alerts.read_text().splitlines() if alerts.exists() else []
    return [a for a in map(orjson.loads, lines) if a["type"] == "checks-weakened"]


def test_a_check_the_agent_deletes_still_stands_and_the_human_is_asked(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Write the report\n")
    sim.paths.checks.write_text(CHECKS)  # the human's, before the first loop
    sim.script = [
        [{"write_file": ".wild/checks.md", "text": NO_CHECKS}, *say(TASK)],
        say("<promise>COMPLETE</promise>"),
    ]
    sim.queue_request("stop")  # once the loop waits for the human
    result = sim.run(max_iterations=3)
    assert result.reason == "stopped"
    checks_runs = sim.events("checks")
    assert checks_runs and all(e["failing"] == ["report-exists"] for e in checks_runs)
    assert len(_weakened_alerts(sim.paths.root)) == 1
    root = str(sim.paths.root)
    status = invoke("--status", "--dir", root).output
    assert "checks.md was weakened during an agent's run (check report-exists removed)" in status
    assert "  @checks: check report-exists removed" in invoke("--approve", "--dir", root).output
    run = invoke("--run-checks", "--dir", root)
    assert run.exit_code == 1 and "report-exists: PENDING" not in run.output
    assert "report-exists: FAILING" in run.output
    # The human accepts the change: the check is gone, the alert resolved.
    approved = invoke("--approve", "@checks", "--dir", root)
    assert approved.output == (
        f"Approved {sim.paths.checks} as it stands: 0 checks, strategy all, mode verify\n"
    )
    assert invoke("--run-checks", "--dir", root).exit_code == 0
    assert "weakened" not in invoke("--status", "--dir", root).output


def _checks_ran(root: Path) -> bool:
    events = root / "events.log"
    return events.exists() and '"kind":"checks"' in events.read_text()


AGENT = """\
#!/bin/sh
cat >/dev/null
if [ "$WILD_WORK_TYPE" = planning ] || [ "$WILD_WORK_TYPE" = checks ]; then
  echo '<promise>COMPLETE</promise>'
else
  printf '# Completion Checks\\n' > "$WILD_DIR/checks.md"
  echo '<promise>TASK_COMPLETE</promise>'
fi
"""


def test_the_real_loop_does_not_end_complete_when_its_agent_deletes_a_check(
    tmp_path: Path,
) -> None:
    root = tmp_path / ".wild"
    assert invoke("--init", "--dir", str(root)).exit_code == 0
    (root / "checks.md").write_text(CHECKS)
    (root / "tasks.md").write_text("- [ ] [P1] task-001: Write the report\n")
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT)
    agent.chmod(0o755)
    loop = subprocess.Popen(
        [sys.executable, "-m", "wild", "Report", "--agent-cmd", str(agent), "--dir", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (_weakened_alerts(root) and _checks_ran(root)) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        invoke("--stop", "--dir", str(root))
        output, _ = loop.communicate(timeout=60)
    assert (root / "checks.md").read_text() == NO_CHECKS  # the agent did delete it
    assert loop.returncode == 130, output  # it waited for the human until stopped
    assert "All work complete" not in output
    assert "failing: report-exists" in output
    assert len(_weakened_alerts(root)) == 1


def test_putting_the_check_back_resolves_the_alert_and_the_loop_goes_on(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: Write the report\n")
    sim.paths.checks.write_text(CHECKS)
    sim.script = [[{"write_file": ".wild/checks.md", "text": NO_CHECKS}, *say(TASK)]]

    def human_restores() -> None:
        sim.clock.advance(60)  # a minute after the agent's run, on the test's clock
        sim.paths.checks.write_text(CHECKS)
        (tmp_path / "report.md").write_text("done\n")
        at = sim.clock.now().timestamp()
        os.utime(sim.paths.checks, (at, at))

    sim.queue_edit(sim.paths.checks, human_restores)
    # wild's own resolution of the alert, as the folder watcher would hand it over
    sim.queue(lambda: WakeReason("file", str(sim.paths.alerts)))
    result = sim.run(max_iterations=3)
    assert result.reason == "complete"
    assert all(kind != "alert" for kind, _ in sim.worked_on())  # never given to the agent
    latest = {a["id"]: a for a in sim.alert_lines()}
    assert [a["status"] for a in latest.values() if a["type"] == "checks-weakened"] == ["resolved"]
