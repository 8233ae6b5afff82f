"""Every shipped check script is an executable with --help, exits 2 on bad usage, is documented."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.check_scripts.conftest import Ran, Scripts
from wild.paths import CHECK_SCRIPTS_DIR

ROOT = Path(__file__).resolve().parents[2]
NAMES = sorted(path.name for path in CHECK_SCRIPTS_DIR.glob("*.py"))


def test_the_five_checks_are_shipped() -> None:
    assert NAMES == [
        "files_exist.py",
        "gpu_memory_free.py",
        "http_healthy.py",
        "metric_crossed.py",
        "slurm_job_done.py",
    ]


@pytest.mark.parametrize("name", NAMES)
def test_each_script_is_an_executable_with_help_and_usage_errors(
    scripts: Scripts, name: str
) -> None:
    path = CHECK_SCRIPTS_DIR / name
    assert os.access(path, os.X_OK)
    assert path.read_text().startswith("#!/usr/bin/env python3\n")
    usage = scripts.run(name, "--help")
    assert usage.code == 0 and usage.line.startswith(f"usage: {name} ")
    assert scripts.run(name) == Ran(2, usage.line)


@pytest.mark.parametrize("name", NAMES)
def test_each_script_is_documented(name: str) -> None:
    assert f'"$WILD_CHECKS/{name}"' in (ROOT / "docs" / "formats.md").read_text()
