"""The signal tags an agent's final message may hold, and `inert`, which defuses them in the
text wild shows an agent (the human's words quoted in a prompt, a user's prompt template).

Apart from their reader (wild.agents.signals), which the loop needs once an agent ended: a
prompt needs only `inert`, so the reader's records and patterns are not on the way to the
first agent's start (issue 22 item 8).
"""

from __future__ import annotations

import re

# Every tag the parser reads; `inert` defuses all of them, so quoted text can never signal.
SIGNAL_TAG_NAMES = ("promise", "resolve_alert", "event_output", "sweep", "reason", "urgency")
# A `<` that opens or closes one of them (spaces allowed, to be safe), or a trailing `<` that
# text placed right after it could complete.
_TAG_OPENING = re.compile(rf"<(?=\s*/?\s*(?:{'|'.join(SIGNAL_TAG_NAMES)})\b)|<\Z", re.IGNORECASE)


def inert(text: str) -> str:
    """`text` with each `<` that could begin a signal tag written `&lt;`: an agent still reads
    `&lt;promise>` as the tag it names, and no copy of it, whole or cut, is a signal."""
    return _TAG_OPENING.sub("&lt;", text)
