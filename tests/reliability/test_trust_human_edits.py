"""Issue 20 item 8: a human's own edits of human-policy.md need no ceremony.

A human-written policy with `Command Approval: trusted`, in a folder where wild never ran,
was rejected by the first loop ("loosened by hand … run `wild --approve @policy`"). The file
is the baseline at a folder's first loop and after every edit made while no agent of wild
runs; only a loosening made during an agent's run (its time inside a run events.log records,
even if the loop was down when it was noticed) waits for `wild --approve @policy`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.cli_support import invoke
from tests.loop.harness import TASK, new_project, say
from tests.reliability.test_trust_policy import APPROVAL, command_barrier
from wild.paths import TEMPLATES_DIR, WildPaths
from wild.policy.trust import RecordedTrust
from wild.workspace import read_trust

TRUSTED = "- **Command Approval:** trusted"

# Finishes each task; asked with the goal once no work is left, confirms it is met.
# Finishes each task; asked with the goal once no work is left, confirms it is met.
AGENT = """\
#!/bin/sh
cat >/dev/null
if [ "$WILD_WORK_TYPE" = planning ]; then echo '<promise>COMPLETE</promise>'
else echo '<promise>TASK_COMPLETE</promise>'; fi
"""


def _wild(root: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "wild", *args, "--dir", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def test_the_first_loop_runs_a_human_written_trusted_policy_with_no_alert(tmp_path: Path) -> None:
    """The README's first loop: the human wrote .wild/ by hand, wild never ran there."""
    root = tmp_path / ".wild"
    root.mkdir()
    policy = (TEMPLATES_DIR / "human-policy.md").read_text()
    assert APPROVAL in policy
    (root / "human-policy.md").write_text(policy.replace(APPROVAL, TRUSTED))
    marker = tmp_path / "ran.marker"
    (root / "barriers.md").write_text("# Barriers\n" + command_barrier(marker, "data-ready"))
    (root / "tasks.md").write_text(
        "- [ ] [P1] task-001: Prepare\n- [ ] [P1] task-002: Train\n  - blockedBy: data-ready\n"
    )
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT)
    agent.chmod(0o755)
    loop = _wild(root, "Train the model", "--agent-cmd", str(agent))
    output, _ = loop.communicate(timeout=60)
    assert loop.returncode == 0, output
    assert marker.exists()  # the unapproved barrier command ran: the human's trust holds
    alerts = root / "alerts.jsonl"
    assert not alerts.exists() or alerts.read_text() == "", alerts.read_text()
    assert "loosened" not in output and "approve" not in output
    assert read_trust(WildPaths(root))[1] == RecordedTrust("semi-autonomous", "trusted")
    assert "loosened" not in invoke("--status", "--dir", str(root)).output


def test_a_human_edit_while_the_loop_waits_is_taken_at_once(tmp_path: Path) -> None:
    """A loosening the watcher sees while no agent runs is the human's: no alert, in force."""
    sim = new_project(tmp_path, "- [ ] [P1] task-001: A\n- [ ] [P1] task-002: B\n")
    with sim.paths.barriers.open("a") as handle:
        handle.write(command_barrier(tmp_path / "x.marker", "gate"))
    sim.paths.tasks.write_text(sim.paths.tasks.read_text() + "  - blockedBy: gate\n")

    def human_loosens() -> None:
        text = sim.paths.policy.read_text().replace(APPROVAL, TRUSTED)
        sim.clock.advance(60)  # a minute after the agent's run, while the loop waits
        sim.paths.policy.write_text(text)
        at = sim.clock.now().timestamp()  # dated on the test's clock, as the runs are
        os.utime(sim.paths.policy, (at, at))

    sim.queue_edit(sim.paths.policy, human_loosens)
    sim.queue_request("stop")
    sim.script = [say(TASK)]
    sim.run(agent="claude", agent_cmd=None)
    assert sim.worked_on()[0] == ("task", "task-001")  # then the loop waited on the gate
    assert all(a["type"] != "policy-loosened" for a in sim.alert_lines())
    assert sim.loop.model.ws.policy.command_approval == "trusted"
    assert read_trust(sim.paths)[1] == RecordedTrust("semi-autonomous", "trusted")


def test_an_agents_loosening_noticed_only_after_its_loop_was_killed_stays_held(
    tmp_path: Path,
) -> None:
    """The loop is SIGKILLed during the agent's run, after the agent loosened the policy;
    nothing of wild saw the change happen. Its time falls inside the run events.log records
    (an agent-start with no end before the next loop start), so it stays the agent's."""
    root = tmp_path / ".wild"
    assert invoke("--init", "--dir", str(root)).exit_code == 0
    marker = tmp_path / "ran.marker"
    with (root / "barriers.md").open("a") as handle:
        handle.write(command_barrier(marker))
    (root / "tasks.md").write_text("- [ ] [P1] task-001: Start\n")
    loosened = tmp_path / "loosened"
    agent = tmp_path / "agent.sh"
    edit = tmp_path / "loosen.py"
    edit.write_text(
        "import sys\npath = sys.argv[1]\ntext = open(path).read()\n"
        f"open(path, 'w').write(text.replace({APPROVAL!r}, {TRUSTED!r}))\n"
    )
    agent.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        f'{sys.executable} {edit} "$WILD_DIR/human-policy.md"\ntouch {loosened}\nsleep 60\n'
    )
    agent.chmod(0o755)
    loop = _wild(root, "Goal", "--agent-cmd", str(agent))
    try:
        deadline = time.monotonic() + 30
        while not loosened.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert loosened.exists()
        assert TRUSTED in (root / "human-policy.md").read_text()
    finally:
        loop.send_signal(signal.SIGKILL)
        loop.wait(timeout=30)
    status = invoke("--status", "--dir", str(root)).output
    assert "was loosened during an agent's run" in status
    rows = invoke("--check-barriers", "--json", "--dir", str(root)).output
    assert '"ran":false' in rows.replace(" ", "")
    assert not marker.exists()
    # A new loop takes over: still the agent's, held, and one alert asks the human.
    again = _wild(root, "Goal", "--agent-cmd", "true", "--once")
    again.communicate(timeout=60)
    assert "policy-loosened" in (root / "alerts.jsonl").read_text()
    assert not marker.exists()
    assert read_trust(WildPaths(root))[1] is None
