"""Completion checks: running `.wild/checks.md` (`run`) and judging what their results mean
for the end of the loop (`verdict`, pure)."""
