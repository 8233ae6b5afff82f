"""Alerts only a human can resolve (`wild.parsers.alert_types.HUMAN_ONLY`): selection never
gives them to the agent; this tells the human of each one once, on the terminal and through
the Notify Command, while other work goes on. Pure."""

from __future__ import annotations

from wild.clock import iso
from wild.loop.model import Action, LoopModel, Moment, Notify, Say
from wild.parsers.alert_types import human_only

# The bookkeeping reason an alert was told under (kept in state.json: once across restarts).
TOLD = "only the human can resolve it"


def announce(model: LoopModel, at: Moment) -> tuple[LoopModel, tuple[Action, ...]]:
    """One Say and one Notify for each open human-only alert not told of before; what was
    told of alerts the human has since resolved is forgotten (state.json stays small)."""
    book, actions = model.book, list[Action]()
    told = f":{TOLD}"
    open_ids = {alert.id for alert in model.ws.open_alerts}
    for key in [k for k in book.notified if k.endswith(told)]:
        if key[: -len(told)] not in open_ids:
            book = book.alert_closed(key[: -len(told)])
    for alert in model.ws.open_alerts:
        if not human_only(alert.type) or book.was_told(alert.id, TOLD):
            continue
        book = book.told(alert.id, TOLD, iso(at.now))
        message = f"[{alert.severity}] {alert.description}"
        actions.append(Say(f"✋ Waiting for you ({alert.id}, {alert.type}): {alert.description}"))
        actions.append(Notify(alert.id, f"{TOLD}: {message}", cause=None))
    return (model if book is model.book else model.with_book(book)), tuple(actions)
