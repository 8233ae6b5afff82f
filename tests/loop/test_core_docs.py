"""docs/architecture.md names the loop's modules, events and actions as the code has them, so a
newcomer can find the module that owns each from the document alone."""

from __future__ import annotations

import re
import tomllib
import typing
from pathlib import Path

from wild.loop import model

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
CORE_CONTRACT = "The loop's core (model, events, actions, decide) does no I/O"


def _table_after(heading: str) -> list[list[str]]:
    """The rows of the first Markdown table after `heading`, each a list of its cells."""
    rest = DOC[DOC.index(heading) :]
    lines = rest.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("|"))
    rows: list[list[str]] = []
    for line in lines[start + 2 :]:  # past the header and its |---| line
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
        rows.append([cell.strip() for cell in cells])
    return rows


def _named(cell: str) -> set[str]:
    return set(re.findall(r"`([\w.]+)`", cell))


def _module_names(heading: str) -> set[str]:
    return {name for row in _table_after(heading) for name in _named(row[0])}


def _core_contract() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    modules: list[str] = next(c for c in contracts if c["name"] == CORE_CONTRACT)["source_modules"]
    return modules


def test_the_core_and_driver_tables_name_every_loop_module_once() -> None:
    core = _module_names("**The core**")
    driver = _module_names("**The driver**")
    on_disk = {p.name for p in (ROOT / "wild" / "loop").glob("*.py") if p.name != "__init__.py"}
    assert not core & driver
    assert core | driver == on_disk


def test_the_core_table_is_the_no_io_contracts_list() -> None:
    contract = {name.removeprefix("wild.loop.") + ".py" for name in _core_contract()}
    assert _module_names("**The core**") == contract


def _documented(heading: str) -> dict[str, str]:
    rows = _table_after(heading)
    return {row[0].strip("`"): row[1].strip("`") for row in rows}


def _in_code(union: object) -> dict[str, str]:
    return {
        kind.__name__: kind.__module__.rsplit(".", 1)[-1] + ".py" for kind in typing.get_args(union)
    }


def test_the_events_table_is_the_code_s() -> None:
    assert _documented("| event | module |") == _in_code(model.Event)


def test_the_actions_table_is_the_code_s() -> None:
    assert _documented("| action | module |") == _in_code(model.Action)
