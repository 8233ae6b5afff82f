"""An iteration's number is never given to a second run (issue 20, item 19). A SIGKILL of
the loop between its agent's end and the save of the judged state used to leave a state.json
without the run's record and without its number counted, so the next loop ran the same
number again (its log survived as `iteration-N.2.log`). Here the kill is taken at exactly
that instant: the bytes state.json holds when the loop logs `agent-end` are what a SIGKILL
there leaves on disk; a new loop starts from them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_loop import TASK, project, run, say, script
from wild.store.events_log import EventLog

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def test_a_kill_between_the_agents_end_and_its_count_does_not_reuse_the_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] [P1] task-001: Train\n- [ ] [P2] task-002: Test\n")
    script(monkeypatch, tmp_path, say("Done.", TASK))
    left_by_a_kill: list[bytes] = []
    hold = EventLog.hold  # the agent-end line, written with the judgment's lines

    def spying(events: EventLog, kind: str, **fields: Any) -> str:
        if kind == "agent-end" and not left_by_a_kill:
            left_by_a_kill.append(paths.state.read_bytes())
        return hold(events, kind, **fields)

    monkeypatch.setattr(EventLog, "hold", spying)
    run(paths, max_iterations=1)
    paths.state.write_bytes(left_by_a_kill[0])  # the loop died at that instant

    result, out = run(paths, max_iterations=5)

    assert result.reason == "complete", out
    names = sorted(p.name for p in paths.logs.iterdir() if p.name.endswith(".log"))
    assert names == ["iteration-1.log", "iteration-2.log"]
