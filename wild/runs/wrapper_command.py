"""The wrapper's command line (`wild/runs/wrapper.py`), as every backend starts it."""

from __future__ import annotations

from pathlib import Path

from wild.parsers.runs import RunRecord

WRAPPER = Path(__file__).with_name("wrapper.py")


def wrapper_argv(
    run: RunRecord, *, python: str, run_dir: str, workdir: str, wrapper: str = str(WRAPPER)
) -> list[str]:
    """`python -I -S wrapper.py … -- INSTRUCTION`. -I -S: the wrapper needs the standard
    library alone; no user site, no PYTHON* variables."""
    argv = [python, "-I", "-S", wrapper, "--run-dir", run_dir, "--run-id", run.id]
    argv += ["--attempt", str(run.attempt), "--workdir", workdir]
    if run.resources.time_s is not None:
        argv += ["--time-limit", f"{run.resources.time_s:g}"]
    return [*argv, "--", run.resolved_instruction]
