"""Files wild must not write: those the user made read-only, and links leading out of the project.

A rename-based write replaces a read-only file without asking (the folder, not the file, is
what must be writable), and root ignores file modes altogether; so wild reads the user's
intent from the mode bits itself. A link in `.wild/` that leads out of the project would let
whoever planted it (an agent, say) make wild overwrite any file the user can write.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from wild.errors import RefusedWriteError

# Set to 1 to let wild write through links that leave the project (docs/formats.md).
ALLOW_OUTSIDE_ENV = "WILD_ALLOW_OUTSIDE_SYMLINKS"


def _inside(target: Path, folder: Path) -> bool:
    return target == folder or folder in target.parents


def link_refusal(path: Path, environ: Mapping[str, str] | None = None) -> str | None:
    """Why wild must not write through `path`, a link leading out of the project; else None.

    The project is the folder that holds the file's folder (`.wild/`'s parent), links in
    that folder's own path resolved first; a link inside it is followed.
    """
    env = os.environ if environ is None else environ
    folder = Path(os.path.realpath(path.parent))
    target = Path(os.path.realpath(path))
    project = folder.parent
    if target == folder / path.name or _inside(target, project):
        return None
    if env.get(ALLOW_OUTSIDE_ENV) == "1":
        return None
    return (
        f"{path}: a symbolic link to {target}, outside the project {project};"
        " wild does not write through it. Replace the link with a file, or set"
        f" {ALLOW_OUTSIDE_ENV}=1 to let wild write through links that leave the project"
    )


def mode_refusal(path: Path) -> str | None:
    """Why wild must not replace `path`, a file the user made read-only; else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # missing (wild creates it) or unreadable (the write itself will say)
    if stat.S_ISREG(mode) and (not mode & stat.S_IWUSR or not os.access(path, os.W_OK)):
        return (
            f"{path}: the file is read-only (mode {stat.S_IMODE(mode):03o}), so wild will not"
            f" replace it; run `chmod u+w {path}` to let wild edit it"
        )
    return None


def refusal(path: Path) -> str | None:
    """Why wild must not write `path` (the message, with what to do); None when it may."""
    return link_refusal(path) or mode_refusal(path)


def check_writable(path: Path) -> None:
    """Raise RefusedWriteError when wild must not replace `path`."""
    message = refusal(path)
    if message is not None:
        raise RefusedWriteError(str(path), message)


def check_appendable(path: Path) -> None:
    """Appends only refuse links leading out of the project: an O_APPEND write replaces
    nothing, and a log the user made read-only already fails for anyone but root."""
    message = link_refusal(path)
    if message is not None:
        raise RefusedWriteError(str(path), message)
