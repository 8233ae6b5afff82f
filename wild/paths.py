"""Where each `.wild/` file lives; one place so no module spells a file name twice."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from wild.procfs import real_folder
from wild.record import record

DEFAULT_DIR = ".wild"
_PACKAGE = Path(__file__).resolve().parent


def shipped(source: str, packaged: str) -> Path:
    """A folder wild ships whose one source is `source` at the top of the checkout: the wheel
    carries it as `wild/shipped/<packaged>` (setup.py copies it there); an editable install
    (`pip install -e .`) reads it in place."""
    inside = _PACKAGE / "shipped" / packaged
    return inside if inside.is_dir() else _PACKAGE.parent / source


# The initial files of `wild --init`.
TEMPLATES_DIR = shipped("templates/.wild", "templates/.wild")
# The check scripts shipped with wild, offered to every barrier and completion check as
# $WILD_CHECKS. They live in wild's installed package, outside any project, so an agent
# confined to the project cannot change what an approved `"$WILD_CHECKS/…"` command runs.
CHECKS_ENV = "WILD_CHECKS"
CHECK_SCRIPTS_DIR = shipped("scripts/check_barriers", "check_barriers")
# The research story `wild demo` runs.
DEMO_STORY_DIR = shipped("examples/rl-training", "examples/rl-training")
# The story kit: the scripted story agent and the stories' analyses (story code, shipped as
# data beside the demo story rather than as part of the `wild` package).
STORY_KIT_DIR = shipped("examples/wild_stories", "examples/wild_stories")


def approvals_path() -> Path:
    """`$XDG_CONFIG_HOME/wild/approvals.json`, `~/.config/wild/approvals.json` by default: the
    human's approvals and recorded trust, outside every project (`wild.barriers.approvals`)."""
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return _approvals_in(config)


@functools.lru_cache(maxsize=8)
def _approvals_in(config: str) -> Path:
    # Kept per folder: asked several times per loop iteration (the approval store, the totals
    # ledger), each a Path made from strings again.
    return Path(config) / "wild" / "approvals.json"


@functools.lru_cache(maxsize=8)
def _parent_of(real: str) -> Path:
    # Kept per real path: the project is asked ~6 times an iteration, each a Path to parse.
    return Path(real).parent


def store_lock(store: Path) -> Path:
    """The lock a store's writers take: `approvals.json.lock` beside `approvals.json`."""
    return store.with_name(store.name + ".lock")


@record
class WildPaths:
    """Paths of the state files under one `.wild/` folder, each made once per instance
    (`functools.cached_property`: the loop asks ~45 times an iteration, and each `root / name`
    was a new Path to parse and format: ~0.15 ms of the gap, issue 22 item 8). `replace` makes
    a new instance with none kept (`wild.record`)."""

    root: Path

    @classmethod
    def resolve(cls, explicit: str | os.PathLike[str] | None = None) -> WildPaths:
        """`--dir` wins, then `WILD_DIR`, then `./.wild`."""
        chosen = explicit if explicit is not None else os.environ.get("WILD_DIR") or DEFAULT_DIR
        return cls(Path(chosen))

    @property
    def project(self) -> Path:
        """The folder the agent works in: the one holding `.wild/` (its real path: the
        kernel's answer, `real_path`, not an lstat per folder as `Path.resolve` makes; asked
        ~6 times per loop iteration, resolved once per loop step: `procfs.real_folder`)."""
        return _parent_of(real_folder(self.root))

    @functools.cached_property
    def lock(self) -> Path:
        return self.root / ".lock"

    @functools.cached_property
    def tasks(self) -> Path:
        return self.root / "tasks.md"

    @functools.cached_property
    def alerts(self) -> Path:
        return self.root / "alerts.jsonl"

    @functools.cached_property
    def alerts_summary(self) -> Path:
        """A cache of alerts.jsonl for read commands (`wild.store.alerts_summary`)."""
        return self.root / "alerts.summary.json"

    @functools.cached_property
    def runs_summary(self) -> Path:
        """A cache of runs.jsonl for `wild --status` (`wild.store.runs_summary`)."""
        return self.root / "runs.summary.json"

    @functools.cached_property
    def runs_listing(self) -> Path:
        """`wild --runs`' rows, patched from new lines (`wild.commands.runs_listing`)."""
        return self.root / "runs.listing.json"

    @functools.cached_property
    def runs_view(self) -> Path:
        """The last `wild --runs` table, while runs.jsonl stands (`wild.commands.runs_listing`)."""
        return self.root / "runs.view.json"

    @functools.cached_property
    def runs_json_view(self) -> Path:
        """The last `wild --runs --json`, while runs.jsonl stands (`wild.commands.runs_listing`)."""
        return self.root / "runs.json-view.json"

    @functools.cached_property
    def metrics_cache(self) -> Path:
        """Each run's metrics summary, kept while its files stand (`wild.metrics.kept`)."""
        return self.root / "metrics.cache.json"

    @functools.cached_property
    def status_cache(self) -> Path:
        """The last status's parts, for the next `wild --status` (`wild.commands.status_cache`)."""
        return self.root / "status.cache.json"

    @functools.cached_property
    def work_cache(self) -> Path:
        """The last work queue, for the next `wild --list-work` (`wild.commands.status_cache`)."""
        return self.root / "work.cache.json"

    @functools.cached_property
    def backup(self) -> Path:
        """The last good copies of tasks.md (`wild.store.tasks_backup`)."""
        return self.root / "backup"

    @functools.cached_property
    def alerts_archive(self) -> Path:
        return self.root / "alerts.archive.jsonl"

    @functools.cached_property
    def barriers(self) -> Path:
        return self.root / "barriers.md"

    @functools.cached_property
    def policy(self) -> Path:
        return self.root / "human-policy.md"

    @functools.cached_property
    def human(self) -> Path:
        return self.root / "human.md"

    @functools.cached_property
    def state(self) -> Path:
        return self.root / "state.json"

    @functools.cached_property
    def events(self) -> Path:
        return self.root / "events.log"

    @functools.cached_property
    def checks(self) -> Path:
        return self.root / "checks.md"

    @functools.cached_property
    def logs(self) -> Path:
        return self.root / "logs"

    @functools.cached_property
    def prompts(self) -> Path:
        return self.root / "prompts"

    @functools.cached_property
    def control(self) -> Path:
        return self.root / "control"

    @functools.cached_property
    def webhook_seen(self) -> Path:
        """Signatures and delivery ids the webhook spent within its replay window."""
        return self.root / "webhook-seen.jsonl"

    @functools.cached_property
    def runs_log(self) -> Path:
        """runs.jsonl: the sweeps and runs (SPEC §7)."""
        return self.root / "runs.jsonl"

    @functools.cached_property
    def runs(self) -> Path:
        """One folder per run: `runs/<run-id>/` with log, exit, metrics.jsonl."""
        return self.root / "runs"

    def run_dir(self, run_id: str) -> Path:
        return self.runs / run_id
