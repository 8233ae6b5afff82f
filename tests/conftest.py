"""Shared fixtures: every test runs with its own HOME and no stray WILD_* settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.loop_processes import Wild

settings.register_profile(
    "wild",
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
settings.load_profile("wild")


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """No test may read or write the real home (approvals live there) or inherit WILD_* vars."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    for name in list(__import__("os").environ):
        if name.startswith("WILD_"):
            monkeypatch.delenv(name)
    yield home


@pytest.fixture
def wild(tmp_path: Path) -> Iterator[Wild]:
    """A project with a real `python -m wild` loop to start; every process it left is killed."""
    project = Wild(tmp_path)
    try:
        yield project
    finally:
        project.close()
