"""The wheel ships folders that live at the top of the checkout, each its one source:
`templates/.wild/` (what `wild --init` writes), `scripts/check_barriers/` (the check scripts
offered as `$WILD_CHECKS`), `examples/rl-training/` (the story `wild demo` runs) and
`examples/wild_stories/` (its scripted agent and analysis: story code, not wild's). They are
copied into the package's `shipped/` folder at build time; an editable install reads them in
place (`wild.paths.shipped`). Everything else is in setup.cfg."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

# Folder in the checkout -> folder under wild/shipped/ in the wheel (wild.paths.SHIPPED_FOLDERS).
SHIPPED = {
    "templates/.wild": "templates/.wild",
    "scripts/check_barriers": "check_barriers",
    "examples/rl-training": "examples/rl-training",
    "examples/wild_stories": "examples/wild_stories",
}


class BuildWithShippedFolders(build_py):  # type: ignore[misc]
    """build_py, then the shipped folders copied into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # read in place from the checkout
        here = Path(__file__).resolve().parent
        for source, target in SHIPPED.items():
            destination = Path(self.build_lib) / "wild" / "shipped" / target
            shutil.rmtree(destination, ignore_errors=True)
            shutil.copytree(
                here / source,
                destination,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "results", ".wild"),
            )


setup(cmdclass={"build_py": BuildWithShippedFolders})
