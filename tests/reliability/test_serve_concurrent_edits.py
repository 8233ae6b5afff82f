"""The dashboard and an editor on one tasks.md at once: the page's ticks go through the same
compare-and-swap edit as the CLI's, so no line the editor adds is lost, and no tick lands on a
status the page did not see (issue 14)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.serve.conftest import Client
from tests.serve.sample import make_project
from wild.clock import SystemClock
from wild.serve.server import Dashboard
from wild.store.files import read_text

ROUNDS = 100


@pytest.fixture
def board(tmp_path: Path) -> Iterator[Client]:
    paths = make_project(tmp_path, runs=0, iterations=0)
    with Dashboard(paths, SystemClock(), port=0) as dashboard:
        yield Client(dashboard, paths)


def test_ticks_from_the_page_while_an_editor_appends_lose_nothing(board: Client) -> None:
    tasks = board.paths.tasks
    stop = threading.Event()
    added: list[str] = []

    def editor() -> None:
        # Appends in place (vim's `:w` on a file it may append to) while the page ticks.
        n = 0
        while not stop.is_set() and n < 10 * ROUNDS:
            line = f"- [ ] [P3] task-{5000 + n}: added in the editor {n}\n"
            fd = os.open(tasks, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
            added.append(line)
            n += 1

    thread = threading.Thread(target=editor)
    thread.start()
    status, applied, refused = "todo", 0, 0
    try:
        for _ in range(ROUNDS):
            target = "complete" if status == "todo" else "todo"
            body = {"action": "tick-task", "id": "task-001", "seen": status, "status": target}
            reply = board.act(body)
            assert reply.status in (200, 409), reply.body
            if reply.status == 200:
                status, applied = target, applied + 1
            else:
                refused += 1
    finally:
        stop.set()
        thread.join()
    text = read_text(tasks)
    assert all(line in text for line in added), "an editor's line was lost"
    box = "x" if status == "complete" else " "
    assert f"- [{box}] [P1] task-001" in text
    assert applied == ROUNDS and refused == 0, orjson.dumps([applied, refused])
    print(f"{ROUNDS} ticks from the page, {len(added)} lines from the editor, none lost")
