"""Shared output conventions: one JSON document on stdout for --json, human text otherwise."""

from __future__ import annotations

import re
from typing import Any

import orjson

_JSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
# How a byte that is not UTF-8 comes out of a file read with surrogateescape.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def to_json(data: Any) -> str:
    """Pretty, stable JSON (sorted keys) so scripts and tests can rely on its exact form."""
    try:
        return orjson.dumps(data, option=_JSON_OPTIONS).decode()
    except TypeError:  # text from a file with bytes that are not UTF-8: JSON must be UTF-8
        return orjson.dumps(_replace_lone_surrogates(data), option=_JSON_OPTIONS).decode()


def _replace_lone_surrogates(value: Any) -> Any:
    """`value` with each lone surrogate in its strings (keys too) turned into U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_replace_lone_surrogates(k): _replace_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replace_lone_surrogates(item) for item in value]
    return value
