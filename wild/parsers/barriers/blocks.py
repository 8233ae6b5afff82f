"""barriers.md in the shared block shape (`wild.parsers.blocks`): its dialect and field names."""

from __future__ import annotations

from wild.parsers import blocks
from wild.parsers.barriers.records import FILE
from wild.parsers.blocks import HEADER, Block, FieldLine
from wild.parsers.lines import Problem

# The camelCase aliases are the seed's interface names, which agents tend to copy.
DIALECT = blocks.Dialect(
    file=FILE,
    noun="barrier",
    example="## [WAITING] barrier-id",
    canon={
        "type": "Type",
        "check": "Check",
        "command": "Check",
        "checkcommand": "Check",
        "updatecommand": "Check",
        "expect": "Expect",
        "interval": "Interval",
        "checkinterval": "Interval",
        "file": "File",
        "waitforfile": "File",
        "target": "Target",
        "timeout": "Timeout",
        "created": "Created",
        "createdat": "Created",
        "lastcheck": "Last check",
        "result": "Result",
        "lastcheckresult": "Result",
        "satisfied": "Satisfied",
        "satisfiedat": "Satisfied",
        "blocks": "Blocks",
    },
)

__all__ = ["DIALECT", "HEADER", "Block", "FieldLine", "scan"]


def scan(lines: list[str]) -> tuple[list[Block], list[Problem]]:
    """The barrier blocks with a usable id and the structural problems."""
    found = blocks.scan(lines, DIALECT)
    return found.blocks, found.problems
