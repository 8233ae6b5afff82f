"""A negative `totalCostUsd` in state.json is a problem `--status` names, not a silent credit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli_support import init_wild_dir


def test_a_negative_cost_total_is_reported_with_its_line(tmp_path: Path) -> None:
    root = init_wild_dir(tmp_path)
    (root / "state.json").write_text('{\n  "format": 1,\n  "totalCostUsd": -48.0\n}\n')
    shown = subprocess.run(
        [sys.executable, "-m", "wild", "--status", "--dir", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert (
        "state.json:3: totalCostUsd is negative (-48.0), and a total never goes down; used 0.0"
    ) in shown
