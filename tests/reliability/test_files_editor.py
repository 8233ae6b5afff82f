"""A real editor (vim -es, in place and by rename), an agent process and wild's own writers on
one tasks.md for 1,000 colliding rounds: no update lost, none written twice (issue 9).

The figures are printed (`pytest -s`); `soak_files_editor.py` runs more rounds by hand, on
the disk and with wild's own settle time throughout. Here the folder is on tmpfs when there
is one (fsync is free there): this test is about who wins a collision, not durability, which
`tests/store/test_files.py` tests with kill -9 on disk.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.files_editor_rounds import inode_changes_on_rename_save, play_all

ROUNDS = 1000
VIM_EVERY = 8  # 125 vim rounds (~20 ms each); the agent process takes the others
TORN_EVERY = 16  # each waits out wild's settle time (20 ms)
FAST_SETTLE_S = 0.001


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    shm = Path("/dev/shm")
    if not shm.is_dir():
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(dir=shm, prefix="wild-files-editor-") as name:
        yield Path(name)


def test_vim_is_installed() -> None:
    assert shutil.which("vim") is not None, (
        "vim is not installed; the editor reliability test needs a real vim "
        "(apt-get install -y vim-tiny); .ci/run installs it"
    )


def test_vim_saves_by_rename_when_told(folder: Path) -> None:
    assert inode_changes_on_rename_save(folder)


def test_no_update_is_lost_in_1000_colliding_rounds(folder: Path) -> None:
    figures = play_all(
        folder, ROUNDS, vim_every=VIM_EVERY, torn_every=TORN_EVERY, fast_settle_s=FAST_SETTLE_S
    )
    print(f"\n{figures}")
    assert figures.rounds == ROUNDS
    assert figures.vim_in_place + figures.vim_rename == ROUNDS // VIM_EVERY
    # Every collision after wild's read made it compute its edit again.
    assert figures.reapplied >= figures.by_moment["read"] + figures.by_moment["swap"]
