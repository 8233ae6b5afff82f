"""The loop's state as state.json keeps it (`loopState`: its state machine state and since
when), read leniently; what the states mean is `wild.loop.states`."""

from __future__ import annotations

from collections.abc import Mapping

from wild.record import record as frozen_record

RECORD_KEY = "loopState"


@frozen_record
class Recorded:
    """The state a loop recorded and since when (an ISO time, or None)."""

    state: str
    since: str | None


def recorded(extra: Mapping[str, object]) -> Recorded | None:
    """Read leniently: a hand-edited or foreign value is no record."""
    raw = extra.get(RECORD_KEY)
    if not isinstance(raw, Mapping):
        return None
    name, since = raw.get("state"), raw.get("since")
    if not isinstance(name, str) or not name:
        return None
    return Recorded(name, since if isinstance(since, str) else None)


def record(state: str, since: str) -> dict[str, str]:
    """The `loopState` value for `state`, entered at `since`."""
    return {"state": state, "since": since}
