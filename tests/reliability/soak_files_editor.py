"""By hand: the editor/agent/wild rounds of `test_files_editor.py`, longer and on the disk,
then the same writers at once with no hook (`files_editor_free.py`).

Run: `PYTHONPATH=. python tests/reliability/soak_files_editor.py [ROUNDS] [VIM_EVERY] [FREE]`
(defaults 5000, 2: half the rounds are vim's, and 1000 vim writes in the free phase). Unlike
the suite it keeps wild's own settle time in every round and works in a folder on the disk
(fsync for real). It prints the figures and exits 1 on the first lost or doubled update.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.reliability.files_editor_free import free_for_all
from tests.reliability.files_editor_rounds import inode_changes_on_rename_save, play_all


def main(argv: list[str]) -> int:
    rounds = int(argv[1]) if len(argv) > 1 else 5000
    vim_every = int(argv[2]) if len(argv) > 2 else 2
    free = int(argv[3]) if len(argv) > 3 else 1000
    with tempfile.TemporaryDirectory(dir=Path.cwd(), prefix=".soak-files-editor-") as name:
        if not inode_changes_on_rename_save(Path(name)):
            print("vim does not save by rename here")
            return 1
    with tempfile.TemporaryDirectory(dir=Path.cwd(), prefix=".soak-files-editor-") as name:
        try:
            figures = play_all(
                Path(name), rounds, vim_every=vim_every, torn_every=8, fast_settle_s=None
            )
        except AssertionError as error:
            print(f"LOST: {error}")
            return 1
    print(figures)
    with tempfile.TemporaryDirectory(dir=Path.cwd(), prefix=".soak-files-editor-") as name:
        try:
            print(free_for_all(Path(name), free))
        except AssertionError as error:
            print(f"LOST (free phase): {error}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
