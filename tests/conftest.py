"""Shared fixtures: every test runs with its own HOME and no stray WILD_* settings; in CI no
test may skip."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.installed_wheel import Installed, install
from tests.loop_processes import Wild
from wild.agents import tree
from wild.store import files as store_files

settings.register_profile(
    "wild",
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
settings.load_profile("wild")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """In CI (`CI` set, as .ci/run is run), a skip is a failure: .ci/run installs every real
    tool the tests drive (Slurm, Chromium, setpriv, strace, vim…), so a test that would skip
    for want of one must say so loudly rather than let a real integration go quiet."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every test must run: {report.longrepr}"


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


@pytest.fixture(autouse=True)
def _human_at_the_terminal(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """In-process tests play the human who answers yes on the terminal (`wild --approve`
    asks on /dev/tty); tests/test_human_acts.py drives the real /dev/tty in a subprocess."""
    asked: list[str] = []

    def answer_yes(question: str) -> bool:
        asked.append(question)
        return True

    monkeypatch.setattr("wild.commands.human_acts.ask_terminal", answer_yes)
    # In-process, the test process itself is the caller: its own ancestors (a CI runner, or a
    # developer's agent running the suite) are not the project's. The tree check walks the
    # real chain in the subprocess tests (tests/reliability/test_trust_self_approval.py).
    real_chain = tree.chain
    monkeypatch.setattr(tree, "chain", lambda pid: real_chain(pid)[:1])
    return asked


@pytest.fixture(autouse=True)
def _nothing_left_displaced() -> Iterator[None]:
    """Each test starts with no swap's old file waiting for removal and ends holding no
    unnamed file for a swap (`wild.store.files` keeps both per process: a test that swaps
    before a go, or makes spares, without a loop leaves its own)."""
    store_files.remove_displaced()
    yield
    store_files.remove_displaced()
    store_files.drop_spares()


@pytest.fixture
def wild(tmp_path: Path) -> Iterator[Wild]:
    """A project with a real `python -m wild` loop to start; every process it left is killed."""
    project = Wild(tmp_path)
    try:
        yield project
    finally:
        project.close()


@pytest.fixture(scope="session")
def installed_wild(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """wild built as an sdist, then a wheel from it, installed in a fresh venv (once a run)."""
    return install(tmp_path_factory.mktemp("installed"))


@pytest.fixture
def lstat_calls(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The paths `os.lstat` is asked about from here on, in order (it still answers)."""
    calls: list[object] = []
    real_lstat = os.lstat

    def counting(path: object, *args: object, **kwargs: object) -> os.stat_result:
        calls.append(path)
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", counting)
    return calls
