"""The prompt templates on disk: the project's `.wild/prompts/<kind>.md` when present, else
wild's own, filled with the values `wild.prompts` builds (pure). Reading them is the driver's
side of building a prompt (wild/loop/iteration.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from string import Template

from wild.agents.signal_tags import inert

BUILTIN = Path(__file__).resolve().parent / "prompt_templates"


def template_for(kind: str, prompts_dir: Path) -> Template:
    """The user's `.wild/prompts/<kind>.md` when present, else the built-in one.

    A user's template has its signal tags made inert: written to show the agent a promise, it
    would otherwise hand one to an agent that echoes its prompt (the built-in ones hold none).
    """
    override = prompts_dir / f"{kind}.md"
    if override.is_file():
        return Template(inert(override.read_text(encoding="utf-8")))
    return Template((BUILTIN / f"{kind}.md").read_text(encoding="utf-8"))


def render(kind: str, prompts_dir: Path, values: Mapping[str, object]) -> str:
    """Fill a template; unknown `$names` in a user's template are left as they are."""
    filled = template_for(kind, prompts_dir).safe_substitute(
        {key: str(value) for key, value in values.items()}
    )
    return filled.strip() + "\n"
