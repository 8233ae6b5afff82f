"""A wrapper started ahead of its run and parked, so the next run's start does not wait for a
Python interpreter (issue 23 item 7: the accelerator idles while one starts).

The local backend starts the queue head's wrapper (`wrapper.py --go-fd 0 …`, its stdin the
read end of a pipe whose only write end the loop holds) while the slot is still busy. The
wrapper loads what it needs and blocks reading that pipe. When the run is admitted and its
claim is durable, `go` writes the run's `pid` file (so an adoption finds the wrapper from the
moment it may start) and then the one byte that starts it. Otherwise the pipe is closed
(`discard`), or the loop dies and the kernel closes it: the wrapper reads end of file and
exits having started and written nothing. A parked wrapper therefore never outlives its loop
and never runs a run that was not claimed for it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from wild.process import spawn
from wild.runs import markers

GO = b"g"  # wild/runs/wrapper.py's GO (the wrapper imports nothing of wild)


@dataclass(frozen=True)
class Parked:
    """One parked wrapper: the run it was started for, exactly as it would start it."""

    run_id: str
    attempt: int
    argv: tuple[str, ...]  # the wrapper's command line without `--go-fd`
    env: tuple[tuple[str, str], ...]
    proc: subprocess.Popen[bytes]
    go_fd: int  # the pipe's write end, the loop's only

    def fits(self, argv: Sequence[str], env: Mapping[str, str]) -> bool:
        """Whether this wrapper starts exactly what a fresh one would."""
        return self.argv == tuple(argv) and self.env == tuple(sorted(env.items()))


def with_go_fd(argv: Sequence[str], fd: int) -> list[str]:
    """`argv` (a wrapper's command line) with `--go-fd FD` before its `--`."""
    cut = list(argv).index("--")
    return [*argv[:cut], "--go-fd", str(fd), *argv[cut:]]


def park(
    run_id: str, attempt: int, argv: Sequence[str], env: Mapping[str, str], log: int
) -> Parked:
    """Start the wrapper of `argv` parked, its output to the descriptor `log`."""
    read_fd, write_fd = os.pipe()  # close-on-exec both: only the wrapper gets the read end
    try:
        proc = spawn(with_go_fd(argv, 0), env=env, stdin=read_fd, stdout=log)
    except BaseException:
        os.close(write_fd)
        raise
    finally:
        os.close(read_fd)
    return Parked(run_id, attempt, tuple(argv), tuple(sorted(env.items())), proc, write_fd)


def go(parked: Parked, run_dir: Path) -> bool:
    """Start the parked wrapper's run (its claim must be durable already): its `pid` file,
    then the byte. False when the wrapper is gone before it read it (it started nothing)."""
    markers.write_pid(run_dir, parked.proc.pid)
    try:
        os.write(parked.go_fd, GO)
    except BrokenPipeError:
        return False
    finally:
        os.close(parked.go_fd)
    return True


def discard(parked: Parked) -> None:
    """End the parked wrapper without a run: end of file on its pipe (it exits by itself;
    the caller reaps it)."""
    with contextlib.suppress(OSError):
        os.close(parked.go_fd)
