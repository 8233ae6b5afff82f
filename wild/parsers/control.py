"""`.wild/control`'s lines (`wild --pause | --resume | --stop`, reruns, stopped runs) and what
the requests so far ask of the loop: data and a pure fold, no I/O (the file is read and
appended to by wild/control.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, cast, get_args

from wild.parsers.jsonl import loads
from wild.record import record, replace

# `recheck`: something the loop cannot watch changed (a human approved a command in the store
# outside .wild/), so results judged before it are stale.
# `rerun` and `stop-run` name a run (`target`): the loop owns the runs, so it acts on them.
ControlCommand = Literal["pause", "resume", "stop", "recheck", "rerun", "stop-run"]
COMMANDS: tuple[ControlCommand, ...] = get_args(ControlCommand)


@record
class ControlRequest:
    """One line of the control file."""

    command: ControlCommand
    ts: str | None
    target: str | None = None


def parse_request(line: bytes) -> ControlRequest | None:
    """One line of the control file as a request; None for a line that is not one."""
    try:
        record = loads(line)
    except ValueError:
        return None
    # Checked against COMMANDS before the cast below.
    if not isinstance(record, dict) or record.get("command") not in COMMANDS:
        return None
    ts, target = record.get("ts"), record.get("target")
    command = cast(ControlCommand, record["command"])
    return ControlRequest(
        command, ts if isinstance(ts, str) else None, target if isinstance(target, str) else None
    )


@record
class ControlState:
    """What the requests so far ask of the loop: stop is final, pause and resume toggle."""

    paused: bool = False
    stop_requested: bool = False

    def apply(self, requests: Iterable[ControlRequest]) -> ControlState:
        state = self
        for item in requests:
            if item.command == "pause":
                state = replace(state, paused=True)
            elif item.command == "resume":
                state = replace(state, paused=False)
            elif item.command == "stop":
                state = replace(state, stop_requested=True)
        return state
