"""Approvals: by hash of the exact command, per project real path, outside `.wild/`, private."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from pathlib import Path

import orjson
import pytest

from wild.barriers.approval_set import Approvals, command_hash
from wild.barriers.approvals import (
    approve,
    changing_store,
    forget_project,
    load_approvals,
    load_project,
    pending_approvals,
)
from wild.errors import FileFormatError
from wild.parsers.barriers import parse
from wild.paths import approvals_path


def test_approvals_live_in_the_xdg_config_folder(_isolated_home: Path) -> None:
    assert approvals_path() == _isolated_home / ".config" / "wild" / "approvals.json"


def test_default_is_under_home_dot_config(
    _isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert approvals_path() == _isolated_home / ".config" / "wild" / "approvals.json"


def test_hash_is_sha256_of_the_exact_command() -> None:
    assert (
        command_hash("squeue -u $USER | wc -l")
        == hashlib.sha256(b"squeue -u $USER | wc -l").hexdigest()
    )


def test_approve_then_the_command_is_allowed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    assert load_approvals(project).allows("make check") is False
    digest = approve(project, "make check")
    assert digest == command_hash("make check")
    assert load_approvals(project).allows("make check") is True
    assert load_approvals(project).allows("make check ") is False
    assert load_approvals(project).allows("make  check") is False


def test_file_is_private_outside_the_project_and_keyed_by_real_path(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    approve(project, "make check")
    store = approvals_path()
    assert not store.is_relative_to(project)
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert orjson.loads(store.read_bytes()) == {
        "format": 1,
        "projects": {str(project.resolve()): [command_hash("make check")]},
    }


def test_approvals_are_per_project(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    approve(one, "make check")
    assert load_approvals(two).allows("make check") is False


def test_a_symlinked_spelling_of_the_project_shares_its_approvals(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    link = tmp_path / "link"
    link.symlink_to(project)
    approve(link, "make check")
    assert load_approvals(project).allows("make check") is True


def test_approving_twice_keeps_one_entry(tmp_path: Path) -> None:
    approve(tmp_path, "make check")
    approve(tmp_path, "make check")
    assert load_approvals(tmp_path).hashes == frozenset({command_hash("make check")})


def test_concurrent_approvals_are_all_kept(tmp_path: Path) -> None:
    commands = [f"check {n}" for n in range(16)]
    threads = [threading.Thread(target=approve, args=(tmp_path, c)) for c in commands]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert load_approvals(tmp_path).hashes == frozenset(command_hash(c) for c in commands)


@pytest.mark.parametrize("damage", ["{not json", "[]", '{"projects": {"/p": "abc"}}'])
def test_damaged_file_approves_nothing_and_refuses_to_be_overwritten(
    tmp_path: Path, damage: str
) -> None:
    store = approvals_path()
    store.parent.mkdir(parents=True)
    store.write_text(damage)
    assert load_approvals(tmp_path).allows("make check") is False
    with pytest.raises(FileFormatError) as caught:
        approve(tmp_path, "make check")
    assert str(caught.value) == (
        f'{store}: is not a wild approvals file (JSON with "projects": {{path: [sha256, ...]}}); '
        "fix it or delete it and approve again"
    )
    assert store.read_text() == damage


def test_pending_approvals_lists_waiting_unapproved_commands(tmp_path: Path) -> None:
    doc = parse(
        "## [WAITING] a\n- Type: command-check\n- Check: make a\n\n"
        "## [WAITING] b\n- Type: count-based\n- Check: echo 1\n- Target: 2\n\n"
        "## [WAITING] c\n- Type: command-check\n- Check: make c\n\n"
        "## [SATISFIED] d\n- Type: command-check\n- Check: make d\n\n"
        "## [WAITING] e\n- Type: file-exists\n- File: x\n\n"
        "## [WAITING] f\n- Type: webhook\n"
    )
    approve(tmp_path, "make c")
    approvals = load_approvals(tmp_path)
    assert [b.id for b in pending_approvals(doc, approvals)] == ["a", "b"]


def test_the_recorded_trust_sits_beside_the_approvals_and_can_be_forgotten(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    approve(project, "make check")
    with changing_store(project) as entry:
        entry.trust = {"mode": "autonomous", "commandApproval": "trusted", "expiresAt": None}
    approvals, trust = load_project(project)
    assert approvals.allows("make check")
    assert trust == {"mode": "autonomous", "commandApproval": "trusted", "expiresAt": None}
    forget_project(project)
    assert orjson.loads(approvals_path().read_bytes()) == {"format": 1, "projects": {}}


def test_a_damaged_store_records_no_trust(tmp_path: Path) -> None:
    store = approvals_path()
    store.parent.mkdir(parents=True)
    store.write_text('{"projects": {}, "trust": []}')
    assert load_project(tmp_path) == (Approvals(frozenset()), None)


def test_once_recorded_an_approval_wild_did_not_write_is_void(tmp_path: Path) -> None:
    from wild.barriers.approvals import load_project, record_present, remove_void

    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    approve(project, "make before", path=store)
    # Before any agent ran here, every approval counts (a store from an older wild too).
    record_present(project, "in the store when an agent started", path=store)
    approve(project, "make by-the-human", path=store)  # wild --approve during the run
    document = orjson.loads(store.read_bytes())
    key = os.path.realpath(project)
    document["projects"][key].append(command_hash("make forged"))  # the agent's own write
    store.write_bytes(orjson.dumps(document))
    approvals = load_project(project, path=store)[0]
    assert approvals.allows("make before") and approvals.allows("make by-the-human")
    assert not approvals.allows("make forged")
    assert approvals.void == {command_hash("make forged")}
    assert remove_void(project, path=store) == {command_hash("make forged")}
    assert command_hash("make forged") not in orjson.loads(store.read_bytes())["projects"][key]
    assert remove_void(project, path=store) == frozenset()


def test_the_store_is_parsed_again_only_when_its_bytes_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop reads the store as each agent starts and as it ends (`record_present`,
    `remove_void`): bytes this process last parsed are not parsed again (before: two parses
    of every project of the machine per iteration). A forged approval of the same size,
    written with the file's old times put back, is still found: the bytes differ."""
    from types import SimpleNamespace

    from wild.barriers import approvals as approvals_module
    from wild.barriers.approvals import load_project, record_present, remove_void

    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    approve(project, "make before", path=store)
    record_present(project, "in the store when an agent started", path=store)
    parsed: list[bytes] = []

    def counting_loads(data: bytes) -> object:
        parsed.append(data)
        return orjson.loads(data)

    counting = SimpleNamespace(
        loads=counting_loads, dumps=orjson.dumps, JSONDecodeError=orjson.JSONDecodeError,
        OPT_INDENT_2=orjson.OPT_INDENT_2,
    )  # fmt: skip
    monkeypatch.setattr(approvals_module, "orjson", counting)
    for _ in range(5):  # five iterations: the store as each agent starts and ends
        record_present(project, "in the store when an agent started", path=store)
        assert remove_void(project, path=store) == frozenset()
        assert load_project(project, path=store)[0].allows("make before")
    assert len(parsed) <= 1  # at most once (the bytes wild wrote last were not parsed yet)
    parsed.clear()
    # An agent swaps the approved hash for a forged one (in "projects", which comes first;
    # "recorded" still names the old one): same size, same times.
    before = store.stat()
    forged = store.read_bytes().replace(
        command_hash("make before").encode(), command_hash("make forgex").encode(), 1
    )
    store.write_bytes(forged)
    os.utime(store, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert store.stat().st_size == before.st_size
    assert remove_void(project, path=store) == {command_hash("make forgex")}
    assert len(parsed) == 1
    assert not load_project(project, path=store)[0].allows("make forgex")
