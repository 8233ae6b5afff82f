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


def _hidden_home(executable: Path) -> Path | None:
    """The top folder that hides the interpreter from other users, if one does."""
    for parent in reversed(executable.parents):
        if parent != Path("/") and not parent.stat().st_mode & 0o001:
            return parent
    return None


def run_as_nobody(
    args: Sequence[str], *, cwd: Path, home: Path
) -> subprocess.CompletedProcess[str]:
    """`python -m wild ARGS` in `cwd` as user nobody, with no capability, and this checkout's
    wild on its path."""
    python = Path(sys.executable).resolve()
    hidden = _hidden_home(python)
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
        str(python),
        "-m",
        "wild",
        *args,
    ]
    if hidden is None:
        command = run
    else:
        inner = next(p for p in python.parents if p.parent == hidden)
        view = tempfile.mkdtemp(prefix="wild-view-")
        script = (
            f'mount --bind "{inner}" "{view}" && '
            f'mount -t tmpfs -o mode=755,size=1m wild-home "{hidden}" && '
            f'mkdir -p "{inner}" && mount --bind "{view}" "{inner}" && exec "$@"'
        )
        command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]
        command += run
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
        if hidden is not None:
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
