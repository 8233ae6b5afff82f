"""How one agent run went: the record the runner returns and the loop's decisions judge.

A record only, apart from the runner (wild/agents/runner.py) that spawns the process, so the
loop's pure core (wild/loop/model.py, decide.py, judge.py…) can hold it without importing
processes, threads or files.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from wild.record import record

if TYPE_CHECKING:
    from pathlib import Path

    # A type only: the signals' reader is needed once an agent ended (issue 22 item 8).
    from wild.agents.signals import Signals


@record
class AgentRun:
    """How one run went. `exit_code` is the raw return code (negative: killed by that signal).

    `signals` are read even from a run that timed out, was cancelled or crashed: the caller
    decides whether they count (`wild.loop.claims`: only a clean exit's do).
    """

    exit_code: int
    timed_out: bool
    cancelled: bool
    duration_s: float
    final_text: str
    signals: Signals
    cost_usd: float | None
    input_tokens: int | None
    output_tokens: int | None
    rate_limited: bool
    rate_limit_reset: datetime | None
    log_path: Path
    output_bytes: int
    is_error: bool = False  # the agent itself reported failure (stream-json `is_error`)
    problems: tuple[str, ...] = ()
    start_error: str | None = None  # why the program could not be started (then exit 127)

    @property
    def failed(self) -> bool:
        return self.exit_code != 0 or self.timed_out or self.cancelled or self.is_error
