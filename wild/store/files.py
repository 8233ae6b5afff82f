"""Crash-safe reads and writes of `.wild/` files, shared with editors and agents that take no lock.

Writers inside wild exclude each other with a FileLock on `.wild/.lock`. Everyone else is met
with compare-and-swap: an edit is a pure function of the text, keyed by record id, so when the
file changed between our read and our write we simply re-apply it to the new text.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from wild import libc
from wild.errors import ConflictError, with_filename
from wild.procfs import real_path
from wild.store.self_writes import Resolved, SelfWrites
from wild.store.write_guard import check_writable, open_own_file

ENCODING = "utf-8"
# Bytes that are not UTF-8 survive a read/write round trip as lone surrogates.
ERRORS = "surrogateescape"
LOCK_TIMEOUT_S = 30.0
CAS_ATTEMPTS = 20
# A file changed less than this long ago may still be being written in place by someone.
SETTLE_S = 0.02
MAX_SETTLE_S = 2.0
# An empty or missing file changed less than this long ago may be an editor's save under way.
ABSENT_SETTLE_S = 0.5
# What this process wrote last to each file: such a file is complete, and is read at once.
_OWN = SelfWrites()

# renameat2(2) with RENAME_EXCHANGE swaps two names atomically (Linux ≥ 3.15, glibc ≥ 2.28).
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@functools.cache
def _renameat2() -> libc.CFunction | None:
    """libc's renameat2, or None; looked up on the first swap (`wild.libc`: `_ctypes` costs a
    read command, which swaps nothing, ~0.5 ms to load)."""
    return libc.function("renameat2")


def decode(data: bytes) -> str:
    return data.decode(ENCODING, ERRORS)


def encode(text: str) -> bytes:
    return text.encode(ENCODING, ERRORS)


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or b"" when it does not exist yet. Four system calls (open, fstat,
    read, close) where a buffered file's open adds five (fstat, an ioctl, lseeks); the loop
    reads a file back at every swap (issue 22 item 8)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return b""
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size + 1)  # a byte more than its size: a short read is its end
        if len(data) <= size < ONE_READ:
            return data
        # Grown since the fstat, no size (a pipe, a /proc file), or past what one read takes.
        chunks = [data]
        while chunk := os.read(fd, max(_MIN_READ, min(size, ONE_READ))):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as error:  # a folder where the file belongs: EISDIR at the read
        raise with_filename(error, path) from None
    finally:
        os.close(fd)


def read_text(path: Path) -> str:
    """Lossless text of a state file ("" when missing); CRLF and bad bytes are kept."""
    return decode(read_bytes(path))


_MIN_READ = 64 * 1024  # past the size fstat gave: the file may have grown since
# The most one read returns on Linux (2 GiB less a page): a read of a larger file is short
# before its end.
ONE_READ = 0x7FFFF000


def pread_all(fd: int, start: int, end: int | None = None) -> bytes:
    """Bytes from `start` to `end` (or to EOF), in chunks: pread caps one call near 2 GiB."""
    chunks: list[bytes] = []
    pos = start
    while end is None or pos < end:
        # Ask for what is there: pread allocates the whole request up front, so asking for
        # 1 GiB to read a 1 KiB file takes 1 GiB of address space (MemoryError under a limit).
        stop = os.fstat(fd).st_size if end is None else end
        want = min(max(stop - pos, _MIN_READ), 1 << 30)
        chunk = os.pread(fd, want, pos)
        if not chunk:
            break
        chunks.append(chunk)
        pos += len(chunk)
    return b"".join(chunks)


def _stamp(info: os.stat_result) -> tuple[int, int, int]:
    return (info.st_ino, info.st_size, info.st_mtime_ns)


Signature = tuple[int, int, int, int]  # inode, size, mtime_ns, mode


def stat_signature(path: str | os.PathLike[str]) -> Signature | None:
    """The file's inode, size, modification time and mode, None if it cannot be stat'ed:
    readers that keep a parse (or a watcher's view) take a file with the same signature as
    unchanged. The mode is in it because a `chmod u+w` changes nothing else, and the loop
    holding work for a read-only file must see it (the safety rescan included)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (*_stamp(info), info.st_mode)


def _stamp_of(path: Path) -> tuple[int, int, int] | None:
    try:
        return _stamp(os.stat(path))
    except FileNotFoundError:
        return None


def read_settled(
    fd: int, start: int = 0, *, usable: Callable[[bytes], bool] | None = None
) -> bytes:
    """The open file's bytes from `start` to EOF, once nobody has written it for SETTLE_S.

    A program that rewrites a file in place (truncate, then write) leaves it empty or half
    written for a moment, and one appending a line may write it in two parts; reading then
    would make wild edit, or worse write back, a torn copy. Bytes that `usable` accepts
    (what wild itself wrote last; a run of whole lines) are taken at once. After MAX_SETTLE_S
    the bytes are taken as they are.
    """
    deadline = time.monotonic() + MAX_SETTLE_S
    while True:
        before = _stamp(os.fstat(fd))
        age_s = (time.time_ns() - before[2]) / 1e9
        # A timestamp far in the future (a touched file, clock skew) says nothing about writers.
        quiet = age_s >= SETTLE_S or age_s < -1.0
        if quiet or usable is not None or time.monotonic() >= deadline:
            data = pread_all(fd, start)
            if usable is not None and usable(data):
                return data
            if time.monotonic() >= deadline or (quiet and _stamp(os.fstat(fd)) == before):
                return data
            if quiet:
                continue  # written while we read: look again
        time.sleep(min(SETTLE_S - age_s, SETTLE_S, max(deadline - time.monotonic(), 0.0)))


def _read_settled(path: Path, own: Path | None = None) -> bytes:
    """`read_settled` of the whole file at `path`; b"" when it is missing or empty, and has
    been for ABSENT_SETTLE_S (or MAX_SETTLE_S went by). An editor saving by rename (vim moves
    the file aside, then creates it anew) leaves no file for an instant, and one writing in
    place leaves it empty between its truncate and its write, on a busy machine for longer
    than SETTLE_S: neither is an empty file to edit and write back. `own`: the name wild
    writes the file under, when `path` is another name for it (what wild swapped out): its
    real path, as `_write_temp` resolved it."""
    key: Path | Resolved = path if own is None else Resolved(own)  # `own`: a real path
    deadline = time.monotonic() + MAX_SETTLE_S
    while True:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            data = b""
            changed = _mtime_ns(path.parent)  # a rename-save changes the folder
        else:
            try:
                data = read_settled(fd, usable=lambda data: _OWN.holds(key, data))
                changed = os.fstat(fd).st_mtime_ns
            except OSError as error:  # a folder where the file belongs: name it
                raise with_filename(error, path) from None
            finally:
                os.close(fd)
        absent_s = (time.time_ns() - changed) / 1e9
        # A timestamp far in the future (a touched file, clock skew) says nothing either.
        if data or absent_s >= ABSENT_SETTLE_S or absent_s < -1.0:
            return data
        left = deadline - time.monotonic()
        if left <= 0:
            return data
        time.sleep(min(SETTLE_S / 4, left))


def _mtime_ns(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0  # long ago


# Folders a swap left to be fsynced by the next fsync of the same folder (`update_text`'s
# `folder_synced_later`): the loop's tasks.md write just before an agent starts, whose folder
# state.json's write fsyncs a moment later, before the agent's program runs (one folder
# fsync, not two, per iteration; issue 22 item 8). `sync_owed_folders` pays what is left.
_owed_folders: set[str] = set()
# Guards what swaps leave for later: the folders owed an fsync, the files displaced, the
# unnamed files held for the next swaps (below).
_later_lock = threading.Lock()


def fsync_dir(directory: Path) -> None:
    """Flush the folder's entries (a file created or renamed in it) to the disk; a swap owed
    to the folder is paid by it, or owed still if it fails."""
    key = os.fspath(directory)
    with _later_lock:  # before the fsync: a rename owed after this is owed again
        owed = key in _owed_folders
        _owed_folders.discard(key)
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        if owed:
            with _later_lock:
                _owed_folders.add(key)
        raise


def sync_owed_folders() -> None:
    """Fsync every folder a swap left owed (`fsync_dir` of it pays it too); a failure leaves
    the folder owed and is raised."""
    with _later_lock:
        owed = sorted(_owed_folders)
    for folder in owed:
        fsync_dir(Path(folder))


# Files a swap displaced (the old version, now at the temp file's name), left for
# `remove_displaced`: freeing a file's blocks is ~90 µs of the swap on ext4, and the loop's
# swaps before an agent's go (state.json's record, the held tasks.md edit) remove theirs once
# the agent runs (issue 22 item 8). One that a kill leaves is removed as the next loop starts
# (`wild.loop.recovery.take_over`).
_displaced: list[Path] = []


def remove_displaced() -> None:
    """Remove the files that swaps left displaced (`update_text`'s `folder_synced_later`,
    `atomic_write`'s `displaced_later`). One that cannot be removed (a folder made read-only
    meanwhile) stays where it is: an old version beside the file, never read, and no reason
    to fail what the loop does next; the next loop's start tries again."""
    with _later_lock:
        displaced = list(_displaced)
        _displaced.clear()
    for path in displaced:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _displace(tmp: Path) -> None:
    with _later_lock:
        _displaced.append(tmp)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMP_TRIES = 100  # as tempfile's TMP_MAX: a name taken is tried again with another


# Unnamed files made ahead in a folder (O_TMPFILE: no name anyone can open, gone when closed),
# each taken by the next swap there (`temp_beside`): creating a file is ~60 µs of a swap on
# ext4, and the loop's two swaps at an agent's gate take files made while the agent before ran
# (`make_spares`; issue 22 item 8). Keyed by the folder's real path, as `_write_temp` names it.
_spares: dict[str, list[int]] = {}


def make_spares(folder: Path, count: int) -> None:
    """Hold `count` unnamed files in `folder` (its real path) for its next swaps, where the
    filesystem makes them (O_TMPFILE); elsewhere the swaps create their temp files."""
    key = real_path(folder)
    with _later_lock:
        missing = count - len(_spares.get(key, ()))
    made: list[int] = []
    unnamed = getattr(os, "O_TMPFILE", 0)  # Linux's
    try:
        for _ in range(missing if unnamed else 0):
            made.append(os.open(key, unnamed | os.O_RDWR | os.O_CLOEXEC, 0o600))
    except OSError:
        pass  # no O_TMPFILE here (or no room): what was made is used, the rest is created
    with _later_lock:
        _spares.setdefault(key, []).extend(made)


def drop_spares() -> None:
    """Close the unnamed files held for swaps (the kernel frees them)."""
    with _later_lock:
        held = [fd for fds in _spares.values() for fd in fds]
        _spares.clear()
    for fd in held:
        os.close(fd)


def _take_spare(folder: str) -> int | None:
    with _later_lock:
        fds = _spares.get(folder)
        return fds.pop() if fds else None


def _named(spare: int, name: str) -> int | None:
    """`spare` linked at `name` (created exclusively, as O_EXCL would: FileExistsError when
    the name is taken); None, the spare closed, where it cannot be (another filesystem
    mounted there since, no /proc): the caller creates its file as before."""
    try:
        # linkat(AT_SYMLINK_FOLLOW) of /proc/self/fd/N: the way to name an O_TMPFILE without
        # CAP_DAC_READ_SEARCH (os.link takes linkat's path, following, only with a dir fd).
        os.link(f"/proc/self/fd/{spare}", name, src_dir_fd=spare, follow_symlinks=True)
    except FileExistsError:
        raise
    except OSError:
        os.close(spare)
        return None
    return spare


def temp_beside(path: Path) -> tuple[int, str]:
    """A new file `.<name>.<random>.tmp` in `path`'s folder, open for reading and writing, made
    by this call alone: created exclusively, never through a link, readable by its owner only
    (what `tempfile.mkstemp(dir=…, prefix=f".{name}.", suffix=".tmp")` makes, and its names
    match the same patterns). Not `tempfile` itself: importing it (with `shutil` and
    `random`) was ~2.7 ms of every command's start and of the loop's launch (issue 22). An
    unnamed file the folder holds (`make_spares`) is named instead of a file created."""
    folder = os.fspath(path.parent)
    spare = _take_spare(folder)
    for _ in range(_TEMP_TRIES):
        name = os.path.join(folder, f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            if spare is not None:
                named = _named(spare, name)
                if named is not None:
                    return named, name
                spare = None
            return os.open(name, _TEMP_FLAGS, 0o600), name
        except FileExistsError:
            continue
    if spare is not None:
        os.close(spare)
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path.parent))


def _write_temp(
    path: Path, data: bytes | bytearray, parts: Iterable[bytes] | None = None
) -> tuple[Path, Path]:
    """Write and fsync `data` beside `path`'s real target; returns (target, temp file).

    Same folder because os.replace cannot cross filesystems; symlinks are followed so a
    user's link stays a link; the old file mode is kept (`temp_beside` makes 0600). A file the
    user made read-only, or a link leading out of the project, is refused (`write_guard`).
    """
    check_writable(path)
    target = Path(real_path(path))
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_current_umask()
    try:
        fd, tmp_name = temp_beside(target)
    except OSError as error:  # a read-only folder: name the file, not the random temp name
        raise OSError(error.errno, error.strerror, str(target)) from None
    try:
        try:
            if parts is None:  # one buffer: written as it is (no buffered file's own calls)
                _write_all(fd, data)
            else:  # many parts, maybe small: gathered by a buffered file
                with os.fdopen(os.dup(fd), "wb") as handle:
                    handle.write(data)
                    for part in parts:
                        handle.write(part)
            os.fsync(fd)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
    except BaseException as error:
        _discard(Path(tmp_name))
        if isinstance(error, OSError):  # a full disk on write: name the file it was for
            raise with_filename(error, target) from None
        raise
    return target, Path(tmp_name)


def _write_all(fd: int, data: bytes | bytearray) -> None:
    """All of `data` at the file's offset (a write may take less than it is given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _discard(tmp: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)


def _commit(target: Path, tmp: Path, *, displaced_later: bool = False) -> None:
    """Rename the fsynced temp file over the target, then fsync the folder for the rename.
    `displaced_later`: the two are exchanged instead, where they can be, and the old file,
    now at the temp name, is left for `remove_displaced`."""
    try:
        if displaced_later and _renameat2() is not None and _swap(tmp, target) == 0:
            _displace(tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        _discard(tmp)
        raise
    fsync_dir(target.parent)


def atomic_write(path: Path, data: bytes | bytearray, *, displaced_later: bool = False) -> None:
    """Replace `path` so that a kill -9 at any instant leaves the old or the new bytes.

    The data is durable before the rename (else the new name may point at an empty file
    after a power loss), and the rename is made durable by fsyncing the folder.
    `displaced_later`: the old file is removed by `remove_displaced`, not here.
    """
    target, tmp = _write_temp(path, data)
    _commit(target, tmp, displaced_later=displaced_later)
    _OWN.remember(Resolved(target), data)


def atomic_write_parts(path: Path, parts: Iterable[bytes]) -> None:
    """`atomic_write` of the bytes `parts` make together, written as they come (a compacted
    runs.jsonl of a 10,000-run sweep, never held whole)."""
    import hashlib  # noqa: PLC0415  (see self_writes.content_hash: not on a read's path)

    size, digest = 0, hashlib.sha256()

    def counted() -> Iterator[bytes]:
        nonlocal size
        for part in parts:
            size += len(part)
            digest.update(part)
            yield part

    target, tmp = _write_temp(path, b"", counted())
    _commit(target, tmp)
    _OWN.remember_digest(Resolved(target), size, digest.hexdigest())


def write_cache(path: Path, data: bytes, *more: bytes) -> None:
    """Replace a cache file (derived from other files, never trusted over them) whole,
    without fsyncs: a kill leaves the old or the new bytes; a power loss may leave it empty
    or old, which its reader takes as no cache (it reads the files again). Megabytes
    rewritten on every command would otherwise wait for the disk each time. `more`: parts
    written after `data` (a header and megabytes behind it, not joined into one copy)."""
    fd, tmp_name = temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            for part in more:
                handle.write(part)
        os.replace(tmp_name, path)
    except BaseException:
        _discard(Path(tmp_name))
        raise


LOCK_POLL_S = 0.05


@contextlib.contextmanager
def wild_lock(lock_path: Path, timeout: float | None = None) -> Iterator[None]:
    """Exclude wild's other writers (the loop, the CLI, the checker thread).

    Waits `timeout` seconds (default LOCK_TIMEOUT_S, read at call time), then raises
    filelock.Timeout, which the CLI reports as "locked by another wild process" and the loop
    waits out. The lock is an exclusive flock on the file, as filelock takes it (so both
    exclude each other), but the file is opened without following a link planted at its
    name (`open_own_file`): filelock opens with O_TRUNC, which emptied the file a link named.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = open_own_file(lock_path, os.O_RDWR | os.O_CREAT, 0o666, own_folder=False)
    deadline = time.monotonic() + (LOCK_TIMEOUT_S if timeout is None else timeout)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    # Imported here: filelock costs ~17 ms, and commands that only read never lock.
                    from filelock import Timeout  # noqa: PLC0415

                    raise Timeout(str(lock_path)) from None
                time.sleep(LOCK_POLL_S)
        yield
    finally:
        os.close(fd)  # drops the flock


class _SavedMeanwhile(Exception):
    """Someone saved between wild's re-check and its swap; their file is back in place."""


def _swap(a: Path, b: Path) -> int:
    """renameat2(a, b, RENAME_EXCHANGE): 0 when done (-1 where it does not exist)."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return -1
    return int(renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE))


def _exchange(
    tmp: Path,
    target: Path,
    *,
    must_exist: bool,
    checked: tuple[int, int, int] | None = None,
    folder_synced_later: bool = False,
) -> bytes | None:
    """Atomically swap `tmp` and `target` (Linux renameat2 RENAME_EXCHANGE).

    Returns the bytes that were at `target` just before the swap (now gone from it), or None
    when the swap is not possible here, in which case a plain replace was done instead.
    Raises FileNotFoundError (`tmp` discarded) when `must_exist` and the target is gone: an
    editor saving by rename is about to create it, and would then write into our file.
    `checked`: the target's stamp when wild re-checked its content. If what the swap took
    out is not that file any more, someone saved in between: their file is swapped back at
    once (raising _SavedMeanwhile), before anyone can read ours, which lacks their change.
    """
    if _renameat2() is not None:
        result = _swap(tmp, target)
        if result != 0 and must_exist and libc.errno() == errno.ENOENT:
            _discard(tmp)
            raise FileNotFoundError(errno.ENOENT, "vanished before the swap", str(target))
        moved = result == 0 and checked is not None and _stamp(os.stat(tmp)) != checked
        if moved and _swap(tmp, target) == 0:
            _discard(tmp)
            raise _SavedMeanwhile
        if result == 0:
            # An in-place writer may still be finishing into the inode we swapped out,
            # unless that inode is still exactly what we wrote last time.
            displaced = _read_settled(tmp, own=target)
            if folder_synced_later:
                _displace(tmp)  # removed once the agent runs, as the folder's fsync is paid
                with _later_lock:
                    _owed_folders.add(os.fspath(target.parent))
            else:
                _discard(tmp)
                fsync_dir(target.parent)
            return displaced
    _commit(target, tmp)
    return None


def update_text(
    path: Path,
    edit: Callable[[str], str],
    lock_path: Path,
    *,
    on_written: Callable[[bytes], None] | None = None,
    folder_synced_later: bool = False,
) -> str:
    """Apply `edit` to the file's text and write it back without losing anyone's change.

    The edit must be keyed by record id (not line number), so re-running it on a newer text
    is correct. Returns the text now on disk. `on_written` gets the bytes about to be written
    (just before the swap), so the watcher can ignore our own write by hash.
    `folder_synced_later`: the swap is left for the next fsync of its folder (`fsync_dir`,
    `sync_owed_folders`), which the caller makes before anything relies on it being on disk,
    and the file it displaced is left for `remove_displaced`.

    Humans and agents take no lock, so: read only a settled file; re-check it after the slow
    write-and-fsync of the temp file; then swap atomically, and if someone saved in the
    instant between the re-check and the swap, re-apply the edit on top of what they saved.
    """
    with wild_lock(lock_path):
        expected = _read_settled(path)  # what should be on disk now
        source = expected  # the text our edit applies to
        for _ in range(CAS_ATTEMPTS):
            new_text = edit(decode(source))
            new_bytes = encode(new_text)
            if new_bytes == expected:
                if _read_settled(path) == expected:
                    return new_text
                expected = source = _read_settled(path)
                continue
            target, tmp = _write_temp(path, new_bytes)
            checked = _stamp_of(path)  # before the read: a save after it changes the stamp
            if read_bytes(path) != expected:
                _discard(tmp)
                expected = source = _read_settled(path)
                continue
            # Announce before swapping: the watcher may see the change before we return.
            if on_written is not None:
                on_written(new_bytes)
            try:
                displaced = _exchange(
                    tmp,
                    target,
                    must_exist=bool(expected),
                    checked=checked,
                    folder_synced_later=folder_synced_later,
                )
            except (FileNotFoundError, _SavedMeanwhile):
                expected = source = _read_settled(path)
                continue
            _OWN.remember(Resolved(target), new_bytes)
            if displaced is None or displaced == expected:
                return new_text
            # A save slipped in between the re-check and the swap: keep it, redo our edit on it.
            expected, source = new_bytes, displaced
    raise ConflictError(
        f"{path}: the file kept changing while wild tried to update it; "
        "close other programs writing it and run the command again"
    )
