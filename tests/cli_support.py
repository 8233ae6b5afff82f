"""Driving the CLI in-process, shared by the CLI tests."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from click.testing import CliRunner, Result

from wild.cli import cli


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def init_wild_dir(tmp_path: Path) -> Path:
    """`wild --init` in `tmp_path/.wild`, checked; the folder."""
    root = tmp_path / ".wild"
    result = invoke("--init", "--dir", str(root))
    assert result.exit_code == 0, result.output
    return root


@dataclass(frozen=True)
class FixedClock:
    """A clock stopped at `at` (monotonic time stands still too)."""

    at: datetime

    def now(self) -> datetime:
        return self.at

    def monotonic(self) -> float:
        return 0.0
