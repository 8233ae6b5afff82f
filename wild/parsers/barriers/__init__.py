"""Lossless parser and minimal id-keyed edits for `.wild/barriers.md` (what wild waits on).

The package: `records` (Barrier, BarrierList, the barrier types and lookups), `blocks` (the
dialect of `wild.parsers.blocks`: which lines form each barrier block), `parser` (parse) and
`edits` (record_check, set_status, add_barrier); values are read by
`wild.parsers.field_values`. Callers use the names re-exported here.
"""

from wild.parsers.barriers.edits import add_barrier, record_check, set_status
from wild.parsers.barriers.parser import is_barrier_id, parse
from wild.parsers.barriers.records import (
    BARRIER_TYPES,
    CHECKABLE_TYPES,
    COMMAND_TYPES,
    DEFAULT_INTERVAL_S,
    EXTERNAL_TYPES,
    FILE,
    STATUSES,
    Barrier,
    BarrierList,
    BarrierStatus,
    BarrierType,
    find,
    render,
)
from wild.parsers.field_values import RESULT_MAX_CHARS, clean_result, parse_duration

__all__ = [
    "BARRIER_TYPES",
    "CHECKABLE_TYPES",
    "COMMAND_TYPES",
    "DEFAULT_INTERVAL_S",
    "EXTERNAL_TYPES",
    "FILE",
    "RESULT_MAX_CHARS",
    "STATUSES",
    "Barrier",
    "BarrierList",
    "BarrierStatus",
    "BarrierType",
    "add_barrier",
    "clean_result",
    "find",
    "is_barrier_id",
    "parse",
    "parse_duration",
    "record_check",
    "render",
    "set_status",
]
