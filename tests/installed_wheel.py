"""wild as a user installs it: an sdist built from the tracked files, a wheel built from that
sdist (so the sdist is proven complete), installed into a fresh venv with no source tree in
reach. Nothing is downloaded: the builds use this interpreter's setuptools (no isolation), and
the venv borrows this interpreter's installed dependencies."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import tarfile
import venv
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = "import sys, setuptools.build_meta as b; print(getattr(b, sys.argv[1])(sys.argv[2]))"


@dataclass(frozen=True)
class Installed:
    """A venv whose `wild` is the wheel's, and how to run it from an empty folder."""

    python: Path
    wheel: Path
    sdist: Path
    env: dict[str, str]

    def wild(
        self, *args: str, cwd: Path, timeout: float = 120.0
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), "-m", "wild", *args],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def _tracked_files() -> list[str]:
    """What a fresh clone holds: the files git tracks, and the new ones it does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return [name for name in listed.decode().split("\0") if name and (ROOT / name).is_file()]


def _build(hook: str, source: Path, out: Path) -> Path:
    out.mkdir(exist_ok=True)
    name = subprocess.run(
        [sys.executable, "-c", BUILD, hook, str(out)],
        cwd=source,
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    ).stdout.split()[-1]
    return out / name


def lend_dependencies(python: Path) -> None:
    """Let the venv of `python` import this interpreter's packages (click, watchdog …).

    No network is needed, and it works whether the tests run under a system Python or inside a
    venv: `system_site_packages` would reach the *base* interpreter, which in a venv lacks them.
    A `.pth` line is a plain folder, so that folder's own `.pth` files (an editable install of
    the checkout among them) stay unread, and it comes after the venv's site-packages: the
    wheel's copy of wild wins.
    """
    inner = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    outer = [*site.getsitepackages(), site.getusersitepackages()]
    (Path(inner) / "outer-site-packages.pth").write_text("\n".join(outer) + "\n")


def install(folder: Path) -> Installed:
    """Build the sdist, the wheel from it, and install the wheel into a venv under `folder`."""
    source = folder / "clone"
    for name in _tracked_files():
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    sdist = _build("build_sdist", source, folder / "dist")
    with tarfile.open(sdist) as archive:
        archive.extractall(folder / "unpacked", filter="data")
    (unpacked,) = (folder / "unpacked").iterdir()
    wheel = _build("build_wheel", unpacked, folder / "dist")
    shutil.rmtree(source)
    shutil.rmtree(folder / "unpacked")
    env_dir = folder / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    # A PYTHONPATH pointing at the checkout (as some tests set it) would shadow the wheel, and
    # pip would find the checkout's `wild.egg-info` and take wild as installed already.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("WILD_")}
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", str(wheel)],
        cwd=folder,
        env=env,
        check=True,
        capture_output=True,
    )
    # After the install: pip would otherwise take the outer editable wild as installed already.
    lend_dependencies(python)
    return Installed(python, wheel, sdist, env)
