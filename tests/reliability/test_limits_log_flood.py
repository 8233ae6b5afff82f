"""A flooding agent or run cannot fill the disk (issue 20, Limits): `yes` without end, as an
agent (the iteration log) and as a research run (the attempt log, through the real wrapper),
under a small WILD_MAX_LOG_BYTES. Each log stays within its cap, keeps its head (wild's
header, the process's first words) and its tail (the newest output, wild's last line), and
says how much was cut. Before: 12.3 GB and 7.1 GB in 15 s."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from wild.agents.runner import AgentRequest, run_agent
from wild.runs import wrapper
from wild.store.capped_log import READ_CHUNK, notice

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

CAP = 1_000_000
SLACK = READ_CHUNK + len(notice(0, CAP)) + 4096  # one pipe read, the notice, wild's own lines
FLOOD = "echo first-words; exec yes"
CUT = re.compile(rb"\[wild\] +(\d+) bytes of output were cut here")


def test_a_flooding_agent_writes_a_capped_iteration_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WILD_MAX_LOG_BYTES", str(CAP))
    log = tmp_path / "logs" / "iteration-1.log"
    request = AgentRequest(argv=("sh", "-c", FLOOD), cwd=tmp_path, log_path=log, timeout_s=2.0)

    run = run_agent(request)

    assert run.timed_out
    data = log.read_bytes()
    assert len(data) <= CAP + SLACK
    assert data.startswith(b"[wild] started ")
    assert b"first-words\ny\ny\n" in data[:4096]
    [cut] = CUT.findall(data)
    assert int(cut) > CAP  # the agent wrote far more than was kept
    assert run.output_bytes > int(cut)
    assert re.search(rb"y\n\[wild\] ended [^\n]*: timed out after", data[-4096:])


def test_a_flooding_run_writes_a_capped_attempt_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WILD_MAX_LOG_BYTES", str(CAP))
    run_dir = tmp_path / "runs" / "s1-000"
    argv = [sys.executable, "-I", "-S", str(Path(wrapper.__file__)), "--run-dir", str(run_dir)]
    argv += ["--run-id", "s1-000", "--attempt", "1", "--workdir", str(tmp_path)]
    argv += ["--time-limit", "2", "--grace", "1", "--", FLOOD]

    subprocess.run(argv, check=False, timeout=60, stdout=subprocess.DEVNULL)

    data = (run_dir / "log").read_bytes()
    assert len(data) <= CAP + SLACK
    assert data.startswith(b"first-words\ny\ny\n")
    [cut] = CUT.findall(data)
    assert int(cut) > CAP
    assert re.search(rb"\[wild wrapper [^\]]*\] ended: exit code \d+", data[-4096:])
