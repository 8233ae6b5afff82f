"""`--sandbox`: each agent run under bubblewrap, unable to change what decides what runs.

Without it the agent runs as the user, as wild does, and can do whatever the user can (see the
threat model in docs/reliability.md). Under `bwrap` the whole filesystem is read-only to the
agent except the project, `/tmp` and the agent CLI's own files (its login and sessions); inside
the project, the human's policy and checks and wild's own state stay read-only, and so does
the approval store. The agent gets a PID namespace of its own, so it can neither see, signal
nor ptrace the loop, and a session of its own, so it has no terminal to type into. The network
is shared: agents call their model's API.

A file is protected by a read-only mount on its own name, inside the writable `.wild/` (the
agent's tools save tasks.md by writing a copy and renaming it, so the folder must stay
writable). When someone outside replaces such a file during the run (wild rewriting
state.json, a human's editor saving the policy), the kernel drops that mount in the agent's
view for the rest of the run: those files are guarded from then on only by the checks that
hold for any agent (the trust guard, checks held, the ledgers). Folders (the approval store,
logs/, runs/, backup/, .git/hooks) stay read-only whatever happens inside them.

`bwrap_argv` is a pure function (paths in, argv out); `sandbox_for` and `require_bwrap` are the
thin effects around it (where the home is, which GPUs exist, whether bwrap works here).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from wild.agents import orphans
from wild.errors import WildError
from wild.paths import WildPaths, approvals_path, store_lock
from wild.record import record

BWRAP = "bwrap"
INSTALL = "install it (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)"
# What every sandbox does, whatever it binds: probed once before the loop starts.
ISOLATION = ("--unshare-pid", "--die-with-parent", "--new-session")
BASE = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
PROBE_TIMEOUT_S = 30.0
# Extra folders the agent may write (a package cache, a toolchain), separated by ':'.
WRITABLE_ENV = "WILD_SANDBOX_WRITABLE"
# Where each agent CLI keeps its login, settings and sessions, relative to the home ("/": a
# folder, made when missing, since the CLI cannot make it in the read-only home). Claude Code
# without a writable ~/.claude cannot run its tools (tested: `EROFS … mkdir ~/.claude`).
AGENT_FILES: dict[str, tuple[str, ...]] = {
    "claude": (".claude/", ".claude.json"),
    "opencode": (".config/opencode/", ".local/share/opencode/", ".local/state/opencode/"),
    "codex": (".codex/",),
    "gemini": (".gemini/",),
    "copilot": (".copilot/",),
    "cursor-agent": (".cursor/", ".config/cursor/"),
    "aider": (".aider/",),
}
# Host devices kept in the sandbox's fresh /dev: the GPUs a training run needs.
DEVICE_PATTERNS = ("/dev/nvidia*", "/dev/dri", "/dev/kfd")


@record
class Sandbox:
    """What one sandboxed agent run may write, and what stays read-only inside that."""

    bwrap: str
    project: Path
    state_dir: Path  # `.wild/`: bound on itself, so the agent cannot rename it away
    writable: tuple[Path, ...]  # besides the project: /tmp, the agent CLI's own files
    read_only: tuple[Path, ...]  # inside the writable parts; a missing one is skipped
    devices: tuple[Path, ...] = ()
    # Lock files the agent's own `wild` commands open (they must exist): the agent gets
    # /dev/null in their place, so holding one cannot stall the loop or the human's approval.
    # Its commands still exclude each other (one /dev/null); against wild's writers, the
    # compare-and-swap every writer outside wild meets (docs/formats.md) keeps its edits.
    locks: tuple[Path, ...] = ()


def protected(paths: WildPaths, approvals_dir: Path) -> tuple[Path, ...]:
    """What the agent may read but never change: the human's policy and checks, wild's own
    state and records, the approval store, and the git settings that make a later `git` run
    commands outside the sandbox (hooks, `core.fsmonitor`)."""
    root = paths.root.resolve()
    git = paths.project / ".git"
    return (
        root / paths.policy.name,
        root / paths.checks.name,
        root / paths.state.name,
        root / paths.events.name,
        root / "loop.lock",
        root / paths.control.name,
        root / paths.webhook_seen.name,
        root / paths.runs_log.name,
        root / paths.runs.name,
        root / paths.logs.name,
        root / paths.backup.name,
        approvals_dir,
        git / "config",
        git / "hooks",
    )


def bwrap_argv(sandbox: Sandbox, argv: Sequence[str]) -> list[str]:
    """`argv` run under bwrap as `sandbox` says. Later mounts cover earlier ones, so the order
    is: all read-only, then the writable parts, then the read-only parts inside them."""
    words = [sandbox.bwrap, *BASE]
    for device in sandbox.devices:
        words += ["--dev-bind-try", str(device), str(device)]
    for path in sandbox.writable:
        words += ["--bind-try", str(path), str(path)]
    for path in (sandbox.project, sandbox.state_dir):
        words += ["--bind", str(path), str(path)]
    for path in sandbox.read_only:
        words += ["--ro-bind-try", str(path), str(path)]
    for path in sandbox.locks:
        words += ["--dev-bind", "/dev/null", str(path)]
    return [*words, *ISOLATION, "--chdir", str(sandbox.project), "--", *argv]


def confine(
    sandbox: Sandbox | None, argv: Sequence[str], cwd: Path, path: str | None
) -> tuple[str, ...]:
    """The command that runs `argv` in `sandbox` (as it is without one). The program is looked
    up here, as exec would, so a missing agent is told as it is without the sandbox."""
    if sandbox is None:
        return tuple(argv)
    found = orphans.find_program(argv[0], cwd, path)
    return tuple(bwrap_argv(sandbox, [str(found), *argv[1:]]))


def sandbox_for(paths: WildPaths, agent: str, environ: Mapping[str, str]) -> Sandbox:
    """The sandbox of one agent run of this loop, from where things are on this machine."""
    import glob  # noqa: PLC0415 (only a sandboxed run looks for devices: not on a loop's start)

    home = Path(environ.get("HOME") or Path.home())
    own = AGENT_FILES.get(agent, ())
    for name in own:
        if name.endswith("/"):
            (home / name).mkdir(parents=True, exist_ok=True)
    extra = [Path(p) for p in environ.get(WRITABLE_ENV, "").split(os.pathsep) if p.strip()]
    store = approvals_path()
    # The store's folder is bound as a whole, so the agent cannot create approvals.json or its
    # project's file under approvals/ where there is none yet; it must exist to be bound, and
    # so must the lock files (wild's own writers would make them anyway).
    store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    locks = (store_lock(store).resolve(), paths.lock.resolve())
    for lock in locks:
        lock.touch(exist_ok=True)
    return Sandbox(
        bwrap=_bwrap(environ),
        project=paths.project,
        state_dir=paths.root.resolve(),
        writable=(
            # Shared, not private: tools write /tmp by name, and TMPDIR may point elsewhere.
            Path("/tmp"),  # noqa: S108
            *([Path(environ["TMPDIR"])] if environ.get("TMPDIR") else []),
            *(home / name for name in own),
            *(p.resolve() for p in extra),
        ),
        read_only=protected(paths, store.parent.resolve()),
        devices=tuple(Path(p) for pattern in DEVICE_PATTERNS for p in sorted(glob.glob(pattern))),
        locks=locks,
    )


def _bwrap(environ: Mapping[str, str]) -> str:
    import shutil  # noqa: PLC0415 (only under --sandbox: not on every launch's way)

    found = shutil.which(BWRAP, path=environ.get("PATH"))
    if found is None:
        raise WildError(f"--sandbox needs bubblewrap: `{BWRAP}` is not on PATH; {INSTALL}")
    return found


def require_bwrap(environ: Mapping[str, str]) -> str:
    """bwrap's path, once a trial sandbox ran `true`; else the one line saying what to install
    or enable. Run before `.wild/` is made or any agent starts."""
    bwrap = _bwrap(environ)
    try:
        trial = subprocess.run(
            [bwrap, *BASE, *ISOLATION, "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise WildError(f"--sandbox: {bwrap} could not be run ({error}); {INSTALL}") from error
    if trial.returncode != 0:
        said = trial.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = said[-1] if said else "no reason given"
        raise WildError(
            f"--sandbox: {bwrap} cannot make a sandbox here ({reason}; exit "
            f"{trial.returncode}); allow unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also "
            "kernel.apparmor_restrict_unprivileged_userns=0) or run wild without --sandbox"
        )
    return bwrap
