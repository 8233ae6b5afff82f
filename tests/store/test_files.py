"""The store: atomic replace survives kill -9, compare-and-swap keeps everyone's edits."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.fd_support import unnamed_files
from wild import procfs
from wild.errors import ConflictError
from wild.store import files, self_writes
from wild.store.files import atomic_write, read_text, temp_beside, update_text

GENERATION_LINES = 20000


def _complete(data: bytes) -> bool:
    lines = data.split(b"\n")
    return lines[-1] == b"" and len(lines) == GENERATION_LINES + 1 and len(set(lines[:-1])) == 1


def _write_forever(target: Path, ready: int) -> None:
    """The forked writer: say ready, then rewrite `target` until killed."""
    os.write(ready, b"r")
    i = 0
    while True:
        i += 1
        # Large payloads make a torn write likely if the protocol were not atomic.
        atomic_write(target, f"generation {i}\n".encode() * GENERATION_LINES)


def test_kill_9_during_atomic_writes_never_leaves_a_partial_file(tmp_path: Path) -> None:
    """A forked writer (not a fresh interpreter: each trial costs a few ms, not 200) is
    SIGKILLed at varied moments of its writes; the file is always one whole generation."""
    target = tmp_path / "state.json"
    atomic_write(target, b"generation 0\n" * GENERATION_LINES)
    corrupt = 0
    trials = 200
    for trial in range(trials):
        ready, told = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            try:
                os.close(ready)
                _write_forever(target, told)
            finally:
                os._exit(1)
        os.close(told)
        assert os.read(ready, 1) == b"r"
        os.close(ready)
        # Vary the moment of death so kills land in every phase of the protocol.
        time.sleep((trial % 10) * 0.003)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if not _complete(target.read_bytes()):
            corrupt += 1
    assert corrupt == 0


def test_atomic_write_keeps_mode_and_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("old\n")
    real.chmod(0o640)
    link = tmp_path / "link.md"
    link.symlink_to(real)
    atomic_write(link, b"new\n")
    assert link.is_symlink()
    assert real.read_bytes() == b"new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_read_text_is_lossless_for_crlf_and_bad_bytes(tmp_path: Path) -> None:
    path = tmp_path / "tasks.md"
    raw = b"- [ ] a\r\n\xff\xfe broken \xe2\x82\n"
    path.write_bytes(raw)
    lock = tmp_path / ".lock"
    update_text(path, lambda t: t + "- [ ] b\r\n", lock)
    assert path.read_bytes() == raw + b"- [ ] b\r\n"
    assert read_text(tmp_path / "missing.md") == ""


def _keyed_edit(text: str) -> str:
    """Tick task-1 wherever it is now: keyed by id, not by line number."""
    return text.replace("- [ ] task-1", "- [x] task-1")


@pytest.mark.parametrize("style", ["in-place", "rename"])
def test_cas_reapplies_edit_when_someone_saves_between_read_and_write(
    tmp_path: Path, style: str
) -> None:
    path = tmp_path / "tasks.md"
    path.write_text("- [ ] task-1 first\n")
    lock = tmp_path / ".lock"
    saved = {"done": False}

    def human_save() -> None:
        new = "# added by human\n- [ ] task-1 first\n- [ ] task-2 second\n"
        script = (
            "import os,sys;p=sys.argv[1];d=sys.argv[2];s=sys.argv[3]\n"
            "if s=='rename':\n"
            "    open(p+'.swp','w').write(d); os.replace(p+'.swp', p)\n"
            "else:\n"
            "    open(p,'w').write(d)\n"
        )
        subprocess.run([sys.executable, "-c", script, str(path), new, style], check=True)

    def edit(text: str) -> str:
        # The other process saves after our first read, before our write.
        if not saved["done"]:
            saved["done"] = True
            human_save()
        return _keyed_edit(text)

    result = update_text(path, edit, lock)
    expected = "# added by human\n- [x] task-1 first\n- [ ] task-2 second\n"
    assert result == expected
    assert path.read_text() == expected


def test_cas_gives_up_with_a_clear_error_when_the_file_never_settles(tmp_path: Path) -> None:
    path = tmp_path / "tasks.md"
    path.write_text("a\n")
    counter = {"n": 0}

    def edit(text: str) -> str:
        counter["n"] += 1
        path.write_text(f"changed {counter['n']}\n")
        return text + "x\n"

    with pytest.raises(ConflictError) as info:
        update_text(path, edit, tmp_path / ".lock")
    assert str(info.value) == (
        f"{path}: the file kept changing while wild tried to update it; "
        "close other programs writing it and run the command again"
    )


def test_concurrent_wild_writers_exclude_each_other(tmp_path: Path) -> None:
    path = tmp_path / "counter.md"
    path.write_text("")
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from wild.store.files import update_text
        p = Path(sys.argv[1]); tag = sys.argv[2]
        for i in range(40):
            update_text(p, lambda t: t + f"{tag}-{i}\\n", p.parent / ".lock")
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), f"w{n}"]) for n in range(3)]
    for proc in procs:
        assert proc.wait() == 0
    lines = path.read_text().splitlines()
    assert sorted(lines) == sorted(f"w{n}-{i}" for n in range(3) for i in range(40))
    assert os.path.exists(tmp_path / ".lock")


def test_a_save_landing_between_the_recheck_and_the_swap_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "tasks.md"
    path.write_text("- [ ] task-1 first\n")
    lock = tmp_path / ".lock"
    saves = {"n": 0}

    def save_at_the_last_instant(_data: bytes) -> None:
        # Called right before the swap: a human's rename-save lands in wild's last window.
        if saves["n"] == 0:
            saves["n"] += 1
            tmp = tmp_path / "human.swp"
            tmp.write_text("- [ ] task-1 first\n- [ ] task-2 added by the human\n")
            os.replace(tmp, path)

    result = update_text(path, _keyed_edit, lock, on_written=save_at_the_last_instant)
    expected = "- [x] task-1 first\n- [ ] task-2 added by the human\n"
    assert result == expected
    assert path.read_text() == expected
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_file_being_rewritten_in_place_is_read_only_once_settled(tmp_path: Path) -> None:
    path = tmp_path / "tasks.md"
    full = "".join(f"- [ ] task-{n} line {n}\n" for n in range(1, 200))
    path.write_text(full)
    script = textwrap.dedent(
        """
        import sys, time
        path, text = sys.argv[1], sys.argv[2]
        with open(path, "w") as handle:   # truncate, then write in chunks like a slow editor
            print("started", flush=True)
            for start in range(0, len(text), 500):
                handle.write(text[start:start + 500]); handle.flush(); time.sleep(0.004)
        """
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", script, str(path), full], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    assert writer.stdout.readline() == "started\n"
    result = update_text(path, _keyed_edit, tmp_path / ".lock")
    assert writer.wait() == 0
    writer.stdout.close()
    assert result == _keyed_edit(full)
    assert path.read_text() == result


def test_a_temp_file_beside_a_file_is_made_as_mkstemp_makes_it(tmp_path: Path) -> None:
    # What `tempfile.mkstemp(dir=..., prefix=".name.", suffix=".tmp")` made before (issue 22:
    # tempfile is not imported on the launch): a new file, its owner's alone, not inherited by
    # children, named so the cleanup of a killed write finds it.
    target = tmp_path / "state.json"
    fd, name = temp_beside(target)
    try:
        assert os.path.dirname(name) == str(tmp_path)
        assert sorted(tmp_path.glob(".state.json.*.tmp")) == [Path(name)]
        info = os.fstat(fd)
        assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
        assert info.st_size == 0 and not os.get_inheritable(fd)
        assert os.path.samestat(info, os.stat(name))
        other, other_name = temp_beside(target)
        os.close(other)
        assert other_name != name
    finally:
        os.close(fd)


def test_a_temp_name_taken_is_tried_again_with_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "tasks.md"
    taken = tmp_path / f".tasks.md.{bytes(6).hex()}.tmp"
    taken.symlink_to(tmp_path / "elsewhere")  # a link at the name: never opened through
    draws = iter([bytes(6), bytes(6), b"\x01" * 6])
    monkeypatch.setattr(os, "urandom", lambda n: next(draws))
    fd, name = temp_beside(target)
    os.close(fd)
    assert name == str(tmp_path / f".tasks.md.{'01' * 6}.tmp")
    assert not (tmp_path / "elsewhere").exists()


@pytest.fixture
def folder_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders `files.fsync_dir` fsyncs from here on, in order (it still fsyncs them)."""
    synced: list[str] = []
    real_fsync_dir = files.fsync_dir

    def noting(directory: Path) -> None:
        real_fsync_dir(directory)
        synced.append(os.fspath(directory))

    monkeypatch.setattr(files, "fsync_dir", noting)
    return synced


def test_a_swap_left_to_its_folders_next_fsync_is_owed_until_one_is_made(
    tmp_path: Path, folder_fsyncs: list[str]
) -> None:
    """`folder_synced_later`: the loop's tasks.md write just before an agent starts leaves
    the folder's fsync to state.json's write in the same folder a moment later (one folder
    fsync per iteration, not two); until an fsync of that folder is made, it is owed, and
    `sync_owed_folders` makes it (and only then)."""
    folder = tmp_path / ".wild"
    folder.mkdir()
    tasks = folder / "tasks.md"
    tasks.write_text("- [ ] [P1] task-001: A\n")
    lock = folder / ".lock"
    real_folder = os.path.realpath(folder)

    files.update_text(tasks, lambda text: text.replace("[ ]", "[x]"), lock)
    files.sync_owed_folders()  # nothing owed: nothing fsynced
    assert folder_fsyncs == [real_folder]
    folder_fsyncs.clear()
    files.update_text(
        tasks, lambda text: text.replace("[x]", "[~]"), lock, folder_synced_later=True
    )
    assert tasks.read_text() == "- [~] [P1] task-001: A\n"
    assert folder_fsyncs == []
    files.atomic_write(folder / "state.json", b"{}\n")  # its own folder fsync pays the debt
    files.sync_owed_folders()
    assert folder_fsyncs == [real_folder]
    files.update_text(
        tasks, lambda text: text.replace("[~]", "[x]"), lock, folder_synced_later=True
    )
    assert folder_fsyncs == [real_folder]
    files.sync_owed_folders()
    files.sync_owed_folders()  # paid: nothing fsynced again
    assert folder_fsyncs == [real_folder, real_folder]


def test_an_owed_folder_whose_fsync_fails_stays_owed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder_fsyncs: list[str]
) -> None:
    """A folder fsync that fails (an I/O error) pays nothing: the swap it was owed for is
    still owed, and the next `sync_owed_folders` makes it."""
    folder = tmp_path / ".wild"
    folder.mkdir()
    tasks = folder / "tasks.md"
    tasks.write_text("- [ ] [P1] task-001: A\n")
    files.update_text(
        tasks, lambda text: text.replace("[ ]", "[x]"), folder / ".lock", folder_synced_later=True
    )
    real_fsync = os.fsync

    def failing(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(OSError, match="Input/output"):
        files.sync_owed_folders()
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert folder_fsyncs == []
    files.sync_owed_folders()
    files.sync_owed_folders()
    assert folder_fsyncs == [os.path.realpath(folder)]


def _temp_files(folder: Path) -> dict[str, bytes]:
    """The temp files in `folder` by the name they are beside (`.state.json`), and bytes."""
    return {path.name.rsplit(".", 2)[0]: path.read_bytes() for path in folder.glob(".*.tmp")}


def test_a_swap_before_a_go_leaves_the_old_file_for_remove_displaced(tmp_path: Path) -> None:
    """`displaced_later` (state.json's write while an agent waits at its gate) and
    `folder_synced_later` (the tasks.md write before it): the file holds the new bytes at
    once, and the old version stays at the temp file's name until `remove_displaced`, which
    the loop calls once the agent runs (freeing a file is ~90 µs of a swap on ext4)."""
    folder = tmp_path / ".wild"
    folder.mkdir()
    state, tasks = folder / "state.json", folder / "tasks.md"
    state.write_bytes(b'{"old": 1}\n')
    tasks.write_text("- [ ] [P1] task-001: A\n")
    files.atomic_write(state, b'{"new": 2}\n', displaced_later=True)
    files.update_text(
        tasks, lambda text: text.replace("[ ]", "[x]"), folder / ".lock", folder_synced_later=True
    )
    assert state.read_bytes() == b'{"new": 2}\n'
    assert tasks.read_text() == "- [x] [P1] task-001: A\n"
    assert _temp_files(folder) == {
        ".state.json": b'{"old": 1}\n',
        ".tasks.md": b"- [ ] [P1] task-001: A\n",
    }
    files.remove_displaced()
    assert sorted(path.name for path in folder.iterdir()) == [".lock", "state.json", "tasks.md"]
    files.sync_owed_folders()


def test_a_first_write_or_one_not_before_a_go_displaces_nothing(tmp_path: Path) -> None:
    """A file written the first time has nothing to displace; a write without the flag
    removes the old version itself (every write but the loop's before a go)."""
    state = tmp_path / "state.json"
    files.atomic_write(state, b"{}\n", displaced_later=True)
    files.atomic_write(state, b'{"a": 1}\n')
    assert sorted(path.name for path in tmp_path.iterdir()) == ["state.json"]
    assert state.read_bytes() == b'{"a": 1}\n'


def test_a_displaced_file_that_cannot_be_removed_stays_and_fails_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An old version that cannot be removed (a folder made read-only meanwhile) is left
    beside the file, never read: removing it is no reason to fail the agent's start. The
    next loop's start removes it (`recovery.take_over`)."""
    state = tmp_path / "state.json"
    state.write_bytes(b"{}\n")
    files.atomic_write(state, b'{"a": 1}\n', displaced_later=True)

    def refused(path: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "unlink", refused)
    files.remove_displaced()
    monkeypatch.undo()
    files.remove_displaced()  # tried once: left for the next loop's start
    assert _temp_files(tmp_path) == {".state.json": b"{}\n"}


def test_a_swap_names_an_unnamed_file_the_folder_holds_instead_of_creating_one(
    tmp_path: Path,
) -> None:
    """`make_spares`: unnamed files (O_TMPFILE) made ahead in a folder, each taken by its next
    swap, which names it (~60 µs of a file's creation off the swap's way). The result is what
    a created temp file gives: the bytes, the old file's mode, no name left behind."""
    state = tmp_path / "state.json"
    state.write_bytes(b"{}\n")
    state.chmod(0o640)
    files.make_spares(tmp_path, 2)
    files.make_spares(tmp_path, 2)  # held already: none more
    inodes = set(unnamed_files(tmp_path).values())
    assert len(inodes) == 2
    files.atomic_write(state, b'{"a": 1}\n')

    def add_task(text: str) -> str:
        return text + "- [ ] [P1] task-001: A\n"

    files.update_text(tmp_path / "tasks.md", add_task, tmp_path / ".lock")
    assert unnamed_files(tmp_path) == {}
    assert {os.stat(state).st_ino, os.stat(tmp_path / "tasks.md").st_ino} == inodes
    assert state.read_bytes() == b'{"a": 1}\n'
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "state.json", "tasks.md"]
    files.atomic_write(state, b"{}\n")  # none held: a file created, as before
    assert state.read_bytes() == b"{}\n"


def test_a_spare_that_cannot_be_named_there_is_closed_and_a_file_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A held file that cannot be linked into the folder (another filesystem mounted there
    since, no /proc) costs the swap nothing: it is closed and the temp file created."""
    state = tmp_path / "state.json"
    files.make_spares(tmp_path, 1)
    assert len(unnamed_files(tmp_path)) == 1

    def cross_device(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    files.atomic_write(state, b"{}\n")
    assert state.read_bytes() == b"{}\n" and unnamed_files(tmp_path) == {}  # closed


def test_dropped_spares_are_closed(tmp_path: Path) -> None:
    files.make_spares(tmp_path, 2)
    assert len(unnamed_files(tmp_path)) == 2
    files.drop_spares()
    assert unnamed_files(tmp_path) == {}


def test_read_bytes_reads_a_file_whole_however_its_size_was_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tasks.md"
    assert files.read_bytes(path) == b""  # not there yet
    path.write_bytes(b"x" * 70_000 + b"\n")
    assert files.read_bytes(path) == b"x" * 70_000 + b"\n"
    path.write_bytes(b"")
    assert files.read_bytes(path) == b""
    # Grown since its size was asked (a size told short, as a /proc file's 0 is): read on.
    real_fstat = os.fstat
    path.write_bytes(b"y" * 100_000)
    monkeypatch.setattr(os, "fstat", lambda fd: os.stat_result((0,) * 6 + (10,) + (0,) * 3))
    assert files.read_bytes(path) == b"y" * 100_000
    monkeypatch.setattr(os, "fstat", real_fstat)
    with pytest.raises(IsADirectoryError) as raised:
        files.read_bytes(tmp_path)
    assert raised.value.filename == str(tmp_path)  # the file is named, as open() named it


def test_read_bytes_reads_a_fifo_to_its_end(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(
        [sys.executable, "-c", f"import time; f = open({str(fifo)!r}, 'wb'); "
         "f.write(b'a' * 5); f.flush(); time.sleep(0.2); f.write(b'b' * 5); f.close()"]
    )  # fmt: skip
    try:
        assert files.read_bytes(fifo) == b"aaaaabbbbb"  # two writes apart: read to the end
    finally:
        writer.wait(timeout=30)


def test_a_temp_file_gets_all_its_bytes_when_a_write_takes_a_few(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data[:3])))
    path = tmp_path / "state.json"
    atomic_write(path, b"0123456789" * 10)
    assert path.read_bytes() == b"0123456789" * 10


def test_a_swap_resolves_its_files_real_path_once_per_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The target's real path, once resolved, keys what wild remembers of its own write and
    # its read of what the swap displaced: not asked of the kernel again (issue 22 item 8).
    path, lock = tmp_path / "tasks.md", tmp_path / ".lock"
    path.write_text("- [ ] [P1] task-001: A\n")
    os.utime(path, ns=(0, 0))  # settled: read once (a fresh file is looked at until it is)
    asked: list[str] = []

    def counting(found: str | os.PathLike[str]) -> str:
        asked.append(os.fspath(found))
        return procfs.real_path(found)

    monkeypatch.setattr(files, "real_path", counting)
    monkeypatch.setattr(self_writes, "real_path", counting)
    update_text(path, lambda text: text.replace("[ ]", "[x]"), lock)
    assert len(asked) == 2  # the settled read's own-write check, and the temp file's target
    asked.clear()
    atomic_write(tmp_path / "state.json", b"{}")
    assert len(asked) == 1


def test_read_bytes_reads_on_past_what_one_read_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Linux gives at most ONE_READ bytes a read (2 GiB less a page): a larger file's first
    # read is short before its end, and must not be taken for the whole file.
    path = tmp_path / "tasks.md"
    path.write_bytes(bytes(range(256)) * 20)
    real_read = os.read
    monkeypatch.setattr(files, "ONE_READ", 1000)
    monkeypatch.setattr(os, "read", lambda fd, n: real_read(fd, min(n, 1000)))
    assert files.read_bytes(path) == bytes(range(256)) * 20
