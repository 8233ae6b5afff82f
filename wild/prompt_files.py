"""The prompt templates on disk: the project's `.wild/prompts/<kind>.md` when present, else
wild's own, filled with the values `wild.prompts` builds (pure). Reading them is the driver's
side of building a prompt (wild/loop/iteration.py)."""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from wild.agents.signal_tags import inert
from wild.clock import file_stamp, settled

BUILTIN = Path(__file__).resolve().parent / "prompt_templates"

Identity = tuple[int, int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns

# Each template file's identity when it was read, with what it made: the loop builds a prompt
# an iteration, and its template (wild's own, in the installed package) does not change during
# a run (issue 22 item 8). Any other identity is read again: an edit, a rename save, a chmod
# or a touch each change the ctime at least.
_kept: dict[str, tuple[Identity, str]] = {}


@functools.cache
def _placeholder() -> re.Pattern[str]:
    """`$$`, `$name` and `${name}` as `string.Template` reads them (a name is ASCII letters,
    digits and `_`, not starting with a digit; any other `$` is text). Not `string.Template`
    itself: the `string` module and its pattern cost ~0.9 ms before the loop's first agent
    starts (issue 22 item 8)."""
    return re.compile(r"\$(?:(\$)|([_a-zA-Z][_a-zA-Z0-9]*)|\{([_a-zA-Z][_a-zA-Z0-9]*)\})")


def safe_substitute(template: str, values: Mapping[str, str]) -> str:
    """`string.Template(template).safe_substitute(values)`: each `$name` or `${name}` that
    `values` holds replaced, `$$` made `$`, everything else left as it is."""

    def filled(found: re.Match[str]) -> str:
        if found.group(1) is not None:
            return "$"
        name = found.group(2) or found.group(3)
        return values[name] if name in values else found.group()

    return _placeholder().sub(filled, template)


def _template_at(path: Path, *, user: bool) -> str | None:
    """The template in the file at `path` (None: no such file), read again unless its stat
    identity is the one it had when read and it had settled then (`RACY_NS`)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    identity = file_stamp(info)
    key = str(path)
    kept = _kept.get(key)
    if kept is not None and kept[0] == identity:
        return kept[1]
    text = path.read_text(encoding="utf-8")
    template = inert(text) if user else text
    if settled(identity):
        # Read after its stat: a change in between is kept under the old identity, which the
        # file no longer has, so the next call reads it again.
        _kept[key] = (identity, template)
    return template


def template_for(kind: str, prompts_dir: Path) -> str:
    """The user's `.wild/prompts/<kind>.md` when present, else the built-in one.

    A user's template has its signal tags made inert: written to show the agent a promise, it
    would otherwise hand one to an agent that echoes its prompt (the built-in ones hold none).
    """
    template = _template_at(prompts_dir / f"{kind}.md", user=True)
    if template is None:
        template = _template_at(BUILTIN / f"{kind}.md", user=False)
    if template is None:
        raise FileNotFoundError(f"{BUILTIN / f'{kind}.md'}: wild's own prompt template is missing")
    return template


def render(kind: str, prompts_dir: Path, values: Mapping[str, object]) -> str:
    """Fill a template; unknown `$names` in a user's template are left as they are."""
    filled = safe_substitute(
        template_for(kind, prompts_dir), {key: str(value) for key, value in values.items()}
    )
    return filled.strip() + "\n"
