"""What state.json says that `wild --status` shows, as plain facts (`status_view` judges them).

Apart from `wild.commands.status`: while a loop runs it rewrites state.json often, and a
status that finds only state.json changed reads it alone, with no other parser.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from wild.clock import iso
from wild.commands.status_view import Data
from wild.parsers.loop_state import recorded
from wild.parsers.process_id import process_json
from wild.parsers.state import LoadedState, work_json
from wild.paths import WildPaths
from wild.store.state_file import load_state


def _last_written(path: os.PathLike[str]) -> datetime | None:
    """When the loop last wrote state.json (only the loop writes it after `--init`)."""
    try:
        return datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
    except OSError:
        return None


def state_facts(loaded: LoadedState, last_written: datetime | None) -> Data:
    """What state.json says that the status shows, as plain data (`status_view` judges it)."""
    state = loaded.state
    found = recorded(state.extra)
    return {
        "active": state.active,
        "iteration": state.iteration,
        "paused": state.paused,
        "prompt": state.prompt,
        "startedAt": state.started_at,
        "costUsd": state.total_cost_usd,
        "tokens": state.total_tokens,
        "loopProcess": process_json(state.loop_process),
        "agentProcess": process_json(state.agent_process),
        "work": work_json(state.current_work),
        "recorded": None if found is None else {"state": found.state, "since": found.since},
        "lastWritten": None if last_written is None else iso(last_written),
        "problems": [str(p) for p in loaded.problems],
    }


def read_facts(paths: WildPaths) -> Data:
    """state.json's facts, read now."""
    return state_facts(load_state(paths.state), _last_written(paths.state))
