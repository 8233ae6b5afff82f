"""`python -m wild.agents.orphan_watch LOOP_ID`: it waits for the end of its stdin, then kills
every process of the loop's agent runs.

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


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0]:
        sys.stderr.write("usage: python -m wild.agents.orphan_watch LOOP_ID\n")
        return 2
    while os.read(0, 4096):
        pass  # the loop writes nothing; any bytes are ignored until the end of the pipe
    sweep(argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
