"""The kept `wild --runs` table and `--runs --json` patched in place (`wild.commands.runs_patch`):
a run's line or object replaced exactly as a full draw gives it, or declined."""

from __future__ import annotations

from wild.commands.runs_patch import layout_of, replace_element, replace_row
from wild.commands.runs_table import HEADS, table_text
from wild.output import to_json


def _cells(run_id: str, status: str, params: str) -> list[str]:
    return [run_id, status, "1", "0", "none", "4", "1m", "-", params, "loss=0.1"]


def test_a_line_that_fits_is_replaced_as_a_full_draw_gives_it() -> None:
    rows = [_cells("r1", "finished", "lr=0.1"), _cells("r2", "finished", "lr=0.01")]
    text = table_text(rows, [], ["a problem"])
    layout = layout_of([HEADS, *rows], text, len(text) - len("\nproblem: a problem"))
    assert layout is not None
    rows[0] = _cells("r1", "failed", "lr=0.2")
    patched = replace_row(text, layout, "r1", rows[0])
    assert patched is not None and patched[0] == table_text(rows, [], ["a problem"])


def test_a_line_that_would_move_the_columns_is_declined() -> None:
    rows = [_cells("r1", "finished", "lr=0.1"), _cells("r2", "finished", "lr=0.01")]
    text = table_text(rows, [], [])
    layout = layout_of([HEADS, *rows], text, len(text))
    assert layout is not None
    assert replace_row(text, layout, "r1", _cells("r1", "finished", "lr=0.0001")) is None  # wider
    assert replace_row(text, layout, "r2", _cells("r2", "finished", "lr=1")) is None  # narrower
    assert replace_row(text, layout, "r3", _cells("r3", "finished", "lr=1")) is None  # no line


def test_an_object_is_found_by_its_own_id_not_a_params_id() -> None:
    runs = [
        {"id": "r2", "params": {"id": "r1"}, "status": "finished"},
        {"id": "r1", "params": {"id": "r2"}, "status": "finished"},
    ]
    data = to_json(runs).encode()
    runs[1] = {**runs[1], "status": "failed"}
    patched = replace_element(data, "r1", to_json([runs[1]]).encode())
    assert patched == to_json(runs).encode()
    assert replace_element(data, "r3", to_json([runs[1]]).encode()) is None
