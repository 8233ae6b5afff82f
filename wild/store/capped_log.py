"""A log that keeps its head and its tail: the one writer of an agent's iteration log and of a
research run's attempt log, so a flooding process cannot fill the disk.

A process that prints without end (a loop printing `yes`, a training script gone wrong) wrote
12 GB in 15 s. Its output now goes through a pipe to `pump`, which hands it to `CappedLog`:
the first half of the limit stays as written, then only the newest part is kept, and one
fixed-width line where the middle was says how many bytes were cut. The file never grows past
the limit by more than one pipe read (plus wild's own lines). The limit is
`WILD_MAX_LOG_BYTES` (default 100 MB per log: per iteration, per run attempt).

Standard library only: the run wrapper (`wild/runs/wrapper.py`, which imports nothing of
wild) loads this file by its path.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import select
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import threading

MAX_BYTES_ENV = "WILD_MAX_LOG_BYTES"
DEFAULT_MAX_BYTES = 100 * 1000 * 1000
MIN_MAX_BYTES = 64 * 1024  # below this a cut would leave no useful tail
READ_CHUNK = 64 * 1024
# Reads per `Pump.take`: 1 MB, then the caller's poll looks at its other events.
TAKE_CHUNKS = 16
COPY_CHUNK = 1024 * 1024
_NOTICE = (
    "\n[wild] {cut:>15} bytes of output were cut here: the log keeps its first and last"
    " bytes ({limit} at most; {env})\n"
)


def max_bytes(environ: Mapping[str, str] | None = None) -> int:
    """The limit `WILD_MAX_LOG_BYTES` sets (whole bytes, at least MIN_MAX_BYTES); the default
    when it is unset or not a number."""
    raw = (os.environ if environ is None else environ).get(MAX_BYTES_ENV, "").strip()
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        return DEFAULT_MAX_BYTES
    return max(value, MIN_MAX_BYTES)


def notice(cut: int, limit: int) -> bytes:
    """The line that stands where output was cut (always the same length for one limit)."""
    return _NOTICE.format(cut=cut, limit=limit, env=MAX_BYTES_ENV).encode()


class CappedLog:
    """Writes at the end of `fd` (open for reading and writing, without O_APPEND: this object
    places every byte), keeping at most `limit` bytes of what it is given after what the
    file already held. Thread-safe. `release` closes `fd` once every user has released it."""

    def __init__(self, fd: int, limit: int, *, users: int = 1) -> None:
        self.fd = fd
        self.limit = limit
        # `_thread`'s lock, not `threading`'s (the same lock): the runs' launcher loads this
        # module before it forks each run's wrapper, and a process that imported `threading`
        # runs its after-fork handler in every child: ~115 more copied pages and ~0.4 ms of
        # CPU per launched wrapper here (issue 23). Only a run that needs a pump imports it.
        self._lock = _thread.allocate_lock()
        self.start = self.end = os.fstat(fd).st_size
        self._head_end = self.start + limit // 2
        self._tail_keep = limit // 4
        self._tail_start: int | None = None  # after the notice, once something was cut
        self.received = 0  # bytes of output given to `write` (wild's own lines not counted)
        self.cut = 0
        self._users = users

    def write(self, data: bytes, *, own: bool = False) -> None:
        """Append `data`; `own`: a line of wild's, not counted as output."""
        with self._lock:
            if not own:
                self.received += len(data)
            self._put(data)
            if self.end - self.start > self.limit:
                self._cut()

    def ends_line(self) -> bool:
        """Whether the log's last byte ends a line (or nothing was written after `start`)."""
        with self._lock:
            return self.end <= self.start or os.pread(self.fd, 1, self.end - 1) == b"\n"

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            done = self._users == 0
        if done:
            os.close(self.fd)

    def _put(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.pwrite(self.fd, view, self.end)
            self.end += written
            view = view[written:]

    def _cut(self) -> None:
        """Drop the middle: the head stays, the newest `_tail_keep` bytes move up behind the
        notice, and the file is truncated after them."""
        if self._tail_start is None:  # the first cut: the notice goes in after the head
            self._tail_start = self._head_end + len(notice(0, self.limit))
            removed_from = self._head_end
        else:
            removed_from = self._tail_start
        source = self.end - self._tail_keep
        target = self._tail_start
        self.cut += source - removed_from
        # Forward, chunk by chunk: the source lies after the target, so nothing is overwritten
        # before it is copied.
        while source < self.end:
            chunk = os.pread(self.fd, min(COPY_CHUNK, self.end - source), source)
            if not chunk:
                break
            os.pwrite(self.fd, chunk, target)
            source += len(chunk)
            target += len(chunk)
        os.pwrite(self.fd, notice(self.cut, self.limit), self._head_end)
        os.ftruncate(self.fd, target)
        self.end = target


class Pump:
    """Copies a pipe's bytes into a CappedLog until every writer has closed the pipe (a job an
    agent left in the background keeps writing after the agent ended; its output is still
    capped). `drain` returns once all that was written to the pipe before the call is in the
    log.

    On a thread of its own from the start, or `inline`: the caller's thread copies what the
    pipe holds whenever it is readable (`take`, from a poll the caller makes anyway: the agent
    runner's wait for its agent, `wild.process.wait_or_cancel`), and `drain` starts the thread
    only if a writer is left then. An agent that leaves nothing behind starts no thread: a
    thread's start, its wake-ups at each write and its hand-back at the end were ~0.25 ms of
    CPU per iteration on the loop's side, on a 2-CPU machine beside the agent's own start
    (issue 22 item 8)."""

    def __init__(self, read_fd: int, log: CappedLog, *, inline: bool = False) -> None:
        self._fd = read_fd
        self._log = log
        os.set_blocking(read_fd, False)
        self._ended = False
        self._threaded: _Threaded | None = None
        if not inline:
            self.in_background()

    def fileno(self) -> int:
        """The pipe's read end, for the caller's poll (`inline`)."""
        return self._fd

    def take(self) -> bool:
        """Inline: copy what the pipe holds now (at most TAKE_CHUNKS reads, so that a flood
        leaves the caller's poll its turn); False once the copying is over: every writer is
        gone, or the log could not be written (the pipe is closed then: its writers get EPIPE,
        not a hang)."""
        return self._copy(TAKE_CHUNKS) != "ended"

    def finish(self) -> None:
        """Inline: copy what the pipe holds now, then close it and let the log go, a writer
        left or not (the caller knows none is: the run wrapper's run over at once)."""
        if self._copy(None) != "ended":
            self._end()

    def in_background(self) -> None:
        """Copy on a thread of its own from now on (the `inline` caller no longer polls)."""
        if self._ended or self._threaded is not None:
            return
        import threading  # noqa: PLC0415 (only a pumped run pays it: see CappedLog)

        threaded = self._threaded = _Threaded(threading.Condition(), *os.pipe())
        thread = threading.Thread(target=self._run, args=(threaded,), name="wild-log-pump")
        thread.daemon = True
        thread.start()

    def drain(self) -> None:
        threaded = self._threaded
        if threaded is None:  # inline: copied here; a writer left, the thread goes on
            if not self._ended and self._copy(None) == "empty":
                self.in_background()
            return
        with threaded.cond:
            if self._ended:
                return
            threaded.asked += 1
            asked = threaded.asked
            with contextlib.suppress(OSError):  # under the lock: the pump closes it under it
                os.write(threaded.wake_w, b"\0")
            while threaded.served < asked and not self._ended:
                threaded.cond.wait()

    def _copy(self, chunks: int | None) -> Literal["more", "empty", "ended"]:
        """Copy up to `chunks` reads (None: until the pipe is empty): "more" where it may
        hold more, "empty", or "ended" (the pipe closed and the log let go)."""
        if self._ended:
            return "ended"
        try:
            while chunks is None or chunks > 0:
                chunk = os.read(self._fd, READ_CHUNK)
                if not chunk:
                    break
                self._log.write(chunk)
                chunks = None if chunks is None else chunks - 1
            else:
                return "more"
        except BlockingIOError:
            return "empty"
        except OSError:
            pass  # the disk is full or the log is gone: as at end of file
        self._end()
        return "ended"

    def _end(self) -> None:
        """Inline: the copying is over: the pipe closed (its writers get EPIPE), the log let go."""
        self._ended = True
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._log.release()

    def _run(self, threaded: _Threaded) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        poller.register(threaded.wake_r, select.POLLIN)
        os.set_blocking(threaded.wake_r, False)
        try:
            while True:
                with threaded.cond:
                    asked = threaded.asked
                # Until the pipe is empty; "ended": every writer gone, or the log failed (the
                # writers get EPIPE, not a hang).
                if self._copy(None) == "ended":
                    return
                with threaded.cond:  # empty now: what was asked for is in the log
                    threaded.served = asked
                    threaded.cond.notify_all()
                poller.poll()
                with contextlib.suppress(BlockingIOError):
                    os.read(threaded.wake_r, 4096)
        finally:
            with threaded.cond:
                ended_here = not self._ended  # not by `_copy`: an error it did not expect
                self._ended = True
                threaded.cond.notify_all()
                for fd in (threaded.wake_r, threaded.wake_w):
                    with contextlib.suppress(OSError):
                        os.close(fd)
            if ended_here:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._log.release()


class _Threaded:
    """A pump thread's hand-shake with `drain`: asked and served counts under `cond`, and the
    pipe that wakes the thread's poll."""

    def __init__(self, cond: threading.Condition, wake_r: int, wake_w: int) -> None:
        self.cond = cond
        self.wake_r = wake_r
        self.wake_w = wake_w
        self.asked = 0
        self.served = 0
