"""Files wild must not write: those the user made read-only, and links leading out of the project.

A rename-based write replaces a read-only file without asking (the folder, not the file, is
what must be writable), and root ignores file modes altogether; so wild reads the user's
intent from the mode bits itself. A link in `.wild/` that leads out of the project would let
whoever planted it (an agent, say) make wild overwrite any file the user can write.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from wild.errors import RefusedWriteError
from wild.procfs import real_path

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
    try:
        if not stat.S_ISLNK(os.lstat(path).st_mode):
            # Not a link: the file is its folder's real path and its own name, inside the
            # project by definition. One lstat where resolving both took six system calls
            # (~18 checks per loop iteration, issue 22 item 8).
            return None
    except OSError:
        pass  # missing (wild creates it) or unreadable: resolved below, as any link is
    folder = Path(real_path(path.parent))
    target = Path(real_path(path))
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
    """Appends refuse what whole-file writes refuse: a link leading out of the project, and
    a file the user made read-only (root may write any file; wild reads the mode bits)."""
    check_writable(path)


def _link_message(path: Path) -> str:
    return (
        f"{path}: a symbolic link, and wild does not create or append to its own files through"
        f" links (one could lead anywhere). Remove it (`rm {path}`); wild makes the file anew"
    )


def open_own_file(path: Path, flags: int, mode: int = 0o666, *, own_folder: bool) -> int:
    """Open `path` to create, append to or serve it, never through a symbolic link: the one
    place where wild opens a file of its own (logs, prompts, JSON lines; the dashboard's
    view of a log).

    The file is opened with O_NOFOLLOW relative to a descriptor of its folder (openat), so a
    link planted at the file's name (dangling or not) is not followed. `own_folder`: the
    folder is one wild makes under `.wild/` (`logs/`, `runs/<id>/`), which must not be a
    link either. A link found is refused with RefusedWriteError (the loop says so once and
    holds the work). A JSON lines file linked inside the project is still followed, as
    whole-file writes follow such links (docs/formats.md); it is refused only when it is
    read-only or leaves the project (`check_writable`).
    """
    folder_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        folder = os.open(path.parent, folder_flags | (os.O_NOFOLLOW if own_folder else 0))
    except OSError as error:
        if own_folder and error.errno in (errno.ELOOP, errno.ENOTDIR) and path.parent.is_symlink():
            raise RefusedWriteError(str(path.parent), _link_message(path.parent)) from None
        raise OSError(error.errno, error.strerror, str(path)) from None  # name the file
    try:
        try:
            return os.open(path.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=folder)
        except OSError as error:
            if error.errno != errno.ELOOP:  # name the file, not the name relative to its folder
                raise OSError(error.errno, error.strerror, str(path)) from None
        if own_folder:
            raise RefusedWriteError(str(path), _link_message(path))
        check_writable(path)  # a link inside the project, to a file the user may have locked
        return os.open(os.path.realpath(path), flags | os.O_CLOEXEC, mode)
    finally:
        os.close(folder)
