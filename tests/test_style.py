"""The test command enforces style: mypy --strict and ruff over the whole tree, and the import
layers of docs/architecture.md (import-linter)."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_mypy_strict_is_clean() -> None:
    result = _run(
        "mypy",
        "--strict",
        "--no-error-summary",
        "wild",
        "tests",
        "bench",
        "examples",
        "scripts",
        "setup.py",
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_is_clean() -> None:
    result = _run(
        "ruff", "check", "--no-cache", "wild", "tests", "bench", "examples", "scripts", "setup.py"
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = _run(
        "ruff",
        "format",
        "--check",
        "--no-cache",
        "wild",
        "tests",
        "bench",
        "examples",
        "scripts",
        "setup.py",
    )
    assert result.returncode == 0, result.stdout + result.stderr


# import-linter has no `python -m` entry point: this is what its `lint-imports` script runs.
# --no-cache: no .import_linter_cache folder is left behind.
_LINT_IMPORTS = "from importlinter.cli import lint_imports_command as main; main()"


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    """Checks the `wild` package found in `cwd` against the contracts in our pyproject.toml."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            _LINT_IMPORTS,
            "--no-cache",
            "--no-logo",
            str(ROOT / "pyproject.toml"),
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_import_layers_are_kept() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "wild", tmp_path / "wild", ignore=shutil.ignore_patterns("__pycache__"))
    lines = tmp_path / "wild" / "parsers" / "lines.py"
    lines.write_text(lines.read_text() + "\nimport wild.loop\n")
    result = _lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "wild.parsers.lines -> wild.loop" in result.stdout


def test_a_file_read_in_the_loops_core_breaks_its_contract(tmp_path: Path) -> None:
    """`decide` and what it calls stay pure: an import that reaches processes or files, even
    through another module, is refused by name."""
    shutil.copytree(ROOT / "wild", tmp_path / "wild", ignore=shutil.ignore_patterns("__pycache__"))
    judge = tmp_path / "wild" / "loop" / "judge.py"
    judge.write_text(judge.read_text() + "\nfrom wild.loop import iteration\n")
    result = _lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "The loop's core (model, events, actions, decide) does no I/O BROKEN" in result.stdout
    assert "wild.loop.judge -> wild.loop.iteration" in result.stdout


# Distribution name → import name, where they differ.
_IMPORT_NAMES = {"python-dateutil": "dateutil", "pyyaml": "yaml"}


def test_every_runtime_dependency_is_imported_by_wild() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    requires = config["options"]["install_requires"].split()
    names = [re.split(r"[<>=!~\[ ]", spec, maxsplit=1)[0] for spec in requires]
    assert names
    # wild's own code, and the skills `wild demo` runs (examples/: numpy jobs).
    files = [*(ROOT / "wild").rglob("*.py"), *(ROOT / "examples").glob("*/skills/*.py")]
    source = "\n".join(p.read_text() for p in files)
    for name in names:
        module = _IMPORT_NAMES.get(name, name)
        pattern = rf"^\s*(from|import) {re.escape(module)}\b"
        assert re.search(pattern, source, re.M), f"{name} is declared but never imported"


def test_pre_commit_runs_ruff_ruff_format_and_strict_mypy_from_the_project_env() -> None:
    config = (ROOT / ".pre-commit-config.yaml").read_text()
    hooks = re.findall(r"^\s*- id: (\S+)", config, re.M)
    assert sorted(hooks) == ["lint-imports", "mypy", "ruff-check", "ruff-format"]
    mypy = config[config.index("- id: mypy") :]
    assert re.search(r"^\s*entry: mypy --strict\s*$", mypy, re.M)
    # Every hook runs the project's own tools: nothing is downloaded, no version drifts.
    assert "repo: local" in config and "rev:" not in config
    assert len(re.findall(r"^\s*language: system\s*$", config, re.M)) == len(hooks)
