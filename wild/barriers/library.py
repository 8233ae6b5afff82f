"""The check scripts shipped with wild (`wild/check_scripts/`), offered to checks as $WILD_CHECKS.

They live in wild's installed package, outside any project, so an agent confined to the project
cannot change what an approved `"$WILD_CHECKS/…"` command runs.
"""

from __future__ import annotations

from pathlib import Path

CHECKS_ENV = "WILD_CHECKS"
CHECK_SCRIPTS_DIR = Path(__file__).resolve().parent.parent / "check_scripts"
