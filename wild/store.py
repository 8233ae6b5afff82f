"""Crash-safe reads and writes of `.wild/` files, shared with editors and agents that take no lock.

Writers inside wild exclude each other with a FileLock on `.wild/.lock`. Everyone else is met
with compare-and-swap: an edit is a pure function of the text, keyed by record id, so when the
file changed between our read and our write we simply re-apply it to the new text.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import FileLock

from wild.errors import ConflictError

ENCODING = "utf-8"
# Bytes that are not UTF-8 survive a read/write round trip as lone surrogates.
ERRORS = "surrogateescape"
LOCK_TIMEOUT_S = 30.0
CAS_ATTEMPTS = 20


def decode(data: bytes) -> str:
    return data.decode(ENCODING, ERRORS)


def encode(text: str) -> bytes:
    return text.encode(ENCODING, ERRORS)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or b"" when it does not exist yet."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def read_text(path: Path) -> str:
    """Lossless text of a state file ("" when missing); CRLF and bad bytes are kept."""
    return decode(read_bytes(path))


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_temp(path: Path, data: bytes) -> tuple[Path, Path]:
    """Write and fsync `data` beside `path`'s real target; returns (target, temp file).

    Same folder because os.replace cannot cross filesystems; symlinks are followed so a
    user's link stays a link; the old file mode is kept (mkstemp makes 0600).
    """
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_current_umask()
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), mode)
    except BaseException:
        _discard(Path(tmp_name))
        raise
    return target, Path(tmp_name)


def _discard(tmp: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)


def _commit(target: Path, tmp: Path) -> None:
    """Rename the fsynced temp file over the target, then fsync the folder for the rename."""
    try:
        os.replace(tmp, target)
    except BaseException:
        _discard(tmp)
        raise
    _fsync_dir(target.parent)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` so that a kill -9 at any instant leaves the old or the new bytes.

    The data is durable before the rename (else the new name may point at an empty file
    after a power loss), and the rename is made durable by fsyncing the folder.
    """
    target, tmp = _write_temp(path, data)
    _commit(target, tmp)


@contextlib.contextmanager
def wild_lock(lock_path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Exclude wild's other writers (the loop, the CLI, the checker thread)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_path), timeout=timeout):
        yield


def update_text(
    path: Path,
    edit: Callable[[str], str],
    lock_path: Path,
    *,
    on_written: Callable[[bytes], None] | None = None,
) -> str:
    """Apply `edit` to the file's text and write it back without losing anyone's change.

    The edit must be keyed by record id (not line number), so re-running it on a newer text
    is correct. Returns the text now on disk. `on_written` gets the bytes about to be written
    (just before the replace), so the watcher can ignore our own write by hash.
    """
    with wild_lock(lock_path):
        for _ in range(CAS_ATTEMPTS):
            before = read_bytes(path)
            new_text = edit(decode(before))
            new_bytes = encode(new_text)
            if new_bytes == before:
                return new_text
            target, tmp = _write_temp(path, new_bytes)
            # Last-instant re-check, after the slow write and fsync, right before the rename:
            # an editor's save can only be lost in the microseconds between the two.
            if read_bytes(path) != before:
                _discard(tmp)
                continue
            # Announce before replacing: the watcher may see the rename before we return.
            if on_written is not None:
                on_written(new_bytes)
            _commit(target, tmp)
            return new_text
    raise ConflictError(
        f"{path}: the file kept changing while wild tried to update it; "
        "close other programs writing it and run the command again"
    )
