"""The shared output helpers: counting words."""

from __future__ import annotations

from wild.output import plural


def test_plural_says_1_iteration_and_2_iterations() -> None:
    """Issue 24 item 13: `(1 iterations)`, `(1 sweeps)`, `reached 1 iterations`."""
    assert plural(1, "iteration") == "1 iteration"
    assert plural(0, "iteration") == "0 iterations"
    assert plural(2, "sweep") == "2 sweeps"
    assert plural(1, "entry", "entries") == "1 entry"
    assert plural(3, "entry", "entries") == "3 entries"
