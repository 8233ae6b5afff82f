"""Real system conditions for the reliability tests: a process that is truly unprivileged, and a
small filesystem that really fills up. Both need root to set up (CI runs as root); without it
the tests that use them are skipped, with the reason.

Root ignores file modes, so a permission test must run as another user. The interpreter may
live under a home only root can enter (/root/.pyenv): then the command runs in its own mount
namespace, where a world-readable tmpfs stands in for that home and the interpreter's folder
is bound into it at the same path. Nothing changes outside that namespace.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOBODY_TIMEOUT_S = 60


def needs_root() -> pytest.MarkDecorator:
    missing = [tool for tool in ("setpriv", "unshare", "mount") if shutil.which(tool) is None]
    return pytest.mark.skipif(
        os.geteuid() != 0 or bool(missing),
        reason=f"needs root and setpriv, unshare, mount (missing: {missing or 'root'})",
    )


def _hidden_home(path: Path) -> Path | None:
    """The top folder that hides `path` from other users, if one does."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not parent.stat().st_mode & 0o001:
            return parent
    return None


def interpreter_folders() -> list[Path]:
    """The folders the interpreter needs: the one `sys.executable` stands in (a venv's, which
    holds its site-packages) and the base installation its link leads to. The interpreter is
    run by its own path, never the resolved one: in a venv that is the base interpreter, which
    lacks the venv's packages."""
    folders = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent}
    return sorted(folders)


def exposing_command(run: Sequence[str], folders: Sequence[Path]) -> tuple[list[str], list[str]]:
    """`run` wrapped so that each of `folders` that a top folder hides from other users (a home
    only root can enter) is reachable: in a private mount namespace a world-readable tmpfs stands
    in for that top folder and each needed folder is bound back at its own path. Returns the
    command and the temporary view folders to remove afterwards."""
    hidden: dict[Path, set[Path]] = {}
    for folder in folders:
        top = _hidden_home(folder)
        if top is not None:
            inner = next(p for p in [folder, *folder.parents] if p.parent == top)
            hidden.setdefault(top, set()).add(inner)
    if not hidden:
        return list(run), []
    binds: list[str] = []
    restores: list[str] = []
    views: list[str] = []
    for top, inners in sorted(hidden.items()):
        restores.append(f'mount -t tmpfs -o mode=755,size=1m wild-home "{top}"')
        for inner in sorted(inners):
            view = tempfile.mkdtemp(prefix="wild-view-")
            views.append(view)
            binds.append(f'mount --bind "{inner}" "{view}"')
            restores.append(f'mkdir -p "{inner}" && mount --bind "{view}" "{inner}"')
    script = " && ".join([*binds, *restores, 'exec "$@"'])
    command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]
    return [*command, *run], views


def run_as_nobody(
    args: Sequence[str], *, cwd: Path, home: Path
) -> subprocess.CompletedProcess[str]:
    """`python -m wild ARGS` in `cwd` as user nobody, with no capability, and this checkout's
    wild on its path."""
    return python_as_nobody(["-m", "wild", *args], cwd=cwd, home=home)


def python_as_nobody(
    args: Sequence[str], *, cwd: Path, home: Path
) -> subprocess.CompletedProcess[str]:
    """This interpreter (the venv's, when the tests run in one) with `args`, in `cwd` as user
    nobody with no capability."""
    run = [
        "setpriv",
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        "--inh-caps=-all",
        "env",
        f"HOME={home}",
        # nobody's own config (the approval store) and state, not the test runner's.
        f"XDG_CONFIG_HOME={home / '.config'}",
        f"XDG_STATE_HOME={home / '.local' / 'state'}",
        f"PYTHONPATH={REPO}",
        sys.executable,
        *args,
    ]
    command, views = exposing_command(run, interpreter_folders())
    try:
        return subprocess.run(
            command,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=NOBODY_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    finally:
        for view in views:
            os.rmdir(view)


def give_to_nobody(path: Path) -> None:
    """`path` and everything under it owned by nobody, as a user's own project is."""
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.chown(name, 65534, 65534)


@contextmanager
def small_tmpfs(size: str) -> Iterator[Path]:
    """A real tmpfs of `size` (e.g. "512k"), unmounted afterwards."""
    mount_point = Path(tempfile.mkdtemp(prefix="wild-tmpfs-"))
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=755", "wild-test", str(mount_point)],
        check=True,
    )
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)
        mount_point.rmdir()


def fill(folder: Path) -> None:
    """Write until the filesystem under `folder` has no byte left."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (1 << 16, 1 << 10, 1):  # big blocks first, then the last few bytes
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)
