"""Slurm fixtures: a real single-node cluster (once per session, only for tests that ask for
it) and a counting stand-in for sbatch/squeue/scancel on PATH."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.barriers.conftest import FakeClock
from tests.slurm import fake_slurm
from tests.slurm_harness import SlurmCluster, running_slurm, slurm_missing
from wild.paths import WildPaths
from wild.runs.backend import BackendContext
from wild.runs.slurm import SlurmBackend


def need_slurm() -> None:
    """Skip where Slurm is not installed, with the command that installs it (in CI a skip is
    a failure: tests/conftest.py)."""
    missing = slurm_missing()
    if missing is not None:
        pytest.skip(missing)


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[SlurmCluster]:
    """A real Slurm for the whole session, stopped (nothing left running) at its end."""
    need_slurm()
    with running_slurm() as cluster:
        yield cluster


@pytest.fixture
def slurm(slurm_cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> SlurmCluster:
    """The session's cluster, with this test's client commands pointed at it."""
    monkeypatch.setenv("SLURM_CONF", str(slurm_cluster.conf))
    return slurm_cluster


@dataclass
class FakeSlurm:
    """The stand-in's state folder and a backend wired to it."""

    state: Path
    paths: WildPaths
    clock: FakeClock

    def backend(self, tag: str = "wild-t1", **settings: str) -> SlurmBackend:
        return SlurmBackend(BackendContext(self.paths, tag, settings), clock=self.clock)

    def calls(self, command: str | None = None) -> list[list[str]]:
        return fake_slurm.calls(self.state, command)

    def set_state(self, job_id: str, state: str | None) -> None:
        fake_slurm.set_state(self.state, job_id, state)

    def fail(self, command: str, message: str) -> None:
        (self.state / f"{command}.fail").write_text(message)

    def recover(self, command: str) -> None:
        (self.state / f"{command}.fail").unlink()


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    """sbatch, squeue and scancel stand-ins first on PATH, counting every call."""
    for key, value in fake_slurm.install(tmp_path / "bin", tmp_path / "slurm").items():
        monkeypatch.setenv(key, value)
    paths = WildPaths(tmp_path / "project" / ".wild")
    paths.runs.mkdir(parents=True)
    return FakeSlurm(tmp_path / "slurm", paths, FakeClock())
