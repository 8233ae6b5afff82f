"""Telling the human, as `decide` batches it (pure): each question, note and progress report a
step asks for becomes the text the human is sent, and the Context Switch Penalty decides when
(`wild.policy.notify.NoteBatch`, kept in the model): a question goes out at once with what is
queued, a note or a report at most once per penalty. A step's `FlushNotes` sends what is due
(all of it when the loop ends). The sends are `SendNotes` actions, right after what asked for
them, and a `Wait` ends when the queued notes are due. The same note twice is sent once.
"""

from __future__ import annotations

from wild.clock import iso
from wild.loop.model import (
    Action,
    Ask,
    FlushNotes,
    LoopModel,
    Moment,
    Notify,
    Report,
    SendNotes,
    Wait,
)
from wild.record import replace


def ask_message(model: LoopModel, ask: Ask) -> str:
    message = f"wild needs you ({ask.related}): {ask.title}"
    if ask.body.strip():
        message += f"\n{ask.body.strip()}"
    return message + f'\nAnswer with: wild --human-input "..." (or edit {model.ws.paths.human})'


def batched(
    model: LoopModel, actions: tuple[Action, ...], at: Moment, penalty: int
) -> tuple[LoopModel, tuple[Action, ...]]:
    """The step's actions with the sends they lead to (`penalty`: the Context Switch Penalty
    in minutes); the batch and the notes sent kept."""
    batch, notified = model.notes, model.notified
    out: list[Action] = []
    for action in actions:
        message: str | None = None
        ready: tuple[str, ...] = ()
        kept: Action | None = action
        if isinstance(action, Ask):
            message = ask_message(model, action)
        elif isinstance(action, Notify):
            repeated = action.message in notified
            notified |= {action.message}
            kept = replace(action, repeated=repeated)
            message = None if repeated else f"wild ({action.related}): {action.message}"
        elif isinstance(action, Report):
            message = f"Progress report {iso(at.now)}\n{action.summary}"
        elif isinstance(action, FlushNotes):  # decided here: it reaches no driver
            kept = None
            flushed = batch.flush_all() if action.everything else batch.flush_due(at.now, penalty)
            batch, ready = flushed
        if kept is not None:
            out.append(kept)
        if message is not None:
            blocking = isinstance(action, Ask)
            batch, ready = batch.offer(message, at.now, blocking=blocking, penalty_minutes=penalty)
        if ready:
            out.append(SendNotes(ready))
    due = batch.next_due(penalty)
    last = out[-1] if out else None
    if due is not None and isinstance(last, Wait):
        until_due = max(0.0, (due - at.now).total_seconds())
        timeout = until_due if last.timeout_s is None else min(last.timeout_s, until_due)
        out[-1] = Wait(timeout)
    if batch is model.notes and notified is model.notified:  # most steps send nothing
        return model, tuple(out)
    return replace(model, notes=batch, notified=notified), tuple(out)
