"""The bwrap command line `--sandbox` builds (a pure function) and what it protects."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from wild.agents.sandbox import Sandbox, bwrap_argv, confine, protected, sandbox_for
from wild.paths import WildPaths, approvals_path


def _sandbox(tmp_path: Path) -> Sandbox:
    project = tmp_path / "project"
    return Sandbox(
        bwrap="/usr/bin/bwrap",
        project=project,
        state_dir=project / ".wild",
        writable=(Path("/tmp"), tmp_path / "home" / ".claude"),
        read_only=(project / ".wild" / "human-policy.md", tmp_path / "config" / "wild"),
        devices=(Path("/dev/nvidia0"),),
        locks=(project / ".wild" / ".lock",),
    )


def test_read_only_parts_are_mounted_after_the_writable_ones_that_hold_them(
    tmp_path: Path,
) -> None:
    box = _sandbox(tmp_path)
    project, home, config = tmp_path / "project", tmp_path / "home", tmp_path / "config"
    assert bwrap_argv(box, ["/bin/agent", "-p", "a prompt"]) == [
        "/usr/bin/bwrap",
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"),
        *("--dev-bind-try", "/dev/nvidia0", "/dev/nvidia0"),
        *("--bind-try", "/tmp", "/tmp"),
        *("--bind-try", f"{home}/.claude", f"{home}/.claude"),
        *("--bind", str(project), str(project)),
        *("--bind", f"{project}/.wild", f"{project}/.wild"),
        *("--ro-bind-try", f"{project}/.wild/human-policy.md", f"{project}/.wild/human-policy.md"),
        *("--ro-bind-try", f"{config}/wild", f"{config}/wild"),
        *("--dev-bind", "/dev/null", f"{project}/.wild/.lock"),
        *("--unshare-pid", "--die-with-parent", "--new-session"),
        *("--chdir", str(project), "--", "/bin/agent", "-p", "a prompt"),
    ]


def test_the_policy_checks_state_approvals_and_git_settings_are_protected(tmp_path: Path) -> None:
    paths = WildPaths(tmp_path / ".wild")
    root = paths.root.resolve()
    found = protected(paths, tmp_path / "config" / "wild")
    for path in (paths.policy, paths.checks, paths.state, paths.events, paths.logs, paths.runs):
        assert root / path.name in found
    assert tmp_path / "config" / "wild" in found
    assert {tmp_path / ".git" / "config", tmp_path / ".git" / "hooks"} <= set(found)
    assert root / paths.tasks.name not in found  # the agent's to write


def test_without_a_sandbox_the_command_is_unchanged(tmp_path: Path) -> None:
    assert confine(None, ["agent", "x"], tmp_path, "/nowhere") == ("agent", "x")


def test_the_agent_is_found_outside_the_sandbox_as_exec_would(tmp_path: Path) -> None:
    agent = tmp_path / "bin" / "agent"
    agent.parent.mkdir()
    agent.write_text("#!/bin/sh\n")
    agent.chmod(0o755)
    argv = confine(_sandbox(tmp_path), ["agent", "x"], tmp_path, str(agent.parent))
    assert argv[0] == "/usr/bin/bwrap" and argv[-3:] == ("--", str(agent), "x")
    with pytest.raises(FileNotFoundError) as missing:
        confine(_sandbox(tmp_path), ["nosuch"], tmp_path, str(agent.parent))
    assert missing.value.errno == errno.ENOENT


def test_sandbox_for_claude_keeps_its_own_files_writable_and_the_store_read_only(
    tmp_path: Path, _isolated_home: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text("#!/bin/sh\n")
    (bin_dir / "bwrap").chmod(0o755)
    extra = tmp_path / "cache"
    environ = {
        "HOME": str(_isolated_home),
        "PATH": str(bin_dir),
        "WILD_SANDBOX_WRITABLE": f"{extra}:",
    }
    (tmp_path / "project" / ".wild").mkdir(parents=True)
    box = sandbox_for(WildPaths(tmp_path / "project" / ".wild"), "claude", environ)
    assert box.bwrap == str(bin_dir / "bwrap")
    assert box.writable == (
        Path("/tmp"),
        _isolated_home / ".claude",
        _isolated_home / ".claude.json",
        extra,
    )
    # Claude Code cannot make ~/.claude in a read-only home, nor anyone approvals.json.
    assert (_isolated_home / ".claude").is_dir()
    assert approvals_path().parent.is_dir()
    assert approvals_path().parent.resolve() in box.read_only
    # The locks its own `wild` commands take exist, to be replaced by /dev/null.
    root = tmp_path / "project" / ".wild"
    assert box.locks == (approvals_path().parent.resolve() / "approvals.json.lock", root / ".lock")
    assert all(lock.is_file() for lock in box.locks)
