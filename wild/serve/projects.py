"""Which projects one dashboard shows: the state folder given, or every `*/.wild` under a parent.

`wild --serve --dir PATH`: a state folder (holding tasks.md or state.json) is one project; a
project folder holding `.wild/` is that one; any other folder is scanned one and two levels
down for projects holding `.wild/`, so one page can follow the experiments of a whole folder.
"""

from __future__ import annotations

from pathlib import Path

from wild.errors import WildError
from wild.paths import DEFAULT_DIR, WildPaths

MOST_PROJECTS = 32  # each is watched, and inotify instances are few (128 per user by default)


def _is_state_folder(folder: Path) -> bool:
    return (folder / "tasks.md").is_file() or (folder / "state.json").is_file()


def find_projects(root: Path) -> dict[str, WildPaths]:
    """Projects by display name, in name order; an error saying what to do when none is found."""
    if _is_state_folder(root) or (root.name == DEFAULT_DIR and root.is_dir()):
        return {root.resolve().parent.name: WildPaths(root)}
    if _is_state_folder(root / DEFAULT_DIR):
        return {root.resolve().name: WildPaths(root / DEFAULT_DIR)}
    # `wild --serve` with no state folder here: `./.wild` is missing, so scan `.`.
    parent = root.parent if root.name == DEFAULT_DIR and not root.exists() else root
    found = sorted({*parent.glob(f"*/{DEFAULT_DIR}"), *parent.glob(f"*/*/{DEFAULT_DIR}")})
    projects = {
        str(state.parent.relative_to(parent)): WildPaths(state)
        for state in found
        if _is_state_folder(state)
    }
    if not projects:
        raise WildError(
            f"{root}: no wild project here (no tasks.md or state.json, and no */.wild below "
            f"{parent}); run `wild --init` first, or pass --dir PATH"
        )
    if len(projects) > MOST_PROJECTS:
        raise WildError(
            f"{parent}: {len(projects)} projects found, more than one dashboard follows "
            f"({MOST_PROJECTS}); pass --dir with a folder holding fewer"
        )
    return projects
