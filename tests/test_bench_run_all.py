"""bench/run_all.py without the test extras: the dashboard bench is skipped, saying what to
install, instead of crashing (it imports the tests' browser helpers, which need pytest)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_dashboard_bench_is_skipped_naming_what_to_install(tmp_path: Path) -> None:
    # Modules that cannot be imported, as where the test extras are not installed.
    (tmp_path / "pytest.py").write_text('raise ImportError("not here", name="pytest")\n')
    (tmp_path / "selenium").mkdir()
    (tmp_path / "selenium" / "__init__.py").write_text(
        'raise ImportError("not here", name="selenium")\n'
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(tmp_path), str(ROOT)))}
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run_all.py"), "dashboard"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    install = "pytest is not installed: pip install -e '.[test]'"
    assert f"skipped: {install}" in result.stdout.splitlines()
    assert f"bench_dashboard ({install})" in result.stdout
