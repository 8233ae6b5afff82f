"""Line-addressed text helpers shared by every Markdown parser; nothing here loses a byte."""

from __future__ import annotations

import functools
import re

from wild.record import record


# Only "\n" ends a line: str.splitlines would also split on \x0b, \x1c, U+2028 … which a
# human's file may contain inside a line, and "\r\n" stays attached to its line.
@functools.cache
def _line() -> re.Pattern[str]:
    # Compiled when first used: not on the loop's way to its first agent (issue 22 item 8).
    return re.compile(r"[^\n]*\n|[^\n]+\Z")


@functools.cache
def _undecodable() -> re.Pattern[str]:
    """How a byte that is not UTF-8 comes out of a file read with surrogateescape. Compiled
    when a line that is not ASCII first comes (none does in wild's templates: not on the
    loop's way to its first agent, issue 22 item 8)."""
    return re.compile("[\udc80-\udcff]")


def undecodable_lines(lines: tuple[str, ...] | list[str], file: str) -> tuple[Problem, ...]:
    """A problem for each line holding bytes that are not UTF-8. They are kept as they are
    (read and written back with surrogateescape) and reach the agent unchanged; the human
    may still want to know, since other tools may show them garbled."""
    return tuple(
        Problem(file, number, "bytes that are not UTF-8 (kept as they are); save it as UTF-8")
        for number, line in enumerate(lines, 1)
        if not line.isascii() and _undecodable().search(line)
    )


# What `str.splitlines` ends a line at besides "\n" ("\r\n" included through "\r").
_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def split_lines(text: str) -> list[str]:
    """Split into lines that keep their endings, so `"".join(split_lines(t)) == t`."""
    # A text without any other break splits alike with `str.splitlines`, 2.5x faster than
    # the regex (a 10,000-task tasks.md: 1 ms, not 2.6); a membership test costs ~15 us.
    for mark in _OTHER_BREAKS:
        if mark in text:
            return _line().findall(text)
    return text.splitlines(keepends=True)


def body(line: str) -> str:
    """The line without its ending ("\\n" or "\\r\\n")."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith("\n"):
        return line[:-1]
    return line


def ending(line: str) -> str:
    """The line's own ending: "\\r\\n", "\\n" or "" for a last line without one."""
    return line[len(body(line)) :]


def dominant_ending(lines: list[str] | tuple[str, ...]) -> str:
    """The ending new lines should use: CRLF when the file mostly uses it, else LF."""
    crlf = sum(1 for line in lines if line.endswith("\r\n"))
    lf = sum(1 for line in lines if line.endswith("\n")) - crlf
    return "\r\n" if crlf > lf else "\n"


def replace_body(line: str, new_body: str) -> str:
    """Swap a line's content and keep its ending, so CRLF files stay CRLF."""
    return new_body + ending(line)


def append_lines(text: str, new_lines: list[str]) -> str:
    """Append bodies as whole lines, adding a missing final newline first."""
    lines = split_lines(text)
    eol = dominant_ending(lines)
    prefix = text if not text or text.endswith("\n") else text + eol
    return prefix + "".join(line + eol for line in new_lines)


@record(slots=True)
class Problem:
    """A line wild could not understand; reported by `wild --status`, never fatal."""

    file: str
    line: int  # 1-based, as editors show it
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@record(slots=True)
class Span:
    """Half-open range of 0-based line indexes a record came from."""

    start: int
    end: int
