"""`python -m wild.agents.orphan_watch LOOP_ID [PID:TICKS...]`: it waits for the end of its
stdin, then kills every process of the loop's agent runs: those that carry the loop's run id,
and the processes the loop found in its agents' trees (PID:TICKS, with their sessions and
descendants), which may have cleared that variable.

The loop's parent-death signal reaches its agent only; a `setsid` grandchild whose agent died
with the loop would be reparented to init and run on until the next loop starts. The loop's
watcher (a shell: `wild.agents.orphans.guarded`) learns of the loop's death from its stdin,
the read end of a pipe whose write end only the loop holds: the kernel closes it when the loop
dies, and the read returns. No polling. Then the shell becomes this program, to sweep.
"""

from __future__ import annotations

import os
import sys

from wild.agents.orphans import sweep
from wild.agents.watch_pipe import tree_members


def _member(token: str) -> tuple[int, int] | None:
    pid, _, ticks = token.partition(":")
    return (int(pid), int(ticks)) if pid.isdigit() and ticks.isdigit() else None


def main(argv: list[str]) -> int:
    if not argv or not argv[0]:
        sys.stderr.write("usage: python -m wild.agents.orphan_watch LOOP_ID [PID:TICKS...]\n")
        return 2
    while os.read(0, 4096):
        pass  # any bytes are ignored until the end of the pipe
    known = frozenset(m for m in map(_member, argv[1:]) if m is not None)
    sweep(argv[0], members=lambda: tree_members(known))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
