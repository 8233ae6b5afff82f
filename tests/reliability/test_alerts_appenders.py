"""Many appenders at once (some lines over 64 KiB, some writers killed mid-line, shell appends
too) while the loop reads: every complete alert is read exactly once, none lost, none invented.

The soak is the same scenario scaled up: `python -m tests.reliability.alerts_appenders`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.reliability.alerts_appenders import duplicates, run
from wild.parsers.alerts import INCOMPLETE

# What a dead writer's fragment may be reported as: alone on its line once wild sealed it, or
# with the next writer's line glued onto it, or still the file's unfinished last line.
FRAGMENT_PROBLEMS = ("not valid JSON, skipped", "a writer's unfinished line, skipped", INCOMPLETE)


@pytest.mark.slow
def test_every_complete_alert_is_read_exactly_once(tmp_path: Path) -> None:
    outcome = run(tmp_path)
    assert len(outcome.written) == len(set(outcome.written)) > 400
    assert duplicates(outcome.incremental) == []
    assert Counter(outcome.incremental) == Counter(outcome.written)
    assert outcome.incremental == outcome.whole  # in file order, as one full read gives them
    assert outcome.loop == outcome.whole
    assert sorted(outcome.summary) == sorted(outcome.whole)
    assert outcome.resets == 0
    assert outcome.reads > 1
    unexpected = [p for p in outcome.problems if not p.message.startswith(FRAGMENT_PROBLEMS)]
    assert unexpected == []
    glued = [p for p in outcome.problems if p.message.startswith(FRAGMENT_PROBLEMS[1])]
    assert glued  # alerts glued onto fragments were among those read
