"""Reading what a run left in its folder: the wrapper's exit marker, its pid, its log tail
(its metrics: wild.metrics).

Every read is tolerant: a garbled marker is a problem reported, never a
crash, and a missing one is simply absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from wild.record import record

EXIT = "exit"
PID = "pid"
LOG = "log"
METRICS_LINES = "metrics.jsonl"  # wild's own metric files, moved aside with an attempt
METRICS_FILE = "metrics.json"
_MARKER_CAP = 64 * 1024  # a marker is a few hundred bytes; anything bigger is not one


@record
class ExitMarker:
    """The wrapper's `exit` file (format: wild.runs.backend)."""

    run: str
    attempt: int
    exit_code: int | None
    signal: str | None = None
    ended_at: str | None = None
    host: str | None = None
    reason: str | None = None
    detail: str | None = None


@record
class MarkerRead:
    """A marker, or the problem that kept it from being read; both None: there is none."""

    marker: ExitMarker | None = None
    problem: str | None = None

    @property
    def present(self) -> bool:
        return self.marker is not None or self.problem is not None

    def ends(self, attempt: int) -> bool:
        """Whether this read ends `attempt`: its marker, or one that cannot be read (the
        supervisor reports what is wrong with it); a previous attempt's left behind does not."""
        return self.problem is not None or (
            self.marker is not None and self.marker.attempt == attempt
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_marker(data: bytes, path: str) -> MarkerRead:
    """The marker in `data`; a problem naming `path` when it is not one."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return MarkerRead(problem=f"{path}: not valid JSON (torn or garbled exit marker)")
    if not isinstance(obj, dict) or not isinstance(obj.get("run"), str):
        return MarkerRead(problem=f'{path}: not an exit marker (no "run" field)')
    attempt = _int(obj.get("attempt"))
    return MarkerRead(
        ExitMarker(
            run=obj["run"],
            attempt=attempt if attempt is not None and attempt >= 1 else 1,
            exit_code=_int(obj.get("exit_code")),
            signal=_text(obj.get("signal")),
            ended_at=_text(obj.get("ended_at")),
            host=_text(obj.get("host")),
            reason=_text(obj.get("reason")),
            detail=_text(obj.get("detail")),
        )
    )


def read_marker(run_dir: Path) -> MarkerRead:
    """The run's exit marker; `MarkerRead()` when there is none yet."""
    path = run_dir / EXIT
    try:
        with path.open("rb") as source:
            data = source.read(_MARKER_CAP + 1)
    except FileNotFoundError:
        return MarkerRead()
    except OSError as error:
        return MarkerRead(problem=f"{path}: cannot be read ({error.strerror or error})")
    if len(data) > _MARKER_CAP:
        return MarkerRead(problem=f"{path}: over {_MARKER_CAP} bytes, not an exit marker")
    return parse_marker(data, str(path))


def write_pid(run_dir: Path, pid: int) -> None:
    """DIR/pid as the wrapper writes it (wild/runs/wrapper.py `write_whole`: a temp file
    renamed into place, not fsynced: it only finds a live wrapper)."""
    temp = run_dir / f"{PID}.tmp.{os.getpid()}"
    # O_EXCL | O_NOFOLLOW: never through a link planted at the temp name (as the wrapper).
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o644)
    try:
        os.write(fd, f"{pid}\n".encode())
    finally:
        os.close(fd)
    os.replace(temp, run_dir / PID)


def read_pid(run_dir: Path) -> int | None:
    """The pid the wrapper wrote, or None (no file yet, or not a number)."""
    try:
        text = (run_dir / PID).read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and int(text) > 0 else None


def _tail(path: Path, size: int) -> bytes:
    with path.open("rb") as source:
        end = source.seek(0, os.SEEK_END)
        source.seek(max(0, end - size))
        return source.read(size)


def log_tail(run_dir: Path, size: int = 2000) -> str:
    """The last `size` bytes of the run's log as text (for an alert's context); "" if none."""
    try:
        return _tail(run_dir / LOG, size).decode("utf-8", errors="replace")
    except OSError:
        return ""
