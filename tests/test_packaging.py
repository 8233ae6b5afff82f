"""An installed wheel works outside the source tree: templates and prompts are package data."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lend_dependencies(python: Path) -> None:
    """Let the venv of `python` import this interpreter's packages (click, watchdog …).

    No network is needed, and it works whether the test runs under a system Python or inside a
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


def test_wheel_installs_templates_and_runs_init_and_demo_data(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheels),
        ],
        check=True,
        capture_output=True,
    )
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    wheel = next(wheels.glob("wild-*.whl"))
    # Every default file of `wild --init` ships in the wheel, dotted folder included.
    templates = ROOT / "wild" / "templates" / ".wild"
    expected = {f"wild/templates/.wild/{p.name}" for p in templates.iterdir()}
    assert len(expected) == 6
    expected |= {
        f"wild/check_scripts/{p.name}" for p in (ROOT / "wild" / "check_scripts").glob("*.py")
    }
    assert len(expected) == 11
    # The dashboard's page, scripts and styles (`wild --serve` serves nothing from elsewhere).
    static = ROOT / "wild" / "serve" / "static"
    expected |= {f"wild/serve/static/{p.name}" for p in static.iterdir()}
    assert len(expected) == 16
    assert expected <= set(zipfile.ZipFile(wheel).namelist())
    # A PYTHONPATH pointing at the checkout (as the test command sets it) would shadow the wheel,
    # and pip would find the checkout's `wild.egg-info` and take wild as installed already.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "-q",
            str(wheel),
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    # After the install: pip would otherwise take the outer editable wild as installed already.
    lend_dependencies(python)
    work = tmp_path / "elsewhere"
    work.mkdir()
    probe = (
        "import wild, pathlib, sys; "
        "print(pathlib.Path(wild.__file__).resolve().is_relative_to(pathlib.Path(sys.argv[1])))"
    )
    inside = subprocess.run(
        [str(python), "-c", probe, str(ROOT)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert inside.stdout.strip() == "False"  # the installed copy, not the checkout
    init = subprocess.run(
        [str(python), "-m", "wild", "--init"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert init.returncode == 0, init.stderr
    assert (work / ".wild" / "human-policy.md").read_text().startswith("# Human Policy")
    status = subprocess.run(
        [str(python), "-m", "wild", "--status"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert status.returncode == 0, status.stderr
    assert "Policy: semi-autonomous" in status.stdout
    # The shipped check scripts ($WILD_CHECKS) are installed, executable, outside the checkout.
    checks = subprocess.run(
        [str(python), "-c", "from wild.paths import CHECK_SCRIPTS_DIR as d; print(d)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert not Path(checks).is_relative_to(ROOT)
    found = subprocess.run(
        [str(Path(checks) / "files_exist.py"), ".wild/*.md", "3"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (found.returncode, found.stdout) == (0, "5 match '.wild/*.md' (need 3)\n")
