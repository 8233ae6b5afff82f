"""Two sizes of one measurement, each in a child process of its own (so each peak RSS is its
own): the run scripts' shared frame (`script.py [N] [SLOTS]`; `--one N SLOTS` is the child)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

Figures = dict[str, float]


@dataclass(frozen=True)
class TwoSizes:
    """N/10 and N runs with the same slots: what a script compares (flat means ≤ 1.5×)."""

    slots: int
    small: Figures
    large: Figures

    @property
    def big(self) -> int:
        return int(self.large["runs"])

    @property
    def small_n(self) -> int:
        return int(self.small["runs"])


def two_sizes(
    script: str, one_size: Callable[[int, int], Figures], sizes: tuple[int, int], slots: int
) -> TwoSizes | None:
    """In the child (`--one N SLOTS`): measure, print the JSON, None. Else both sizes."""
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(one_size(int(sys.argv[2]), int(sys.argv[3]))))
        return None
    big = int(sys.argv[1]) if len(sys.argv) > 1 else sizes[1]
    chosen = int(sys.argv[2]) if len(sys.argv) > 2 else slots
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def measure(runs: int) -> Figures:
        done = subprocess.run(
            [sys.executable, script, "--one", str(runs), str(chosen)],
            capture_output=True, text=True, env=env, check=True, timeout=3600,
        )  # fmt: skip
        result: Figures = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    return TwoSizes(chosen, measure(max(1, big // 10)), measure(big))
