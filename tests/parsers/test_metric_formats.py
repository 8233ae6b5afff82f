"""The metric decoders: every format read from bytes, appended reads equal to a full read,
and no input (garbage included) ever raises."""

from __future__ import annotations

import math
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from wild.parsers.metric_formats import (
    CsvDecoder,
    Decoder,
    JsonLinesDecoder,
    Sample,
    TfEventsDecoder,
    diverged,
    final_numbers,
    masked_crc32c,
    trainer_state,
)


def _all(decoder: Decoder, chunks: list[bytes]) -> list[Sample]:
    return [s for chunk in chunks for s in decoder.feed(chunk).samples]


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def test_jsonl_keeps_every_key_of_every_line_nan_and_inf_included() -> None:
    data = (
        b'{"step": 1, "loss": 2.0}\n{"step": 2, "eval_acc": 0.5}\n'
        b'{"step": 3, "loss": NaN, "lr": Infinity}\nnot json\n[1]\n{"step": 4, "lo'
    )
    out = JsonLinesDecoder().feed(data)
    assert [(s.key, s.step) for s in out.samples] == [
        ("loss", 1), ("eval_acc", 2), ("loss", 3), ("lr", 3),
    ]  # fmt: skip
    assert math.isnan(out.samples[2].value) and out.samples[3].value == math.inf
    assert out.problems == [
        "metrics.jsonl:4: not valid JSON; line skipped",
        "metrics.jsonl:5: not a JSON object; line skipped",
    ]


def test_csv_reads_sparse_rows_at_their_step() -> None:
    # As Lightning's CSVLogger writes it: train and validation keys on different rows.
    data = b"epoch,step,train_loss,val_loss\n0,9,0.7,\n0,9,,0.6\n1,19,nan,\n"
    samples = CsvDecoder().feed(data).samples
    assert [(s.key, s.step) for s in samples] == [
        ("train_loss", 9), ("val_loss", 9), ("train_loss", 19),
    ]  # fmt: skip
    assert diverged(samples[2].value)


def test_trainer_state_reads_log_history_and_max_steps() -> None:
    data = (
        b'{"global_step": 4, "max_steps": 10, "log_history": ['
        b'{"step": 2, "epoch": 0.5, "loss": 1.5, "learning_rate": 0.01},'
        b'{"step": 4, "epoch": 1.0, "eval_loss": 1.2, "eval_accuracy": 0.4}]}'
    )
    out = trainer_state(data)
    assert [(s.key, s.step, s.value) for s in out.samples] == [
        ("loss", 2, 1.5), ("learning_rate", 2, 0.01),
        ("eval_loss", 4, 1.2), ("eval_accuracy", 4, 0.4),
    ]  # fmt: skip
    assert out.total_steps == 10
    assert trainer_state(b'{"log_hist').problems


def test_metrics_json_is_the_final_numbers() -> None:
    assert final_numbers(b'{"final_accuracy": 0.9, "name": "x", "loss": NaN}').final.keys() == {
        "final_accuracy",
        "loss",
    }
    assert final_numbers(b"{oops").problems == [
        "metrics.json: not valid JSON; its final numbers are not read"
    ]


def _record(data: bytes) -> bytes:
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc32c(length)) + data + b"\0\0\0\0"


def _event(step: int, tag: str, value: float) -> bytes:
    tag_bytes = tag.encode()
    summary_value = (
        b"\x0a" + bytes([len(tag_bytes)]) + tag_bytes + b"\x15" + struct.pack("<f", value)
    )
    summary = b"\x0a" + bytes([len(summary_value)]) + summary_value
    return b"\x10" + bytes([step]) + b"\x2a" + bytes([len(summary)]) + summary


def test_masked_crc32c_matches_the_known_value() -> None:
    # CRC-32C of "123456789" is 0xE3069283 (RFC 3720); masked as TFRecord masks it.
    crc = 0xE3069283
    assert masked_crc32c(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_tfevents_reads_scalars_and_waits_for_a_torn_record() -> None:
    data = _record(_event(1, "loss", 0.5)) + _record(_event(2, "loss", math.nan))
    decoder = TfEventsDecoder()
    first = decoder.feed(data[:-3])
    assert [(s.key, s.step, s.value) for s in first.samples] == [("loss", 1, 0.5)]
    second = decoder.feed(data[-3:])
    assert len(second.samples) == 1 and diverged(second.samples[0].value)


def test_tfevents_garbage_framing_is_one_problem_and_stops() -> None:
    out = TfEventsDecoder().feed(b"\x05" * 40)
    assert out.samples == [] and len(out.problems) == 1
    assert "length check failed" in out.problems[0]


_LINES = st.lists(
    st.one_of(
        st.builds(
            lambda s, v: f'{{"step": {s}, "loss": {v}}}',
            st.integers(0, 10**6),
            st.sampled_from(["1.5", "NaN", "-Infinity", "0"]),
        ),
        st.text(max_size=20).map(lambda t: t.replace("\n", " ")),
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(_LINES, st.lists(st.integers(0, 400), max_size=6))
def test_jsonl_appended_reads_equal_a_full_read(lines: list[str], cuts: list[int]) -> None:
    data = "".join(line + "\n" for line in lines).encode()
    whole = JsonLinesDecoder().feed(data).samples
    assert repr(_all(JsonLinesDecoder(), _split(data, cuts))) == repr(whole)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 200), st.floats(width=32)), max_size=10),
    st.lists(st.integers(0, 2000), max_size=6),
)
def test_tfevents_appended_reads_equal_a_full_read(
    points: list[tuple[int, float]], cuts: list[int]
) -> None:
    data = b"".join(_record(_event(step % 128, "m", value)) for step, value in points)
    whole = TfEventsDecoder().feed(data).samples
    assert len(whole) == len(points)
    assert repr(_all(TfEventsDecoder(), _split(data, cuts))) == repr(whole)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(alphabet="ab,1.n\n", max_size=30), max_size=8),
    st.lists(st.integers(0, 300), max_size=6),
)
def test_csv_appended_reads_equal_a_full_read(rows: list[str], cuts: list[int]) -> None:
    data = ("step,a,b\n" + "".join(r + "\n" for r in rows)).encode()
    whole = CsvDecoder().feed(data).samples
    assert repr(_all(CsvDecoder(), _split(data, cuts))) == repr(whole)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600), st.lists(st.integers(0, 600), max_size=4))
def test_garbage_never_raises(data: bytes, cuts: list[int]) -> None:
    for decoder in (JsonLinesDecoder(), CsvDecoder(), TfEventsDecoder()):
        _all(decoder, _split(data, cuts))
    trainer_state(data)
    final_numbers(data)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300))
def test_garbage_inside_a_well_framed_record_never_raises(payload: bytes) -> None:
    out = TfEventsDecoder().feed(_record(payload))
    assert len(out.problems) <= 1
