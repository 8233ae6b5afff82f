"""`<sweep>…</sweep>` in an agent's final message: each block validated into a `SweepSpec`,
or the exact errors the agent's next prompt repeats. Pure; never raises.

Tags are found as the other signals are (wild.agents.signals): a tag in a code block, a
comment, a code span or a quote is a mention, not a sweep, and is reported so an agent that
fenced its answer learns why nothing started.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from wild.agents.signals import line_number, tag_bodies, visible_text
from wild.parsers.sweeps import SweepSpec, parse_sweep
from wild.record import record

_OPEN = re.compile(r"<sweep>", re.IGNORECASE)
_CLOSE = re.compile(r"</sweep>", re.IGNORECASE)


@record
class SweepTags:
    """What the reply's `<sweep>` tags held: the valid specs and the errors, in reply order."""

    specs: tuple[SweepSpec, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return bool(self.specs or self.errors)


def sweeps_in_reply(final_text: str) -> SweepTags:
    """The sweeps an agent's reply asks for, each validated (targets are checked later). A
    reply that names no `<sweep>` nor `</sweep>` in any case (most replies) asks for none
    and is not read again (its visible text is ~0.05 ms of each iteration; issue 22 item 8):
    case-folded, as the tags' case-blind patterns match (`ſ` is an `s` to both)."""
    folded = final_text.casefold()
    if "<sweep>" not in folded and "</sweep>" not in folded:
        return SweepTags()
    return _read(final_text)


def _read(final_text: str) -> SweepTags:
    visible = visible_text(final_text)
    errors: list[str] = []
    for match in _OPEN.finditer(final_text):
        if visible[match.start()] != "<":
            errors.append(
                f"line {line_number(final_text, match.start())}: a <sweep> inside a code block, "
                "comment, inline code or quote is not a sweep; write the tag on its own lines"
            )
    bodies = tag_bodies("sweep", final_text)
    opened = len(_OPEN.findall(visible))
    if opened > len(bodies) or len(_CLOSE.findall(visible)) > len(bodies):
        errors.append("a <sweep> is not closed by </sweep> (or a </sweep> has no <sweep>)")
    specs: list[SweepSpec] = []
    for line, body in bodies:
        parsed = parse_sweep(body)
        if isinstance(parsed, SweepSpec):
            specs.append(parsed)
        else:
            errors.extend(f"line {line}: <sweep>: {error}" for error in parsed)
    return SweepTags(tuple(specs), tuple(errors))


def refusal_text(errors: Sequence[str]) -> str:
    """For the agent's next prompt: why its sweep launched nothing, and what to do."""
    listed = "\n".join(f"- {error}" for error in errors)
    return (
        "A <sweep> in your last reply was refused; nothing of it was launched. Fix these and "
        f"send the whole <sweep> again:\n{listed}"
    )
