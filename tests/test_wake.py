"""Wake-ups: real file events from other processes, ignored writes, coalescing, rescan, signals."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from watchdog.events import FileSystemEvent

from wild import wake
from wild.errors import WildError
from wild.store.files import atomic_write
from wild.store.self_writes import SelfWrites
from wild.wake import (
    TIMEOUT,
    FolderWatcher,
    Waker,
    WakeReason,
    install_signal_handlers,
    is_temp_name,
    new_observer,
)

# An upper bound so a broken watcher fails the test instead of hanging it; never asserted on.
PATIENCE_S = 10.0

StartWatcher = Callable[..., FolderWatcher]


@pytest.fixture
def wild_dir(tmp_path: Path) -> Path:
    root = tmp_path / ".wild"
    root.mkdir()
    for name in ("tasks.md", "alerts.jsonl", "human.md", "barriers.md"):
        (root / name).write_bytes(b"")
    # Event paths are canonical; compare against the same spelling.
    return Path(os.path.realpath(root))


@pytest.fixture
def start_watcher(wild_dir: Path) -> Iterator[StartWatcher]:
    started: list[FolderWatcher] = []

    def start() -> FolderWatcher:
        watcher = FolderWatcher(wild_dir, Waker(), SelfWrites())
        watcher.start()
        started.append(watcher)
        return watcher

    yield start
    for watcher in started:
        watcher.stop()


def run_python(code: str, *args: str) -> None:
    """Run `code` in a separate process, as a job, an agent or an editor would write."""
    subprocess.run([sys.executable, "-c", code, *args], check=True)


_APPEND = """
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
os.write(fd, sys.argv[2].encode())
os.close(fd)
"""


def append_from_other_process(path: Path, text: str) -> None:
    """One O_APPEND write by another process, the way a job appends an alert."""
    run_python(_APPEND, str(path), text)


def file_reason(path: Path) -> WakeReason:
    return WakeReason("file", str(path))


# -- Waker -------------------------------------------------------------------------------------


def test_wake_from_another_thread_returns_the_reason_and_counts_one_wakeup() -> None:
    waker = Waker()
    reason = WakeReason("signal", None, "SIGTERM")
    threading.Thread(target=waker.wake, args=(reason,)).start()
    assert waker.wait(PATIENCE_S) == [reason]
    assert waker.wakeups == 1
    assert waker.received == 1


def test_reasons_queued_while_busy_come_back_together_deduplicated_in_arrival_order() -> None:
    waker = Waker()
    first = WakeReason("file", "/w/alerts.jsonl")
    second = WakeReason("barrier", None, "barrier-7")
    for _ in range(50):
        waker.wake(first)
    waker.wake(second)
    waker.wake(first)
    assert waker.wait(0) == [first, second]
    assert waker.wait(0) == []
    assert (waker.wakeups, waker.received) == (1, 52)


def test_wait_times_out_empty_without_counting_a_wakeup() -> None:
    waker = Waker()
    assert waker.wait(0.05) == []
    assert waker.wakeups == 0
    assert waker.sleeps == 1


def test_temp_names() -> None:
    temps = [".tasks.md.k3j.tmp", "human.md.swp", ".human.md.swx", "tasks.md~", "4913"]
    assert [is_temp_name(name) for name in temps] == [True] * 5
    assert [is_temp_name(name) for name in ("tasks.md", "exit", "human.md.bak")] == [False] * 3


# -- FolderWatcher: what wakes -----------------------------------------------------------------


def test_append_by_another_process_wakes_with_alerts(
    wild_dir: Path, start_watcher: StartWatcher
) -> None:
    watcher = start_watcher()
    append_from_other_process(wild_dir / "alerts.jsonl", '{"id": "alert-1"}\n')
    assert watcher.wait_for_work(timeout=PATIENCE_S) == [file_reason(wild_dir / "alerts.jsonl")]
    assert watcher.waker.wakeups == 1


def test_rename_save_of_human_md_wakes_with_human_md(
    wild_dir: Path, start_watcher: StartWatcher
) -> None:
    watcher = start_watcher()
    target = wild_dir / "human.md"
    run_python(
        "import os\n"
        f"tmp = {str(wild_dir / '.human.md.x1.tmp')!r}\n"
        "with open(tmp, 'w') as f: f.write('## 2026-02-08T10:00:00Z\\nhello\\n')\n"
        f"os.replace(tmp, {str(target)!r})\n"
    )
    assert watcher.wait_for_work(timeout=PATIENCE_S) == [file_reason(target)]


def test_vim_style_save_backup_rename_then_new_file_wakes_only_for_human_md(
    wild_dir: Path, start_watcher: StartWatcher
) -> None:
    watcher = start_watcher()
    target = wild_dir / "human.md"
    backup = wild_dir / "human.md~"
    # vim (backupcopy=auto): probe file 4913, rename the original away, write anew, drop backup.
    probe = wild_dir / "4913"
    probe.write_bytes(b"")
    probe.unlink()
    os.replace(target, backup)
    target.write_bytes(b"new text\n")
    backup.unlink()
    append_from_other_process(wild_dir / "alerts.jsonl", "{}\n")  # a marker after the save
    reasons: list[WakeReason] = []
    while file_reason(wild_dir / "alerts.jsonl") not in reasons and TIMEOUT not in reasons:
        reasons += watcher.wait_for_work(timeout=PATIENCE_S)
    assert reasons == [file_reason(target), file_reason(wild_dir / "alerts.jsonl")]


def test_own_write_does_not_wake(wild_dir: Path, start_watcher: StartWatcher) -> None:
    watcher = start_watcher()
    data = b"- [ ] task-001 written by wild\n"
    watcher.self_writes.remember(wild_dir / "tasks.md", data)
    atomic_write(wild_dir / "tasks.md", data)
    assert watcher.wait_for_work(timeout=0.3) == [TIMEOUT]
    assert watcher.waker.wakeups == 0


def test_own_write_is_skipped_but_a_later_human_edit_of_the_same_file_wakes(
    wild_dir: Path, start_watcher: StartWatcher
) -> None:
    watcher = start_watcher()
    tasks = wild_dir / "tasks.md"
    data = b"- [/] task-001\n"
    watcher.self_writes.remember(tasks, data)
    atomic_write(tasks, data)
    # One observer thread delivers events in order, so this later write is a fence: had
    # wild's own write woken the loop, its reason would come first.
    append_from_other_process(wild_dir / "alerts.jsonl", "{}\n")
    assert watcher.wait_for_work(timeout=PATIENCE_S) == [file_reason(wild_dir / "alerts.jsonl")]
    append_from_other_process(tasks, "- [ ] task-002 by a human\n")
    assert watcher.wait_for_work(timeout=PATIENCE_S) == [file_reason(tasks)]
    assert watcher.waker.wakeups == 2


def test_temp_and_wild_only_files_do_not_wake(wild_dir: Path, start_watcher: StartWatcher) -> None:
    watcher = start_watcher()
    for name in (".tasks.md.a1.tmp", "human.md.swp", "tasks.md~", "4913", ".lock"):
        (wild_dir / name).write_bytes(b"x")
    for name in ("state.json", "events.log", "alerts.archive.jsonl"):
        (wild_dir / name).write_bytes(b"{}\n")
    (wild_dir / "logs").mkdir()
    (wild_dir / "logs" / "iteration-1.log").write_bytes(b"agent output\n")
    append_from_other_process(wild_dir / "barriers.md", "# fence\n")
    assert watcher.wait_for_work(timeout=PATIENCE_S) == [file_reason(wild_dir / "barriers.md")]
    assert watcher.waker.received == 1


def test_start_without_the_folder_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / ".wild"
    watcher = FolderWatcher(missing, Waker(), SelfWrites())
    with pytest.raises(WildError) as raised:
        watcher.start()
    assert str(raised.value) == (
        f"{missing}: the state folder does not exist; run `wild --init` or pass --dir"
    )


# -- idle and coalescing -----------------------------------------------------------------------


def test_idle_does_not_spin(start_watcher: StartWatcher) -> None:
    watcher = start_watcher()
    assert watcher.wait_for_work(timeout=1.5) == [TIMEOUT]
    # One block for the whole wait: no tick, no slices, nothing received.
    assert (watcher.waker.wakeups, watcher.waker.received, watcher.waker.sleeps) == (0, 0, 1)


def test_rapid_appends_coalesce_and_the_last_one_is_seen(
    wild_dir: Path, start_watcher: StartWatcher
) -> None:
    watcher = start_watcher()
    alerts = wild_dir / "alerts.jsonl"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os\n"
            f"for i in range(50):\n"
            f"    fd = os.open({str(alerts)!r}, os.O_WRONLY | os.O_APPEND)\n"
            "    os.write(fd, b'{\"n\": %d}\\n' % i)\n"
            "    os.close(fd)\n",
        ]
    )
    returns = 0
    seen = b""
    while True:
        reasons = watcher.wait_for_work(timeout=1.0 if writer.poll() is not None else PATIENCE_S)
        if reasons == [TIMEOUT]:
            break
        assert reasons == [file_reason(alerts)]
        returns += 1
        seen = alerts.read_bytes()
        time.sleep(0.02)  # the loop's work on this wake; events meanwhile pile up
    assert writer.wait() == 0
    assert seen.splitlines()[-1] == b'{"n": 49}'
    assert len(seen.splitlines()) == 50
    assert 1 <= returns <= 10


# -- safety rescan -----------------------------------------------------------------------------


def test_rescan_catches_changes_made_while_the_observer_was_stopped(
    wild_dir: Path, start_watcher: StartWatcher
) -> None:
    watcher = start_watcher()
    watcher.stop()
    (wild_dir / "tasks.md").write_bytes(b"- [ ] task-001 added while deaf\n")
    (wild_dir / "human.md").unlink()
    (wild_dir / "state.json").write_bytes(b"{}")
    assert watcher.rescan() == [
        WakeReason("rescan", str(wild_dir / "human.md"), "deleted"),
        WakeReason("rescan", str(wild_dir / "tasks.md"), "changed"),
    ]
    assert watcher.rescan() == []


def test_rescan_ignores_own_writes_and_changes_already_reported_by_events(
    wild_dir: Path, start_watcher: StartWatcher
) -> None:
    watcher = start_watcher()
    append_from_other_process(wild_dir / "alerts.jsonl", "{}\n")
    assert watcher.wait_for_work(timeout=PATIENCE_S) == [file_reason(wild_dir / "alerts.jsonl")]
    watcher.stop()
    watcher.self_writes.remember(wild_dir / "tasks.md", b"mine\n")
    atomic_write(wild_dir / "tasks.md", b"mine\n")
    assert watcher.rescan() == []


def test_wait_for_work_runs_the_rescan_when_it_falls_due(wild_dir: Path) -> None:
    watcher = FolderWatcher(wild_dir, Waker(), SelfWrites(), safety_rescan_s=0.2)
    watcher.start()
    watcher.stop()  # deaf: only the rescan can notice
    (wild_dir / "barriers.md").write_bytes(b"## [WAITING] barrier-1\n")
    assert watcher.wait_for_work(timeout=PATIENCE_S) == [
        WakeReason("rescan", str(wild_dir / "barriers.md"), "changed")
    ]


# -- signals -----------------------------------------------------------------------------------


def test_first_sigint_sets_stop_and_wakes_second_forces() -> None:
    waker = Waker()
    stop = threading.Event()
    before = signal.getsignal(signal.SIGINT)
    restore = install_signal_handlers(waker, stop)
    try:
        os.kill(os.getpid(), signal.SIGINT)
        assert waker.wait(PATIENCE_S) == [WakeReason("signal", None, "SIGINT")]
        assert stop.is_set()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    finally:
        restore()
    assert signal.getsignal(signal.SIGINT) is before


def test_sigterm_stops_gracefully_and_never_forces() -> None:
    waker = Waker()
    stop = threading.Event()
    restore = install_signal_handlers(waker, stop)
    try:
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGTERM)
        assert waker.wait(PATIENCE_S) == [WakeReason("signal", None, "SIGTERM")]
        assert stop.is_set()
    finally:
        restore()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_what_changed_between_making_the_watcher_and_starting_it_wakes_at_start(
    wild_dir: Path,
) -> None:
    """The loop makes its watcher before its first read and starts it once its first agent
    runs: an edit in between made no event, and wakes the loop when watching begins; a
    control request in between reaches `on_control` as its event would (a stop cancels the
    running agent at once). wild's own writes in between wake nothing."""
    (wild_dir / "control").write_text("")
    own = SelfWrites()
    controlled: list[str] = []
    watcher = FolderWatcher(wild_dir, Waker(), own, on_control=lambda: controlled.append("told"))
    (wild_dir / "human.md").write_text("# Human\n\n- use the small model\n")
    with (wild_dir / "control").open("a") as handle:
        handle.write('{"command": "stop"}\n')
    own.remember(wild_dir / "tasks.md", b"# Tasks\n")
    atomic_write(wild_dir / "tasks.md", b"# Tasks\n")
    with watcher:
        reasons = watcher.wait_for_work(PATIENCE_S)
    assert sorted(reasons, key=lambda r: r.kind) == [
        WakeReason("control", str(wild_dir / "control")),
        WakeReason("rescan", str(wild_dir / "human.md"), "changed"),
    ]
    assert controlled == ["told"]


def test_signal_handlers_need_the_main_thread() -> None:
    errors: list[str] = []

    def attempt() -> None:
        try:
            install_signal_handlers(Waker(), threading.Event())
        except RuntimeError as exc:
            errors.append(str(exc))

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    assert errors == ["install_signal_handlers must be called from the main thread"]


def test_watchdogs_shutdown_race_is_not_printed_but_other_messages_are(
    caplog: pytest.LogCaptureFixture,
) -> None:
    new_observer()  # wild.wake filters it from its first observer on (watchdog loads then)
    logger = logging.getLogger("watchdog.observers.inotify")
    with caplog.at_level(logging.WARNING):
        logger.error("InotifyEmitter.queue_events() called when the thread is inactive")
        logger.warning("Inotify queue overflowed; reconciling recursive watches below %r", "/x")
    assert [r.getMessage() for r in caplog.records] == [
        "Inotify queue overflowed; reconciling recursive watches below '/x'"
    ]


# A run's end as its wrapper writes it: the marker renamed into place, then its folder touched.
_MARKER = """
import os, sys
from wild.runs.wrapper import write_marker
run_dir = sys.argv[1]
os.makedirs(run_dir, exist_ok=True)
with open(os.path.join(run_dir, "log"), "a") as f:
    f.write("a log line\\n")
write_marker(os.path.join(run_dir, "exit"), '{"exit_code": 0}')
"""


def test_a_run_exit_marker_in_a_new_run_folder_wakes_with_the_run_id(wild_dir: Path) -> None:
    watcher = FolderWatcher(wild_dir, Waker(), SelfWrites(), watch_runs=True)
    with watcher:
        run_python(_MARKER, str(wild_dir / "runs" / "sw1-007"))
        reasons = watcher.wait_for_work(PATIENCE_S)
    marker = str(wild_dir / "runs" / "sw1-007" / "exit")
    assert reasons == [WakeReason("run", marker, "sw1-007")]  # the log line is no reason


_A_RUNS_WRITES = """
import os, sys
run_dir = sys.argv[1]
os.makedirs(run_dir)
for name in ("claim-1", "log"):
    with open(os.path.join(run_dir, name), "w") as f:
        f.write("x")
for _ in range(5):
    with open(os.path.join(run_dir, "log"), "a") as f:
        f.write("a log line\\n")
os.chmod(os.path.join(run_dir, "log"), 0o600)
os.remove(os.path.join(run_dir, "claim-1"))
from wild.runs.wrapper import write_marker
write_marker(os.path.join(run_dir, "exit"), '{"exit_code": 0}')
"""


def test_a_runs_writes_reach_the_watchers_thread_only_as_its_folders_touch(
    wild_dir: Path,
) -> None:
    """Only a run's end wakes the loop (its wrapper touches the run's folder once the marker
    is in place): the writes to a run's claim, log, `pid` and marker, its deletions and mode
    changes are not made Python events on the watcher's threads (CPU of the loop's, issue
    23): its folder is not watched."""
    watcher = FolderWatcher(wild_dir, Waker(), SelfWrites(), watch_runs=True)
    seen: list[str] = []
    route = watcher._on_event

    def recorded(event: FileSystemEvent) -> None:
        seen.append(type(event).__name__)
        route(event)

    watcher._on_event = recorded  # type: ignore[method-assign]  # what start hands watchdog
    with watcher:
        run_python(_A_RUNS_WRITES, str(wild_dir / "runs" / "sw1-008"))
        reasons = watcher.wait_for_work(PATIENCE_S)
    marker = str(wild_dir / "runs" / "sw1-008" / "exit")
    assert reasons == [WakeReason("run", marker, "sw1-008")]
    assert seen == ["DirAttribEvent"]


def _inotify_watches() -> int:
    """The inotify watches this process holds, all its inotify instances together."""
    count = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            text = Path("/proc/self/fdinfo", fd).read_text()
        except OSError:  # closed since the listing
            continue
        count += sum(line.startswith("inotify wd:") for line in text.splitlines())
    return count


def test_the_loops_watch_is_one_for_the_runs_folder_however_many_runs(wild_dir: Path) -> None:
    """`.wild/runs/` is one watch, its run folders none, those there at the start and those
    made while watching alike: a watch per run folder held ~0.4 KB of the loop's memory per
    run for the whole sweep (issue 23, flat with the sweep's size)."""
    runs = wild_dir / "runs"
    for number in range(40):
        (runs / f"sw1-{number:03d}").mkdir(parents=True)
    before = _inotify_watches()
    watcher = FolderWatcher(wild_dir, Waker(), SelfWrites(), watch_runs=True)
    with watcher:
        for number in range(40, 80):
            (runs / f"sw1-{number:03d}").mkdir()
        run_python(_MARKER, str(runs / "sw1-080"))  # the watcher has seen every mkdir above
        assert watcher.wait_for_work(PATIENCE_S) == [
            WakeReason("run", str(runs / "sw1-080" / "exit"), "sw1-080")
        ]
        assert _inotify_watches() - before == 2  # `.wild/` and `.wild/runs/`


def test_run_folders_are_not_watched_unless_asked(wild_dir: Path) -> None:
    (wild_dir / "runs").mkdir()
    watcher = FolderWatcher(wild_dir, Waker(), SelfWrites())
    with watcher:
        run_python(_MARKER, str(wild_dir / "runs" / "sw1-001"))
        assert watcher.wait_for_work(0.3) == [TIMEOUT]


# -- attribute changes ----------------------------------------------------------------------------


def test_chmod_of_a_file_wild_wrote_wakes_the_loop(
    wild_dir: Path, start_watcher: StartWatcher
) -> None:
    """`chmod u+w tasks.md` releases the work the loop holds for a read-only file: it changes
    no content (the file still holds what wild wrote last), yet it must wake the loop."""
    tasks = wild_dir / "tasks.md"
    data = b"- [ ] task-001: Train\n"
    watcher = start_watcher()
    watcher.self_writes.remember(tasks, data)
    atomic_write(tasks, data)
    tasks.chmod(0o444)
    assert watcher.wait_for_work(timeout=PATIENCE_S) == [file_reason(tasks)]
    subprocess.run(["chmod", "u+w", str(tasks)], check=True)  # the human, in a shell
    assert watcher.wait_for_work(timeout=PATIENCE_S) == [file_reason(tasks)]


def test_rescan_catches_a_chmod_made_while_the_observer_was_stopped(
    wild_dir: Path, start_watcher: StartWatcher
) -> None:
    tasks = wild_dir / "tasks.md"
    tasks.chmod(0o444)
    watcher = start_watcher()
    watcher.stop()
    tasks.chmod(0o644)
    assert watcher.rescan() == [WakeReason("rescan", str(tasks), "changed")]


# -- wild's own writes on the watcher's threads ----------------------------------------------------


def _recording(watcher: FolderWatcher) -> list[tuple[str, str]]:
    """The events watchdog hands the watcher (type, file name), from here on."""
    seen: list[tuple[str, str]] = []
    route = watcher._on_event

    def recorded(event: FileSystemEvent) -> None:
        for path in (event.src_path, event.dest_path):
            if path:
                seen.append((type(event).__name__, os.path.basename(os.fsdecode(path))))
        route(event)

    watcher._on_event = recorded  # type: ignore[method-assign]  # what start hands watchdog
    return seen


def test_wilds_own_writes_of_files_the_loop_ignores_reach_the_watcher_as_no_event(
    wild_dir: Path,
) -> None:
    """The crash-safe writes of `state.json` (temp file created, written, chmod'ed, renamed)
    and the appends to `events.log` are dropped where watchdog reads them from inotify, not
    made Python events and handed over its threads (issue 22 item 8: ~2.6 ms of CPU per loop
    iteration before). A fence of another process's alert then comes as the only event."""
    watcher = FolderWatcher(wild_dir, Waker(), SelfWrites())
    seen = _recording(watcher)
    with watcher:
        for number in range(3):
            atomic_write(wild_dir / "state.json", b'{"iteration": %d}\n' % number)
            with open(wild_dir / "events.log", "ab") as log:
                log.write(b'{"kind": "iteration"}\n')
        (wild_dir / "logs").mkdir()
        append_from_other_process(wild_dir / "alerts.jsonl", "{}\n")
        assert watcher.wait_for_work(PATIENCE_S) == [file_reason(wild_dir / "alerts.jsonl")]
    assert seen == [("FileModifiedEvent", "alerts.jsonl")]


def test_wilds_own_crash_safe_write_of_tasks_md_reaches_the_watcher_as_tasks_md_alone(
    wild_dir: Path,
) -> None:
    """Of wild's own write of a file the loop reads, only the rename into place goes on (as
    the file's creation): its temp file's events do not. It wakes nothing, being wild's own,
    and a human's edit right after it still wakes the loop."""
    tasks = wild_dir / "tasks.md"
    watcher = FolderWatcher(wild_dir, Waker(), SelfWrites())
    seen = _recording(watcher)
    with watcher:
        data = b"- [/] task-001\n"
        watcher.self_writes.remember(tasks, data)
        atomic_write(tasks, data)
        append_from_other_process(tasks, "- [ ] task-002 by a human\n")
        assert watcher.wait_for_work(PATIENCE_S) == [file_reason(tasks)]
    assert {name for _, name in seen} == {"tasks.md"}
    assert seen[0] == ("FileCreatedEvent", "tasks.md")


def test_a_file_the_loop_reads_renamed_away_wakes_as_that_file(
    wild_dir: Path, start_watcher: StartWatcher
) -> None:
    """`mv human.md human.md.bak`: the second half of the rename is a name the watcher drops,
    so the first goes on alone, as human.md's deletion."""
    watcher = start_watcher()
    os.replace(wild_dir / "human.md", wild_dir / "human.md.bak")
    assert watcher.wait_for_work(PATIENCE_S) == [file_reason(wild_dir / "human.md")]
    os.replace(wild_dir / "human.md.bak", wild_dir / "human.md")
    assert watcher.wait_for_work(PATIENCE_S) == [file_reason(wild_dir / "human.md")]


# -- the loop's watcher reads in batches while the loop works --------------------------------------


def test_while_the_loop_works_its_watcher_leaves_events_in_the_kernel_and_loses_none(
    wild_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop's watcher (`batch_while_busy`) reads nothing while its owner works (here: a
    batch at most every minute), so wild's own writes cost no thread wake-up then; the
    human's edit made meanwhile is not lost: `wait_for_work` reads what is pending first."""
    monkeypatch.setattr(wake, "BUSY_READ_S", 60.0)
    watcher = FolderWatcher(wild_dir, Waker(), SelfWrites(), batch_while_busy=True)
    seen = _recording(watcher)
    with watcher:
        for number in range(3):
            atomic_write(wild_dir / "state.json", b'{"iteration": %d}\n' % number)
        append_from_other_process(wild_dir / "human.md", "## 2026-11-28T18:00:00Z\nhello\n")
        assert watcher.waker.wait(0.3) == []  # the loop's own look at the waker: nothing read
        assert seen == []
        assert watcher.wait_for_work(PATIENCE_S) == [file_reason(wild_dir / "human.md")]
    assert seen == [("FileModifiedEvent", "human.md")]


def test_while_the_loop_works_a_stop_request_still_reaches_on_control(wild_dir: Path) -> None:
    """The batches while the loop works are `BUSY_READ_S` apart: a stop request written while
    an agent runs (the loop not asleep in `wait_for_work`) still cancels it."""
    told = threading.Event()
    watcher = FolderWatcher(
        wild_dir, Waker(), SelfWrites(), on_control=told.set, batch_while_busy=True
    )
    with watcher:
        append_from_other_process(wild_dir / "control", '{"command": "stop"}\n')
        assert told.wait(PATIENCE_S)
