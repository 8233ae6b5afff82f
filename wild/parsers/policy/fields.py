"""The fields of human-policy.md: which keys each part knows, how a field line reads, and
what is wrong with a field wild cannot use."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Mapping

from wild.clock import LONGEST_SPAN_TEXT, parse_time
from wild.parsers.policy.values import (
    AUTONOMY_LEVELS,
    INTERRUPTION_MODES,
    MODES,
    MOST_COUNT,
    THRESHOLDS,
    read_approval,
    read_command,
    read_count,
    read_duration,
    read_flag,
    read_level,
    read_minutes,
    read_mode,
    read_preset,
    read_threshold,
    says_off,
)

_Reader = Callable[[str], object]

# Each known key: the reader that accepts its value, and a hint naming what it accepts.
SETTINGS: Mapping[str, tuple[_Reader, str]] = {
    "mode": (read_mode, "one of " + ", ".join(MODES)),
    "preset": (read_preset, "one of " + ", ".join(INTERRUPTION_MODES)),
    "autonomy level": (read_level, "one of " + ", ".join(AUTONOMY_LEVELS)),
    "max retry attempts": (read_count, f"a whole number like 3, at most {MOST_COUNT}"),
    "escalation threshold": (read_threshold, "one of " + ", ".join(THRESHOLDS)),
    "progress reports": (read_minutes, 'a time like "Every 30 minutes", "45m" or "none"'),
    "context switch penalty": (read_minutes, 'a time like "15 minutes" or "none"'),
    "command approval": (read_approval, "required or trusted"),
    "notify command": (read_command, "a shell command"),
}
RULES: Mapping[str, tuple[_Reader, str]] = {
    "repeated failures": (read_count, '"Escalate after 5 failed attempts" or "never"'),
    "stuck duration": (read_minutes, '"Escalate if no progress for 60 minutes" or "never"'),
    "critical alerts": (read_flag, '"Always escalate" or "Never escalate"'),
    "unexpected success": (read_flag, '"Notify me of breakthroughs" or "Don\'t notify me"'),
}
_HEADER_KEYS = ("active from", "duration", "expires at")
# The parts of the current policy that hold fields: the lines under its heading, then
# ### Settings and ### Escalation Rules.
KNOWN: Mapping[str, Collection[str]] = {
    "header": _HEADER_KEYS,
    "settings": SETTINGS,
    "rules": RULES,
}

_BOLD_FIELD = re.compile(
    r"[ \t]*(?:[-*+][ \t]+)?\*\*(?P<key>[^*]+?)[ \t]*(?::[ \t]*\*\*|\*\*[ \t]*:)[ \t]*(?P<value>.*)"
)


@functools.cache
def _plain_field() -> re.Pattern[str]:
    # Compiled when first used: not on the loop's way to its first agent (issue 22 item 8).
    return re.compile(r"[ \t]*[-*+][ \t]+(?P<key>[A-Za-z][A-Za-z \t-]*?)[ \t]*:[ \t]*(?P<value>.*)")


def field(line: str) -> tuple[str, str] | None:
    """The (key, value) of a `- **Key:** value` line (or its plainer forms), or None."""
    match = _BOLD_FIELD.match(line) or _plain_field().match(line)
    if match is None:
        return None
    return " ".join(match.group("key").split()), match.group("value").strip()


def value_problem(part: str, key: str, value: str) -> str | None:
    """What is wrong with a known key's value, or None when its reader accepts it."""
    lower = key.lower()
    if part == "header":
        if lower == "duration":
            ok = read_duration(value) is not None or says_off(value)
            hint = f'a duration like "6 hours", at most {LONGEST_SPAN_TEXT}'
        else:
            ok = parse_time(value) is not None or says_off(value)
            hint = "a time like 2026-02-08T16:00:00Z, in years 1 to 9999 UTC"
        return None if ok else f'{key} "{value}" is not {hint}; wild ignores it'
    reader, hint = (SETTINGS if part == "settings" else RULES)[lower]
    if reader(value) is None:
        return f'{key} "{value}" is not {hint}; the mode\'s default applies'
    return None


def unknown_key_message(part: str, key: str) -> str:
    """The problem for a key `part` does not know, naming where it belongs when it does."""
    lower = key.lower()
    if part != "settings" and lower in SETTINGS:
        return f'"{key}" belongs under ### Settings; wild ignores it here'
    if part != "rules" and lower in RULES:
        return f'"{key}" belongs under ### Escalation Rules; wild ignores it here'
    if part == "header":
        return f'unknown field "{key}"; wild reads Active From, Duration and Expires At here'
    names = SETTINGS if part == "settings" else RULES
    known = ", ".join(name.title() for name in names)
    return f'unknown {"setting" if part == "settings" else "rule"} "{key}"; wild knows {known}'
