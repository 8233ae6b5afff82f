"""metric_crossed.py: the last (or best) number under a key in a JSON-lines file vs a threshold."""

from __future__ import annotations

import pytest

from tests.check_scripts.conftest import Ran, Scripts

SCRIPT = "metric_crossed.py"
LINES = (
    '{"step": 1, "val_loss": 0.5, "acc": 0.7}\n'
    "not json at all\n"
    '{"step": 2, "val_loss": 0.2, "acc": true}\n'
    '["a list", 1]\n'
    '{"step": 3, "val_loss": 0.3, "acc": "0.99"}\n'
    '{"step": 4, "val_loss": NaN}\n'
    '{"step": 5, "val_lo'  # a writer mid-line
)


@pytest.fixture
def metrics(scripts: Scripts) -> str:
    run = scripts.project / "runs" / "r1"
    run.mkdir(parents=True)
    (run / "metrics.jsonl").write_text(LINES)
    return "runs/r1/metrics.jsonl"


def test_the_last_value_has_not_crossed(scripts: Scripts, metrics: str) -> None:
    assert scripts.run(SCRIPT, metrics, "val_loss", "<", "0.25") == Ran(
        1, "val_loss = 0.3 (last, line 5), waiting for < 0.25"
    )
    assert scripts.run(SCRIPT, metrics, "val_loss", "<=", "0.3") == Ran(
        0, "val_loss = 0.3 (last, line 5) <= 0.3"
    )


def test_the_best_value_has(scripts: Scripts, metrics: str) -> None:
    assert scripts.run(SCRIPT, metrics, "val_loss", "<", "0.25", "best") == Ran(
        0, "val_loss = 0.2 (best, line 3) < 0.25"
    )
    assert scripts.run(SCRIPT, metrics, "val_loss", ">", "0.45", "best") == Ran(
        0, "val_loss = 0.5 (best, line 1) > 0.45"
    )
    assert scripts.run(SCRIPT, metrics, "val_loss", ">=", "0.6", "best") == Ran(
        1, "val_loss = 0.5 (best, line 1), waiting for >= 0.6"
    )


def test_only_numbers_count(scripts: Scripts, metrics: str) -> None:
    # `true` and the string "0.99" are not numbers: line 1 is the last number under acc.
    assert scripts.run(SCRIPT, metrics, "acc", ">", "0.9") == Ran(
        1, "acc = 0.7 (last, line 1), waiting for > 0.9"
    )
    assert scripts.run(SCRIPT, metrics, "reward", ">", "1") == Ran(
        1, f"no line of {metrics} has a number under 'reward' yet"
    )


def test_a_missing_file_is_not_yet(scripts: Scripts) -> None:
    assert scripts.run(SCRIPT, "runs/r9/metrics.jsonl", "loss", "<", "1") == Ran(
        1, "runs/r9/metrics.jsonl does not exist yet"
    )


def test_an_unreadable_or_invalid_file_is_not_yet(scripts: Scripts) -> None:
    (scripts.project / "folder").mkdir()
    assert scripts.run(SCRIPT, "folder", "loss", "<", "1") == Ran(
        1, "cannot read folder: Is a directory"
    )
    (scripts.project / "bytes.jsonl").write_bytes(b'\xff\xfe{"loss": 0.1}\n{"loss": 0.5}\n')
    assert scripts.run(SCRIPT, "bytes.jsonl", "loss", "<", "1").line == (
        "loss = 0.5 (last, line 2) < 1"
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("m", "loss", "<"), "usage: metric_crossed.py FILE KEY OP VALUE [last|best]"),
        (("m", "loss", "=>", "1"), "metric_crossed.py: OP must be one of > >= < <=, not '=>'"),
        (("m", "loss", "<", "low"), "metric_crossed.py: VALUE must be a number, not 'low'"),
        (("m", "loss", "<", "nan"), "metric_crossed.py: VALUE must be a finite number, not 'nan'"),
        (
            ("m", "loss", "<", "1", "worst"),
            "metric_crossed.py: the last argument must be last or best, not 'worst'",
        ),
    ],
)
def test_usage_errors(scripts: Scripts, args: tuple[str, ...], line: str) -> None:
    assert scripts.run(SCRIPT, *args) == Ran(2, line)
