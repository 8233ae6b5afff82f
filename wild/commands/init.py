"""`wild --init`: create `.wild/` from the templates, never overwriting a file."""

from __future__ import annotations

from pathlib import Path

from wild.parsers.state import LoopState
from wild.paths import TEMPLATES_DIR, WildPaths
from wild.store.state_file import save_state


def template_files() -> list[Path]:
    return sorted(p for p in TEMPLATES_DIR.iterdir() if p.is_file())


def init_wild(paths: WildPaths) -> tuple[list[str], list[str]]:
    """Create missing files; returns (created, kept) file names."""
    paths.root.mkdir(parents=True, exist_ok=True)
    created: list[str] = []
    kept: list[str] = []
    for template in template_files():
        target = paths.root / template.name
        if target.exists():
            kept.append(template.name)
            continue
        # Imported for a file to make: every loop's start calls this, and shutil (with zlib,
        # bz2 and lzma) is not on the way to its first agent otherwise (issue 22).
        import shutil  # noqa: PLC0415

        shutil.copyfile(template, target)
        created.append(template.name)
    if paths.state.exists():
        kept.append(paths.state.name)
    else:
        save_state(paths.state, LoopState())
        created.append(paths.state.name)
    return sorted(created), sorted(kept)
