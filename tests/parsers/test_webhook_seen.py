"""`.wild/webhook-seen.jsonl` lines: round trip, latest window wins, garbage never crashes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from wild.parsers.webhook_seen import encode, live, parse, render


def test_a_line_is_one_json_object() -> None:
    assert encode("sig:ab", 1770545100) == b'{"key":"sig:ab","until":1770545100}\n'


def test_the_latest_window_of_a_key_wins_and_garbage_is_skipped() -> None:
    data = (
        encode("a", 10)
        + b"not json\n"
        + b"[1]\n"
        + b'{"key": 5, "until": 1}\n'
        + b'{"key": "b", "until": true}\n'
        + encode("a", 5)
        + encode("c", 7)
        + b'{"key": "torn", "unt'
    )
    assert parse(data) == {"a": 10.0, "c": 7.0}


def test_live_keeps_keys_whose_window_is_open() -> None:
    assert live({"a": 10.0, "b": 9.0}, now=10) == {"a": 10.0}


keys = st.dictionaries(st.text(max_size=12), st.integers(0, 2**40).map(float), max_size=8)


@given(keys)
def test_render_then_parse_is_identity(spent: dict[str, float]) -> None:
    assert parse(render(spent)) == spent


@given(st.binary(max_size=300))
def test_garbage_never_crashes(data: bytes) -> None:
    for key, until in parse(data).items():
        assert isinstance(key, str) and isinstance(until, float)
