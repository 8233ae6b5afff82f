"""files_exist.py: at least COUNT paths match a glob, relative to the folder it runs in."""

from __future__ import annotations

import pytest

from tests.check_scripts.conftest import Ran, Scripts

SCRIPT = "files_exist.py"


def test_counts_matches_up_to_the_target(scripts: Scripts) -> None:
    out = scripts.project / "out"
    assert scripts.run(SCRIPT, "out/*.ckpt", "2") == Ran(1, "0 of 2 match 'out/*.ckpt'")
    out.mkdir()
    (out / "a.ckpt").write_text("")
    (out / "a.log").write_text("")
    assert scripts.run(SCRIPT, "out/*.ckpt", "2") == Ran(1, "1 of 2 match 'out/*.ckpt'")
    (out / "b.ckpt").write_text("")
    assert scripts.run(SCRIPT, "out/*.ckpt", "2") == Ran(0, "2 match 'out/*.ckpt' (need 2)")


def test_one_file_by_default_and_any_depth_with_two_stars(scripts: Scripts) -> None:
    assert scripts.run(SCRIPT, "runs/**/done") == Ran(1, "0 of 1 match 'runs/**/done'")
    deep = scripts.project / "runs" / "a" / "seed-1"
    deep.mkdir(parents=True)
    (deep / "done").write_text("")
    assert scripts.run(SCRIPT, "runs/**/done") == Ran(0, "1 match 'runs/**/done' (need 1)")


def test_a_plain_path_and_home(scripts: Scripts) -> None:
    (scripts.project / "it's here.flag").write_text("")
    assert scripts.run(SCRIPT, "it's here.flag").code == 0
    assert scripts.run(SCRIPT, "~/it's here.flag").code == 0  # HOME is the project here


@pytest.mark.parametrize(
    ("args", "line"),
    [
        ((), "usage: files_exist.py PATTERN [COUNT]"),
        (("",), "usage: files_exist.py PATTERN [COUNT]"),
        (("a", "1", "b"), "usage: files_exist.py PATTERN [COUNT]"),
        (("a", "-1"), "files_exist.py: COUNT must be a whole number, not '-1'"),
        (("a", "many"), "files_exist.py: COUNT must be a whole number, not 'many'"),
    ],
)
def test_usage_errors(scripts: Scripts, args: tuple[str, ...], line: str) -> None:
    assert scripts.run(SCRIPT, *args) == Ran(2, line)
