"""Issue 9 item 1: nothing an agent can write loosens what runs.

An agent appends a barrier with a `Check:` command, then loosens human-policy.md (Command
Approval trusted, or Mode autonomous / hands-off). The command must not run: the trust a human
set through the CLI (kept outside `.wild/`) holds the file back until `wild --approve @policy`.
Every test puts the marker file the command would create where it can be looked for.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from tests.barriers.conftest import FakeClock
from tests.cli_support import init_wild_dir, invoke
from tests.loop.harness import RESOLVED, T0, TASK, new_project, say, set_policy
from wild.barriers.checker import open_unapproved_alerts
from wild.clock import SystemClock
from wild.loop.files import LoopFiles
from wild.loop.trust_guard import TrustGuard
from wild.parsers import policy as policy_md
from wild.paths import WildPaths
from wild.policy.presets import update_policy_text
from wild.policy.trust import RecordedTrust
from wild.store.events_log import EventLog
from wild.workspace import load_workspace, policy_in_force, read_trust, record_trust
from wild.workspace_view import Workspace

APPROVAL = "- **Command Approval:** required"
MODE = "- **Mode:** semi-autonomous"
# What an agent writes to loosen the policy: each makes the old code run any command.
LOOSENINGS = {
    "trusted": [(APPROVAL, "- **Command Approval:** trusted")],
    "autonomous": [(MODE, "- **Mode:** autonomous"), (APPROVAL + "\n", "")],
    "hands-off": [(MODE, "- **Mode:** hands-off"), (APPROVAL + "\n", "")],
}


def command_barrier(marker: Path, barrier_id: str = "sneaky") -> str:
    return (
        f"\n## [WAITING] {barrier_id}\n- Type: command-check\n- Check: touch {marker}\n"
        "- Interval: 1s\n"
    )


def loosen(policy: Path, how: str) -> None:
    """The agent loosens the policy, during a run of wild's as events.log records one."""
    text = policy.read_text()
    for old, new in LOOSENINGS[how]:
        assert old in text
        text = text.replace(old, new, 1)
    as_an_agent(policy.parent, lambda: policy.write_text(text))


def as_an_agent(root: Path, edit: Callable[[], object]) -> None:
    """`edit` made while an agent of wild runs: between an agent-start and its agent-end line
    (a change made while no agent runs is the human's, issue 20 item 8)."""
    events = EventLog(root / "events.log", SystemClock())
    started = events.append("agent-start", iteration=1, work_type="task", work_id="task-001")
    edit()
    events.append("agent-end", cause=started, iteration=1, exit_code=0)


def check(root: Path) -> list[dict[str, object]]:
    result = invoke("--check-barriers", "--json", "--dir", str(root))
    assert result.exit_code == 0, result.output
    rows: list[dict[str, object]] = orjson.loads(result.output)
    return rows


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return init_wild_dir(tmp_path / "project")


@pytest.mark.parametrize("how", sorted(LOOSENINGS))
def test_an_agent_loosening_the_policy_does_not_get_its_command_run(root: Path, how: str) -> None:
    marker = root.parent / "ran.marker"
    with (root / "barriers.md").open("a") as handle:
        handle.write(command_barrier(marker))
    loosen(root / "human-policy.md", how)
    paths = WildPaths(root)
    # The loop's read side and the CLI's both keep approval required ...
    assert LoopFiles(paths).view(T0).policy.command_approval == "required"
    assert load_workspace(paths, T0).policy.command_approval == "required"
    # ... so the checker does not run the command.
    assert [(r["id"], r["ran"]) for r in check(root)] == [("sneaky", False)]
    assert not marker.exists()
    status = invoke("--status", "--dir", str(root)).output
    assert "was loosened during an agent's run" in status and "wild --approve @policy" in status
    listing = invoke("--approve", "--dir", str(root)).output
    assert "  @policy: Command Approval: trusted (wild keeps required)" in listing
    shown = orjson.loads(invoke("--show-policy", "--json", "--dir", str(root)).output)
    assert shown["commandApproval"] == "required"
    assert "Command Approval: trusted (wild keeps required)" in shown["heldBack"]


def test_update_policy_through_the_cli_is_trusted(root: Path) -> None:
    marker = root.parent / "ran.marker"
    with (root / "barriers.md").open("a") as handle:
        handle.write(command_barrier(marker))
    assert invoke("--update-policy", "autonomous", "--dir", str(root)).exit_code == 0
    assert [(r["id"], r["ran"]) for r in check(root)] == [("sneaky", True)]
    assert marker.exists()
    assert "loosened" not in invoke("--status", "--dir", str(root)).output


def test_a_hand_edit_runs_once_a_human_approves_the_policy(root: Path) -> None:
    marker = root.parent / "ran.marker"
    with (root / "barriers.md").open("a") as handle:
        handle.write(command_barrier(marker))
    loosen(root / "human-policy.md", "trusted")
    assert [r["ran"] for r in check(root)] == [False]
    approved = invoke("--approve", "@policy", "--dir", str(root))
    assert approved.exit_code == 0, approved.output
    assert approved.output == (
        f"Approved {root / 'human-policy.md'} as it stands: mode semi-autonomous, "
        "command approval trusted\n"
    )
    assert [r["ran"] for r in check(root)] == [True]
    assert marker.exists()


def test_tightening_by_hand_applies_at_once_and_cannot_be_loosened_back(root: Path) -> None:
    marker = root.parent / "ran.marker"
    with (root / "barriers.md").open("a") as handle:
        handle.write(command_barrier(marker))
    assert invoke("--update-policy", "autonomous", "--dir", str(root)).exit_code == 0
    policy = root / "human-policy.md"
    policy.write_text(policy.read_text().replace("trusted", "required", 1))
    assert [r["ran"] for r in check(root)] == [False]  # stricter: in force at once
    as_an_agent(
        root, lambda: policy.write_text(policy.read_text().replace("required", "trusted", 1))
    )
    assert [r["ran"] for r in check(root)] == [False]
    assert not marker.exists()


def test_a_timed_trust_ends_with_its_policy_even_if_the_file_says_longer(root: Path) -> None:
    assert (
        invoke("--update-policy", "autonomous", "--duration", "1h", "--dir", str(root)).exit_code
        == 0
    )
    policy = root / "human-policy.md"
    # The agent strikes the expiry out, so the file itself never expires.
    text = re.sub(r"\*\*(Active From|Duration|Expires At):\*\*.*\n", "", policy.read_text())
    as_an_agent(root, lambda: policy.write_text(text))
    paths = WildPaths(root)
    later = load_workspace(paths, T0.replace(year=2100))
    assert later.policy.command_approval == "required"


def test_an_agent_cannot_turn_off_permission_prompts_a_human_kept_on(tmp_path: Path) -> None:
    """Interactive keeps the agent's permission prompts; a hand edit to hands-off does not
    drop them for the next run."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    assert invoke("--update-policy", "interactive", "--dir", str(sim.paths.root)).exit_code == 0
    # Tighter by hand, so nothing waits on the human here: not a loosening.
    set_policy(sim.paths, progress_reports="None", escalation_threshold="never")
    sim.script = [
        [
            {
                "replace_in_file": ".wild/human-policy.md",
                "old": "- **Mode:** interactive",
                "new": "- **Mode:** hands-off",
            },
            *say(TASK),
        ],
        say(TASK, RESOLVED),
    ]
    sim.queue_request("stop")  # the work done, the loop waits for the human (item 20.9)
    sim.run(agent="claude", agent_cmd=None, max_iterations=4)
    assert sim.agent is not None and len(sim.agent.requests) >= 2
    assert all("--dangerously-skip-permissions" not in r.argv for r in sim.agent.requests)
    raised = {a["id"] for a in sim.alert_lines() if a["type"] == "policy-loosened"}
    assert len(raised) == 1  # once, not once per read


def test_an_agent_written_notify_command_is_not_run(tmp_path: Path) -> None:
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n")
    marker = tmp_path / "notified.marker"
    policy = ".wild/human-policy.md"
    sim.script = [
        [
            {
                "replace_in_file": policy,
                "old": APPROVAL,
                "new": f"- **Command Approval:** trusted\n- **Notify Command:** touch {marker}",
            },
            *say("<promise>NOTIFY_HUMAN</promise>", "<reason>look</reason>", TASK),
        ],
    ]
    result = sim.run()
    assert result.reason == "complete"
    assert sim.notes == []  # the Sim records what the Notify Command would be sent
    assert any("notify command not run" in line for line in sim.out)
    types = [(a["type"], a.get("context", {}).get("barrier")) for a in sim.alert_lines()]
    assert ("unapproved-command", "@notify") in types
    status = invoke("--status", "--dir", str(sim.paths.root)).output
    assert "the Notify Command is not approved" in status
    approved = invoke("--approve", "@notify", "--dir", str(sim.paths.root))
    assert approved.output.startswith(f"Approved @notify: touch {marker} (sha256 ")
    status = invoke("--status", "--dir", str(sim.paths.root)).output
    assert "the Notify Command is not approved" not in status
    assert not [k for k in open_unapproved_alerts(sim.paths.alerts) if k[0] == "@notify"]


# ---------------------------------------------------------------- the real loop, end to end

AGENT = """\
#!/bin/sh
cat >/dev/null
if [ "$WILD_ITERATION" = 1 ]; then
  printf '%b' '{barrier}' >> "$WILD_DIR/barriers.md"
  printf -- '- [ ] [P1] task-002: After\\n  - blockedBy: sneaky\\n' >> "$WILD_DIR/tasks.md"
  {python} - "$WILD_DIR/human-policy.md" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
for old, new in {edits!r}:
    text = text.replace(old, new, 1)
open(path, "w").write(text)
PY
  echo '<promise>TASK_COMPLETE</promise>'
fi
"""


def _unapproved_raised(root: Path) -> bool:
    alerts = root / "alerts.jsonl"
    text = alerts.read_text().replace(" ", "") if alerts.exists() else ""
    # Both alerts: a stop sent on the first alone may cut the agent short before its edit.
    return '"barrier":"sneaky"' in text and "policy-loosened" in text


def _loosening_raised(root: Path) -> bool:
    alerts = root / "alerts.jsonl"
    return alerts.exists() and "policy-loosened" in alerts.read_text()


@pytest.mark.parametrize("how", sorted(LOOSENINGS))
def test_the_real_loop_does_not_run_an_agents_command(root: Path, how: str) -> None:
    project = root.parent
    marker = project / "ran.marker"
    (root / "tasks.md").write_text("- [ ] [P1] task-001: Start\n")
    agent = project / "agent.sh"
    agent.write_text(
        AGENT.replace("{barrier}", command_barrier(marker).replace("\n", "\\n"))
        .replace("{python}", sys.executable)
        .replace("{edits!r}", repr(LOOSENINGS[how]))
    )
    agent.chmod(0o755)
    loop = subprocess.Popen(
        [sys.executable, "-m", "wild", "Goal", "--agent-cmd", str(agent), "--dir", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        # The checker either refuses the command (an unapproved-command alert) or runs it; the
        # loop's trust guard raises its own alert on its own wake, in either order.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (
            marker.exists() or (_unapproved_raised(root) and _loosening_raised(root))
        ):
            time.sleep(0.05)
    finally:
        invoke("--stop", "--dir", str(root))
        loop.wait(timeout=30)
    assert not marker.exists()
    assert _unapproved_raised(root)
    assert _loosening_raised(root)


# ---------------------------------------------------- a loop reading during --update-policy


def test_update_policy_records_the_trust_before_it_writes_the_file(root: Path) -> None:
    """A loop woken by the file's change must find the new record already there."""
    paths = WildPaths(root)
    seen: list[RecordedTrust | None] = []

    def edit(text: str) -> str:
        seen.append(read_trust(paths)[1])
        return update_policy_text(text, "autonomous", now=T0, duration=None)

    record_trust(paths, T0, edit)
    assert seen[0] is None  # computing the trust, before anything is written
    assert seen[-1] == RecordedTrust("autonomous", "trusted")  # update_text writing the file
    assert "- **Command Approval:** trusted" in paths.policy.read_text()


def test_a_view_caught_between_record_and_file_raises_nothing_and_records_nothing(
    root: Path,
) -> None:
    paths = WildPaths(root)
    before = paths.policy.read_text()
    assert invoke("--update-policy", "autonomous", "--dir", str(root)).exit_code == 0
    out: list[str] = []
    guard = TrustGuard(paths, FakeClock(), out.append)
    fresh = load_workspace(paths, T0)
    # The file already new, the record read before it changed: looks loosened.
    guard.observe(_stale(fresh, None, fresh.policy_doc))
    # The record already new, the file read before it changed: looks stricter.
    old_doc = policy_md.parse(before)
    guard.observe(_stale(fresh, fresh.recorded_trust, old_doc))
    assert (
        not (root / "alerts.jsonl").exists()
        or "policy-loosened" not in (root / "alerts.jsonl").read_text()
    )
    assert read_trust(paths)[1] == RecordedTrust("autonomous", "trusted")
    assert out == []


def _stale(
    ws: Workspace, recorded: RecordedTrust | None, doc: policy_md.PolicyDocument
) -> Workspace:
    """`ws` as a view that read `doc` and `recorded` would hold it."""
    held, _ = policy_in_force(doc, recorded, T0)
    assert held.loosened or held.to_record
    return replace(ws, held=held, policy=held.policy, recorded_trust=recorded)
