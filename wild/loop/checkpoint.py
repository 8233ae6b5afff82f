"""Optional git checkpoints (`--checkpoint-every N`): every N iterations, commit what the
loop's iterations changed in the project, and nothing else.

What was already changed when the loop started is the human's and stays out; so does
`.wild/` (the loop's own state). A repository with changes staged by someone else is never
committed in: the checkpoint is skipped and says why. Git's own hooks run as usual; a commit
that fails is undone from the index. Every outcome is a line in events.log.
"""

from __future__ import annotations

import os
from pathlib import Path

from wild.process import ProcessResult, run_captured
from wild.record import record

GIT_TIMEOUT_S = 120.0


@record
class Checkpointed:
    """How one checkpoint went: `commit` is the new commit's id, or None with `reason`."""

    commit: str | None
    paths: tuple[str, ...] = ()
    reason: str = ""


NO_BASELINE = Checkpointed(None, reason="the loop took no baseline at its start")


def git(project: Path, *args: str) -> ProcessResult:
    """Run git in `project`, with no GIT_* variable of ours (a hook's) steering it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return run_captured(["git", *args], timeout_s=GIT_TIMEOUT_S, cwd=project, env=env)


def repository_top(project: Path) -> Path | None:
    """The top of the git work tree holding `project`, or None (not one, or no git)."""
    try:
        result = git(project, "rev-parse", "--show-toplevel")
    except OSError:
        return None
    top = result.output.strip()
    return Path(top) if result.exit_code == 0 and top else None


def changed_paths(top: Path) -> frozenset[str]:
    """The paths git sees as changed or new, relative to the work tree's top."""
    result = git(top, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    return parse_porcelain(result.output) if result.exit_code == 0 else frozenset()


def parse_porcelain(output: str) -> frozenset[str]:
    """The paths of `git status --porcelain=v1 -z` (a rename's old path too)."""
    fields = output.split("\0")
    paths: set[str] = set()
    index = 0
    while index < len(fields):
        entry = fields[index]
        index += 1
        if len(entry) < 4:
            continue
        paths.add(entry[3:])
        if entry[0] in "RC":  # renamed or copied: the original path follows
            if index < len(fields) and fields[index]:
                paths.add(fields[index])
            index += 1
    return frozenset(paths)


def to_commit(changed: frozenset[str], at_start: frozenset[str], state_dir: str) -> list[str]:
    """What a checkpoint commits: changed now, not changed when the loop started, and not the
    loop's own state folder."""
    prefix = state_dir.rstrip("/") + "/"
    return sorted(p for p in changed - at_start if p != state_dir and not p.startswith(prefix))


@record
class Baseline:
    """What the repository looked like when the loop started."""

    top: Path | None  # None: not a git work tree
    changed: frozenset[str] = frozenset()  # the human's changes then: never checkpointed
    state_dir: str = ".wild"  # the loop's state folder, relative to `top`


def baseline(project: Path, state_root: Path) -> Baseline:
    top = repository_top(project)
    if top is None:
        return Baseline(None)
    state_dir = os.path.relpath(state_root.resolve(), top.resolve())
    return Baseline(top, changed_paths(top), state_dir)


def checkpoint(start: Baseline, message: str) -> Checkpointed:
    """Commit the loop's changes since it started, if the repository allows it."""
    top = start.top
    if top is None:
        return Checkpointed(None, reason="not a git repository (or git is missing)")
    staged = git(top, "diff", "--cached", "--quiet")
    if staged.exit_code != 0:
        return Checkpointed(None, reason="the index holds staged changes that are not wild's")
    paths = to_commit(changed_paths(top), start.changed, start.state_dir)
    if not paths:
        return Checkpointed(None, reason="nothing changed since the last checkpoint")
    added = git(top, "add", "-A", "--", *paths)
    if added.exit_code == 0:
        done = git(top, "commit", "--quiet", "-m", message)
        if done.exit_code == 0:
            head = git(top, "rev-parse", "HEAD").output.strip()
            return Checkpointed(head, tuple(paths))
        reason = (done.stderr or done.output).strip().splitlines()[-1:] or ["git commit failed"]
    else:
        reason = (added.stderr or added.output).strip().splitlines()[-1:] or ["git add failed"]
    git(top, "reset", "--quiet", "--", *paths)  # leave the index as it was
    return Checkpointed(None, reason=reason[0])
