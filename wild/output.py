"""Shared output conventions: one JSON document on stdout for --json, human text otherwise."""

from __future__ import annotations

from typing import Any

import orjson


def to_json(data: Any) -> str:
    """Pretty, stable JSON (sorted keys) so scripts and tests can rely on its exact form."""
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
