"""An installed wheel works outside the source tree: templates and prompts are package data."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
    # Reuse this interpreter's packages (click, watchdog …) so no network is needed.
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    wheel = next(wheels.glob("wild-*.whl"))
    # Every default file of `wild --init` ships in the wheel, dotted folder included.
    templates = ROOT / "wild" / "templates" / ".wild"
    expected = {f"wild/templates/.wild/{p.name}" for p in templates.iterdir()}
    assert len(expected) == 6
    assert expected <= set(zipfile.ZipFile(wheel).namelist())
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
        check=True,
        capture_output=True,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    # A PYTHONPATH pointing at the checkout (as the test command sets it) would shadow the wheel.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
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
