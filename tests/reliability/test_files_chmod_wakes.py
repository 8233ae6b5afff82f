"""A read-only tasks.md holds the loop's work; `chmod u+w` in a shell resumes it (issue 20,
item 14). The real loop with its real folder watcher (inotify) and the fake agent as a real
process: no content changes, so only the attribute event can wake it; the safety rescan is an
hour away."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.test_loop import TASK, loop_options, project, say, script, task_status
from wild.loop.driver import Loop
from wild.wake import WakeReason

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

READ_ONLY = "the file is read-only (mode 444)"
GIVE_UP_S = 30.0  # only so a loop that never wakes fails the test instead of hanging it


def test_chmod_u_w_on_a_read_only_tasks_file_resumes_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = project(tmp_path, "- [ ] Build the UI\n")  # needs an id written: refused
    paths.tasks.chmod(0o444)
    script(monkeypatch, tmp_path, say("Done.", TASK))
    lines: list[str] = []
    loop: Loop

    def human() -> None:
        """Once the loop sleeps with nothing else to do: `chmod u+w` in a shell."""
        asleep = loop.waker.sleeps
        while loop.waker.sleeps == asleep and not loop.stop_event.is_set():
            time.sleep(0.01)
        subprocess.run(["chmod", "u+w", str(paths.tasks)], check=True)

    def out(line: str) -> None:
        lines.append(line)
        if READ_ONLY in line:
            threading.Thread(target=human, daemon=True).start()

    loop = Loop(paths, loop_options(safety_rescan_s=3600.0), out=out)

    def give_up() -> None:
        loop.stop_event.set()
        loop.waker.wake(WakeReason("signal", None, "the test gave up"))

    timer = threading.Timer(GIVE_UP_S, give_up)
    timer.start()
    try:
        result = loop.run()
    finally:
        timer.cancel()

    assert result.reason == "complete", lines
    assert sum(READ_ONLY in line for line in lines) == 1
    assert task_status(paths, "task-001") == "complete"
