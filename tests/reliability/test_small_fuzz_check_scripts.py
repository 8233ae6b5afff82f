"""Fuzzing the shipped check scripts' logic in-process: any arguments and any command output or
file content give exit 0, 1 or 2 and one line, never an exception (a traceback is not a line).

The scripts are loaded from their files, as they run: they import nothing of wild. No network:
URLs that would be fetched are not generated.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wild.paths import CHECK_SCRIPTS_DIR

SCALE = int(os.environ.get("WILD_FUZZ_SCALE", "1"))  # `WILD_FUZZ_SCALE=50`: a long fuzz
ARG = st.text(max_size=12) | st.sampled_from(["-h", "--completed", "0", "-1", "nan", "1e400"])


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        name.removesuffix(".py"), CHECK_SCRIPTS_DIR / name
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_one_line(verdict: tuple[int, str]) -> None:
    code, line = verdict
    assert code in (0, 1, 2)
    assert line and "\n" not in line


@pytest.fixture
def no_commands(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """squeue, sacct and nvidia-smi are not found: their absence is a usage error (2)."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))


@settings(max_examples=40 * SCALE)
@given(st.lists(ARG, max_size=4))
def test_any_arguments(no_commands: None, args: list[str]) -> None:
    for name in ("files_exist.py", "metric_crossed.py", "slurm_job_done.py", "gpu_memory_free.py"):
        assert_one_line(SCRIPTS[name].judge(args))
    # http: only what is refused before any request (a scheme other than http and https).
    assert SCRIPTS["http_healthy.py"].judge(["ftp://" + "".join(args), *args[:1]])[0] == 2


@settings(max_examples=40 * SCALE)
@given(
    st.lists(
        st.binary(max_size=30) | st.sampled_from([b'{"loss": 1e999}', b"[" * 5000]), max_size=6
    ),
    st.sampled_from([">", ">=", "<", "<="]),
    st.sampled_from(["last", "best"]),
)
def test_any_metrics_file(tmp_path: Path, lines: list[bytes], op: str, mode: str) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(b"\n".join([*lines, b'{"loss": 0.5}', *lines]))
    verdict = SCRIPTS["metric_crossed.py"].judge([str(path), "loss", op, "0.25", mode])
    assert_one_line(verdict)
    assert verdict[0] == (0 if op in (">", ">=") else 1)
    assert verdict[1].startswith("loss = 0.5 (")


@settings(max_examples=40 * SCALE)
@given(st.text(max_size=60))
def test_any_scheduler_and_gpu_output(output: str) -> None:
    assert all(state and " " not in state for state in SCRIPTS["slurm_job_done.py"].states(output))
    free = SCRIPTS["gpu_memory_free.py"].free_by_gpu(output)
    assert all(isinstance(mib, int) and mib >= 0 for mib in free.values())


SCRIPTS = {path.name: load(path.name) for path in sorted(CHECK_SCRIPTS_DIR.glob("*.py"))}
