"""Ids in wild's files: one rule for each kind, and the words that state it to a human.

A block's id (barriers.md, checks.md, alerts) is a letter, then letters, digits, "_", "." and
"-". A task's id in tasks.md must also tell itself from prose (`task-7:` is an id,
`Refactor:` is text), so after its leading letters comes a digit or one of "-", "_", ".".
"""

from __future__ import annotations

import re

BLOCK_ID = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
BLOCK_ID_RULE = "a letter first, then letters, digits, -, _ or ."

TASK_ID_PATTERN = r"[A-Za-z]+[0-9_.-][A-Za-z0-9_.-]*"
TASK_ID = re.compile(TASK_ID_PATTERN)
TASK_ID_RULE = "letters first, then a digit, -, _ or ., then letters, digits, -, _ or ."


def is_block_id(text: str) -> bool:
    """Whether `text` reads as a block's id (`train-done`, `gpu_ok`; not `1st` or `a b`)."""
    return BLOCK_ID.fullmatch(text) is not None


def is_task_id(text: str) -> bool:
    """Whether `text` reads as a task id in tasks.md (`task-7`, `data.prep`; not `prep`)."""
    return TASK_ID.fullmatch(text) is not None
