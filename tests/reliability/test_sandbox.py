"""Issue 20 item 5: `--sandbox` keeps a hostile agent away from what decides what runs.

A real `python -m wild … --sandbox` loop runs a shell agent under the real bubblewrap; the agent
tries every way a shell has to change the human's policy and checks, wild's event log and the
approval store, and to signal the loop. (state.json is left out: wild itself replaces it as the
agent starts, which drops its read-only mount; see wild/agents/sandbox.py.) Where bwrap cannot
work, `--sandbox` is refused before `.wild/` exists or any agent starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.loop.harness import T0
from wild.agents import sandbox
from wild.barriers.approvals import store_files
from wild.commands.init import init_wild
from wild.errors import WildError
from wild.paths import WildPaths, approvals_path
from wild.policy.trust import RecordedTrust
from wild.workspace import read_trust, record_trust

LOOP_TIMEOUT_S = 120.0  # a safety net for a hung loop, not a speed check
MARK = "PWNED"
# Each way a shell changes a file; each one's outcome goes to attempts.txt in the project.
AGENT = r"""#!/bin/sh
cat > /dev/null
try() {
  if sh -c "$2" 2>>errors.txt; then echo "ok $1"; else echo "refused $1"; fi >> attempts.txt
}
for f in .wild/human-policy.md .wild/checks.md .wild/events.log "$APPROVALS"; do
  try "append $f" "printf {mark} >> '$f'"
  try "overwrite $f" "printf {mark} > '$f'"
  try "replace $f" "printf {mark} > '$f.new' && mv '$f.new' '$f'"
  try "remove $f" "rm '$f'"
done
try "create $APPROVALS.new" "printf {mark} > '$APPROVALS.new'"
try "rename .wild" "mv .wild .wild-moved"
loop=$({python} -c 'import json; print(json.load(open(".wild/state.json"))["loopProcess"]["pid"])')
try "signal the loop $loop" "kill -STOP $loop"
# The agent's own wild commands still work: their locks are /dev/null to it.
{python} -m wild --run-checks > /dev/null && echo "checks ran" >> result.txt
echo "the agent's work" >> result.txt
echo "<promise>COMPLETE</promise>"
"""


def _start_fails(bwrap_dir: Path, project: Path, agent: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": str(bwrap_dir)}
    return subprocess.run(
        [sys.executable, "-m", "wild", "Ship it", "--sandbox", "--agent-cmd", str(agent)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=LOOP_TIMEOUT_S,
        check=False,
    )


@pytest.fixture
def marker_agent(tmp_path: Path) -> Path:
    """An agent that only leaves a marker: it must never start."""
    agent = tmp_path / "agent.sh"
    agent.write_text(f"#!/bin/sh\ntouch {tmp_path / 'agent-ran'}\n")
    agent.chmod(0o755)
    return agent


def test_sandbox_without_bwrap_is_refused_before_anything_starts(
    tmp_path: Path, marker_agent: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    no_bwrap = tmp_path / "bin"
    no_bwrap.mkdir()
    result = _start_fails(no_bwrap, project, marker_agent)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr == (
        "Error: --sandbox needs bubblewrap: `bwrap` is not on PATH; install it (Debian/Ubuntu: "
        "apt install bubblewrap; Fedora: dnf install bubblewrap)\n"
    )
    assert not (project / ".wild").exists()
    assert not (tmp_path / "agent-ran").exists()


def test_sandbox_where_user_namespaces_are_off_is_refused_before_anything_starts(
    tmp_path: Path, marker_agent: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # What bwrap says on a kernel without unprivileged user namespaces.
    fake = bin_dir / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the "
        "kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    result = _start_fails(bin_dir, project, marker_agent)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr == (
        f"Error: --sandbox: {fake} cannot make a sandbox here (bwrap: No permissions to creating "
        "new namespace, likely because the kernel does not allow non-privileged user namespaces."
        "; exit 1); allow unprivileged user namespaces (sysctl "
        "kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also "
        "kernel.apparmor_restrict_unprivileged_userns=0) or run wild without --sandbox\n"
    )
    assert not (project / ".wild").exists()
    assert not (tmp_path / "agent-ran").exists()


@pytest.fixture
def bwrap() -> str:
    try:
        return sandbox.require_bwrap(os.environ)
    except WildError as error:
        pytest.fail(f"{error}: these tests need a working bubblewrap")


@pytest.mark.slow
def test_a_sandboxed_agent_cannot_touch_policy_checks_state_or_approvals(
    tmp_path: Path, bwrap: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    paths = WildPaths(project / ".wild")
    init_wild(paths)
    record_trust(paths, T0, lambda text: text)  # the approval store exists, as after --approve
    store = store_files(project)[0]  # the project's own file in the store
    assert store.parent.parent == approvals_path().parent
    before = {path: path.read_bytes() for path in (paths.policy, paths.checks)}
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT.replace("{mark}", MARK).replace("{python}", sys.executable))
    agent.chmod(0o755)
    result = subprocess.run(
        [sys.executable, "-m", "wild", "Ship it", "--sandbox", "--agent-cmd", str(agent)],
        cwd=project,
        env={**os.environ, "APPROVALS": str(store)},
        capture_output=True,
        text=True,
        timeout=LOOP_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all work complete" in result.stdout
    attempts = (project / "attempts.txt").read_text().splitlines()
    assert len(attempts) == 4 * 4 + 3
    assert [line for line in attempts if not line.startswith("refused ")] == []
    # Every byte the human wrote is where it was; the agent's mark is nowhere (the approval
    # store is wild's to write too: it records which approvals it wrote as the agent starts).
    assert {path: path.read_bytes() for path in before} == before
    assert MARK.encode() not in paths.events.read_bytes()
    assert MARK.encode() not in store.read_bytes()
    assert read_trust(paths)[1] == RecordedTrust("semi-autonomous", "required")
    assert not store.with_name(f"{store.name}.new").exists()
    assert (project / ".wild").is_dir() and not (project / ".wild-moved").exists()
    # The project itself was the agent's to write, and the run is recorded as sandboxed.
    assert (project / "result.txt").read_text() == "checks ran\nthe agent's work\n"
    ends = [orjson.loads(line) for line in paths.events.read_bytes().splitlines()]
    assert [e.get("sandbox") for e in ends if e["kind"] == "agent-end"] == ["bwrap"]
