"""What completion checks' outcomes mean: whether the strategy holds (whether the loop may
end is wild.loop.ending's); pure decisions, no I/O."""

from __future__ import annotations

from collections.abc import Sequence

from wild.parsers.checks import CheckStatus, Strategy
from wild.record import record

# How much of a failing check's output a prompt or `--run-checks` shows: its end says why.
TAIL_CHARS = 2000


@record
class CheckOutcome:
    """One check's run: passed, failed, or not run (unapproved, cancelled, misconfigured)."""

    id: str
    passed: bool
    ran: bool
    summary: str  # one line, for the check's `Result:`
    tail: str = ""  # the end of its output, for the next prompt
    unapproved: bool = False  # not run: a human must approve its command first

    @property
    def status(self) -> CheckStatus:
        """The header word written back: a check that could not run stays PENDING."""
        if not self.ran:
            return "pending"
        return "passing" if self.passed else "failing"


@record
class Verdict:
    """The checks taken together under the file's strategy."""

    holds: bool
    failing: tuple[CheckOutcome, ...]  # every check that did not pass (run or not)
    outcomes: tuple[CheckOutcome, ...]


def judge(strategy: Strategy, outcomes: Sequence[CheckOutcome]) -> Verdict:
    """`all`: every check passes; `any`: at least one does. No checks at all: it holds."""
    failing = tuple(o for o in outcomes if not o.passed)
    if not outcomes:
        holds = True
    elif strategy == "all":
        holds = not failing
    else:
        holds = len(failing) < len(outcomes)
    return Verdict(holds, failing, tuple(outcomes))


def tail(text: str, limit: int = TAIL_CHARS) -> str:
    """The last `limit` characters of `text`, marked when cut."""
    text = text.rstrip()
    return text if len(text) <= limit else "…" + text[-limit:]
