"""`wild "GOAL" --webhook-port 0`: a webhook call satisfies a barrier and wakes the idle loop."""

from __future__ import annotations

import http.client
import re
import stat
import sys
import threading
from pathlib import Path

from wild.clock import SystemClock
from wild.commands.init import init_wild
from wild.commands.run_loop import root_warning, run_loop, webhook_credentials
from wild.loop import LoopOptions, LoopResult
from wild.paths import WildPaths

# Ticks its task; asked to plan once the task is done, it confirms the goal is met.
AGENT = (
    "import os, sys; sys.stdin.read(); planning = os.environ['WILD_WORK_TYPE'] == 'planning'; "
    "print('<promise>COMPLETE</promise>' if planning else '<promise>TASK_COMPLETE</promise>')"
)


def test_webhook_satisfies_a_barrier_and_the_loop_finishes(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    paths.tasks.write_text("- [ ] [P1] task-001: after the deploy\n  - blockedBy: deployed\n")
    paths.barriers.write_text("## [WAITING] deployed\n- Type: webhook\n")
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    said: list[str] = []
    announced = threading.Event()

    def out(message: str) -> None:
        said.append(message)
        if message.startswith("🔗 Webhook"):
            announced.set()

    results: list[LoopResult] = []
    options = LoopOptions(
        goal="ship it", agent="custom", agent_cmd=f"{sys.executable} {agent}", max_iterations=3
    )
    worker = threading.Thread(
        target=lambda: results.append(
            run_loop(paths, options, SystemClock(), webhook_port=0, out=out)
        )
    )
    worker.start()
    assert announced.wait(30)
    port = int(re.findall(r"127\.0\.0\.1:(\d+)", said[0])[0])
    token = (paths.root / "webhook-token").read_text().strip()
    assert stat.S_IMODE((paths.root / "webhook-token").stat().st_mode) == 0o600
    for authorization, status in (("Bearer wrong", 401), (f"Bearer {token}", 200)):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request(
            "POST",
            "/barriers/deployed/satisfy",
            body=b"{}",
            headers={"Authorization": authorization, "Content-Type": "application/json"},
        )
        assert conn.getresponse().status == status
        conn.close()
    worker.join(60)
    assert not worker.is_alive()
    assert [r.reason for r in results] == ["complete"]
    assert "- [x] [P1] task-001" in paths.tasks.read_text()
    assert "## [SATISFIED] deployed" in paths.barriers.read_text()
    # The refused request is one line among the loop's own output, not a traceback.
    refused = [line for line in said if line.startswith("webhook: refused 127.0.0.1:")]
    assert len(refused) == 1 and refused[0].endswith(
        ": 401 missing or wrong Authorization bearer token or X-Wild-Signature"
    )


def test_webhook_credentials_prefer_the_environment(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path)
    assert webhook_credentials(paths, {"WILD_WEBHOOK_TOKEN": "t"}) == ("t", None)
    assert webhook_credentials(paths, {"WILD_WEBHOOK_SECRET": "s"}) == (None, b"s")
    token, secret = webhook_credentials(paths, {})
    assert secret is None and token is not None and len(token) >= 32
    assert webhook_credentials(paths, {}) == (token, None)  # kept, not regenerated


def test_root_warning_only_for_claude_as_root_outside_a_sandbox() -> None:
    warning = root_warning("claude", 0, {})
    assert warning is not None and "IS_SANDBOX=1" in warning
    assert root_warning("claude", 0, {"IS_SANDBOX": "1"}) is None
    assert root_warning("claude", 1000, {}) is None
    assert root_warning("custom", 0, {}) is None
