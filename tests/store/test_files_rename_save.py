"""An editor saving by rename leaves no file for an instant (vim: rename tasks.md to tasks.md~,
create tasks.md, write it). wild must neither take that instant for an empty file nor create
the file itself then: the editor would write into wild's file, and wild's edit is lost."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from wild.parsers import tasks as tasks_md
from wild.store.files import update_text

START = "- [ ] task-001: a\n- [ ] task-002: b\n"


def _save_by_rename(path: Path, text: str, gap_s: float) -> threading.Thread:
    """vim's rename save: move the file aside now; after `gap_s`, create it (no O_TRUNC,
    as vim opens it) and write the new text, then drop the backup."""
    os.rename(path, path.with_name(path.name + "~"))

    def finish() -> None:
        time.sleep(gap_s)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, text.encode())
        os.close(fd)
        os.unlink(path.with_name(path.name + "~"))

    thread = threading.Thread(target=finish)
    thread.start()
    return thread


def test_a_rename_save_just_before_the_swap_keeps_both_edits(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.md"
    tasks.write_text(START)
    saved = START + "- [ ] task-003: the editor's\n"
    threads: list[threading.Thread] = []

    def on_written(_data: bytes) -> None:
        if not threads:  # the first attempt only
            threads.append(_save_by_rename(tasks, saved, gap_s=0.005))

    def tick(text: str) -> str:
        return tasks_md.set_status(text, "task-001", "complete")

    done = update_text(tasks, tick, tmp_path / ".lock", on_written=on_written)
    threads[0].join()
    expected = saved.replace("- [ ] task-001", "- [x] task-001")
    assert tasks.read_text() == expected
    assert done == expected


def test_a_rename_save_as_wild_reads_is_not_an_empty_file(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.md"
    tasks.write_text(START)
    saved = START + "- [ ] task-003: the editor's\n"
    thread = _save_by_rename(tasks, saved, gap_s=0.005)

    def tick(text: str) -> str:
        return tasks_md.set_status(text, "task-002", "complete")

    done = update_text(tasks, tick, tmp_path / ".lock")
    thread.join()
    expected = saved.replace("- [ ] task-002", "- [x] task-002")
    assert tasks.read_text() == expected
    assert done == expected


def test_a_file_emptied_by_an_in_place_writer_that_pauses_is_not_taken_as_empty(
    tmp_path: Path,
) -> None:
    """vim writing in place truncates the file, then writes it; on a busy machine it may be
    descheduled in between for longer than wild's settle time."""
    tasks = tmp_path / "tasks.md"
    tasks.write_text(START)
    saved = START + "- [ ] task-003: the editor's\n"
    threads: list[threading.Thread] = []

    def slow_writer() -> None:
        fd = os.open(tasks, os.O_WRONLY)
        os.ftruncate(fd, 0)

        def finish() -> None:
            time.sleep(0.1)  # five times wild's settle time
            os.write(fd, saved.encode())
            os.close(fd)

        threads.append(threading.Thread(target=finish))
        threads[0].start()

    def tick(text: str) -> str:
        if not threads:
            slow_writer()  # after wild's read: its re-check finds the file empty
        return tasks_md.set_status(text, "task-001", "complete")

    done = update_text(tasks, tick, tmp_path / ".lock")
    threads[0].join()
    expected = saved.replace("- [ ] task-001", "- [x] task-001")
    assert tasks.read_text() == expected
    assert done == expected


def test_a_save_displaced_by_the_swap_is_put_back_before_anyone_reads_around_it(
    tmp_path: Path,
) -> None:
    """An agent saves by rename in the instant between wild's re-check and its swap, and vim
    opens the file a moment later. vim must read the agent's save, not wild's file without it
    (vim would build on that and erase the agent's change for good)."""
    tasks = tmp_path / "tasks.md"
    tasks.write_text(START)
    agent = START.replace("- [ ] task-002", "- [x] task-002")
    vim_saw: list[str] = []
    threads: list[threading.Thread] = []

    def on_written(_data: bytes) -> None:
        if threads:
            return
        (tmp_path / "agent.tmp").write_text(agent)
        os.replace(tmp_path / "agent.tmp", tasks)  # the agent's save, just before the swap

        def vim_reads() -> None:
            time.sleep(0.005)
            vim_saw.append(tasks.read_text())

        threads.append(threading.Thread(target=vim_reads))
        threads[0].start()

    def tick(text: str) -> str:
        return tasks_md.set_status(text, "task-001", "complete")

    done = update_text(tasks, tick, tmp_path / ".lock", on_written=on_written)
    threads[0].join()
    assert "- [x] task-002" in vim_saw[0], "vim read wild's file without the agent's save"
    assert done == agent.replace("- [ ] task-001", "- [x] task-001") == tasks.read_text()
