"""A run supervisor in a process of its own, for the SIGKILL tests: `python runs_local_child.py
WILD_DIR SLOTS` steps until no run is queued or running, printing after every step that
started something."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tests.runs.helpers import local, supervisor
from wild.paths import WildPaths


def main() -> None:
    paths = WildPaths(Path(sys.argv[1]))
    backend = local(paths, slots=int(sys.argv[2]))
    sup = supervisor(paths, backend)
    while sup.busy():
        result = sup.step()
        if result.started:
            print(f"started {len(result.started)}", flush=True)
        time.sleep(0.02)  # a stand-in for the loop's wait on marker events


if __name__ == "__main__":
    main()
