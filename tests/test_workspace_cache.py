"""A long-lived reader's ParseCache: a file is parsed again only when its stat signature moves."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from tests.cli_support import init_wild_dir
from wild.paths import WildPaths
from wild.workspace import ParseCache, load_workspace

NOW = datetime(2026, 11, 25, 20, 0, tzinfo=UTC)


def test_an_unchanged_file_is_not_parsed_again_and_a_changed_one_is(tmp_path: Path) -> None:
    paths = WildPaths(init_wild_dir(tmp_path))
    paths.tasks.write_text("- [ ] [P1] task-001: Train\n")
    cache = ParseCache()
    first = load_workspace(paths, NOW, cache)
    second = load_workspace(paths, NOW, cache)
    assert second.tasks is first.tasks and second.barriers is first.barriers
    paths.tasks.write_text("- [x] [P1] task-001: Train\n- [ ] [P2] task-002: Report\n")
    third = load_workspace(paths, NOW, cache)
    assert [t.status for t in third.tasks.tasks] == ["complete", "todo"]
    assert third.barriers is first.barriers  # only the changed file was read again
    # A same-size rewrite in the same instant with a new inode (a rename save) is seen too.
    replacement = paths.root / "tasks.new"
    replacement.write_text("- [/] [P1] task-001: Train\n- [ ] [P2] task-002: Report\n")
    os.replace(replacement, paths.tasks)
    assert load_workspace(paths, NOW, cache).tasks.tasks[0].status == "in-progress"
    assert load_workspace(paths, NOW).tasks == load_workspace(paths, NOW, cache).tasks
