"""How a resolved alert was answered: its `resolution` is `{"choice", "note"}` or, from an
older writer, the bare choice. Read by `wild --wait-alert` and by the loop acting on runs."""

from __future__ import annotations

from collections.abc import Mapping

from wild.parsers.alerts import Alert
from wild.record import record


@record
class Answer:
    """How a resolved alert was answered: the chosen option, a note, or neither."""

    choice: str | None
    note: str | None

    def text(self) -> str:
        return self.choice or self.note or ""


def answer_of(alert: Alert) -> Answer | None:
    """The answer recorded on a resolved alert; None while it is still open."""
    if alert.status != "resolved":
        return None
    resolution = alert.raw.get("resolution")
    if isinstance(resolution, Mapping):
        choice, note = resolution.get("choice"), resolution.get("note")
        return Answer(
            choice if isinstance(choice, str) else None, note if isinstance(note, str) else None
        )
    return Answer(resolution if isinstance(resolution, str) else None, None)
