"""The metric files researchers' trackers write, decoded from bytes into (key, step, value)
samples: wild's `metrics.jsonl` and `metrics.json`, Lightning's `CSVLogger` `metrics.csv`,
Hugging Face's `trainer_state.json` and TensorBoard's `events.out.tfevents.*`.

Pure and incremental: an appended format's decoder is an object fed only the bytes appended
since its last feed (it keeps the torn tail of a line or record for the next feed), so a
live run costs O(what was appended). A rewritten format (`trainer_state.json`,
`metrics.json`) is decoded whole. No decoder raises on any input: what it cannot read is a
problem line naming where, and the rest is kept. NaN and inf are kept as values (a
diverging loss writes them); `diverged` is the one place that calls them divergence.
"""

from __future__ import annotations

import csv
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from wild.parsers.jsonl import loads
from wild.record import record

# Keys that are an axis, not a metric: they give the step and are never a curve of their own.
AXIS_KEYS = frozenset({"step", "global_step", "epoch"})
_MAX_RECORD = 64 * 1024 * 1024  # a TensorBoard record longer than this is garbage, not data


def diverged(value: float) -> bool:
    """Whether a metric value means the run diverged (NaN or ±inf): the one place it is decided."""
    return not math.isfinite(value)


def number(value: object) -> float | None:
    """A JSON or CSV value as a metric value: numbers (NaN and inf included), not booleans."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else None
        except ValueError:
            return None
    return None


@record(slots=True)
class Sample:
    """One logged value: `key` at `step`."""

    key: str
    step: float
    value: float


@dataclass
class Decoded:
    """What one feed gave: samples in file order, problems as one line each, and facts a
    format states about the run (`total_steps`: the step count it plans to reach)."""

    samples: list[Sample] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    total_steps: int | None = None
    final: dict[str, float] = field(default_factory=dict)  # numbers stated as the run's last


class Decoder(Protocol):
    """An appended format's state: fed the new bytes, in order, it yields their samples."""

    def feed(self, data: bytes) -> Decoded: ...


def _object_samples(obj: Mapping[str, Any], fallback_step: float) -> list[Sample]:
    """Every numeric key of one logged object, at its `step` (else `fallback_step`)."""
    raw_step = number(obj.get("step"))
    step = raw_step if raw_step is not None and math.isfinite(raw_step) else fallback_step
    found = []
    for key, raw in obj.items():
        value = json_value(raw)
        if key not in AXIS_KEYS and value is not None:
            found.append(Sample(str(key), step, value))
    return found


def json_value(raw: object) -> float | None:
    """A JSON value as a metric: a number, or the text of NaN or inf (how wild records a
    diverged value, JSON having no number for it); other text is not a metric."""
    value = number(raw)
    if isinstance(raw, str) and value is not None and math.isfinite(value):
        return None
    return value


def _json(raw: bytes) -> Any:
    """A JSON text, NaN and Infinity included (Python's json.dumps writes them for a
    diverging loss); raises ValueError when it is not JSON."""
    return loads(raw, non_finite=True)


class _Lines:
    """Complete lines out of appended bytes; the unfinished last line waits for its end."""

    def __init__(self) -> None:
        self.rest = b""
        self.count = 0  # complete lines given out so far (1-based numbers for problems)

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        text = self.rest + data
        end = text.rfind(b"\n") + 1
        self.rest = text[end:]
        out = []
        for line in text[: end - 1].split(b"\n") if end else []:
            self.count += 1
            out.append((self.count, line.rstrip(b"\r")))
        return out


class JsonLinesDecoder:
    """wild's `metrics.jsonl`: one JSON object per line, every key a metric at its `step`
    (a line without a numeric step is at its line number)."""

    def __init__(self, name: str = "metrics.jsonl") -> None:
        self.name = name
        self._lines = _Lines()

    def feed(self, data: bytes) -> Decoded:
        out = Decoded()
        for number_, line in self._lines.feed(data):
            if not line.strip():
                continue
            try:
                obj = _json(line)
            except (ValueError, RecursionError):
                out.problems.append(f"{self.name}:{number_}: not valid JSON; line skipped")
                continue
            if not isinstance(obj, dict):
                out.problems.append(f"{self.name}:{number_}: not a JSON object; line skipped")
                continue
            out.samples.extend(_object_samples(obj, float(number_)))
        return out


class CsvDecoder:
    """Lightning `CSVLogger`'s `metrics.csv`: a header of every key, each row holding only
    the keys logged at its `step` (the others empty). A rewritten file (the header grew) is
    a new file to the reader, which starts a fresh decoder."""

    def __init__(self, name: str = "metrics.csv") -> None:
        self.name = name
        self._lines = _Lines()
        self._header: list[str] | None = None

    def feed(self, data: bytes) -> Decoded:
        out = Decoded()
        for number_, line in self._lines.feed(data):
            text = line.decode("utf-8", errors="replace")
            if not text.strip():
                continue
            try:
                cells = next(csv.reader([text]))
            except (csv.Error, StopIteration):
                out.problems.append(f"{self.name}:{number_}: not a CSV row; skipped")
                continue
            if self._header is None:
                self._header = [cell.strip() for cell in cells]
                continue
            row = dict(zip(self._header, cells, strict=False))
            step = number(row.get("step"))
            at = step if step is not None and math.isfinite(step) else float(number_ - 1)
            for key, cell in row.items():
                value = number(cell)
                if key not in AXIS_KEYS and value is not None:
                    out.samples.append(Sample(key, at, value))
        return out


class TfEventsDecoder:
    """TensorBoard's `events.out.tfevents.*`: records framed as `u64 length | u32 masked
    crc32c(length) | data | u32 masked crc32c(data)`, each an `Event` protobuf whose
    `summary` holds scalar values (`simple_value`, or a scalar `tensor` as newer writers
    store them). A torn last record waits for its bytes; a framing whose length check fails
    is garbage, and the rest of the file is left unread (no record boundary can be trusted)."""

    def __init__(self, name: str = "events.out.tfevents") -> None:
        self.name = name
        self._rest = b""
        self._broken = False
        self.records = 0

    def feed(self, data: bytes) -> Decoded:
        out = Decoded()
        if self._broken:
            return out
        buffer = self._rest + data
        at = 0
        while len(buffer) - at >= 12:
            (length,) = struct.unpack_from("<Q", buffer, at)
            (length_crc,) = struct.unpack_from("<I", buffer, at + 8)
            if length_crc != masked_crc32c(buffer[at : at + 8]) or length > _MAX_RECORD:
                out.problems.append(
                    f"{self.name}: record {self.records + 1} is not a TensorBoard record "
                    "(length check failed); the rest of the file is not read"
                )
                self._broken = True
                self._rest = b""
                return out
            end = at + 12 + length + 4
            if end > len(buffer):
                break  # torn: the writer is still writing it
            self.records += 1
            try:
                out.samples.extend(event_samples(buffer[at + 12 : at + 12 + length]))
            except (ValueError, IndexError, struct.error, UnicodeDecodeError):
                out.problems.append(f"{self.name}: record {self.records} is not an Event; skipped")
            at = end
        self._rest = buffer[at:]
        return out


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _crc_table()


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC-32C (Castagnoli) of `data` (only the 8-byte lengths are checked:
    a pure-Python CRC of every record would cost more than decoding it)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[at]  # IndexError on a cut varint: the caller skips the record
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift > 70:
            raise ValueError("varint too long")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """A protobuf message's (field number, wire type, value): an int for a varint, the raw
    bytes for a fixed-width or length-delimited field."""
    found: list[tuple[int, int, Any]] = []
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number_, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 1:
            value, at = data[at : at + 8], at + 8
        elif wire == 5:
            value, at = data[at : at + 4], at + 4
        elif wire == 2:
            size, at = _varint(data, at)
            value, at = data[at : at + size], at + size
        else:
            raise ValueError(f"wire type {wire}")
        if at > len(data):
            raise ValueError("message cut short")
        found.append((number_, wire, value))
    return found


def event_samples(event: bytes) -> list[Sample]:
    """The scalar values of one `Event` (step: field 2; summary: field 5)."""
    step = 0
    summaries = []
    for number_, wire, value in _fields(event):
        if number_ == 2 and wire == 0:
            step = value - (1 << 64) if value >= 1 << 63 else value
        elif number_ == 5 and wire == 2:
            summaries.append(value)
    samples = []
    for summary in summaries:
        for number_, wire, value in _fields(summary):
            if number_ == 1 and wire == 2:
                found = _summary_value(value)
                if found is not None:
                    samples.append(Sample(found[0], float(step), found[1]))
    return samples


def _summary_value(data: bytes) -> tuple[str, float] | None:
    """A `Summary.Value`'s tag and scalar: `simple_value` (2) or a scalar `tensor` (8)."""
    tag: str | None = None
    value: float | None = None
    for number_, wire, raw in _fields(data):
        if number_ == 1 and wire == 2:
            tag = raw.decode("utf-8", errors="replace")
        elif number_ == 2 and wire == 5:
            value = struct.unpack("<f", raw)[0]
        elif number_ == 8 and wire == 2:
            value = _scalar_tensor(raw)
    return (tag, value) if tag is not None and value is not None else None


_FLOAT, _DOUBLE, _INT32, _INT64 = 1, 2, 3, 9  # TensorFlow's DataType numbers
_WIDTHS = {_FLOAT: "<f", _DOUBLE: "<d", _INT32: "<i", _INT64: "<q"}


def _scalar_tensor(data: bytes) -> float | None:
    """A `TensorProto` holding one number: `tensor_content` (4) or a `*_val` field."""
    dtype, content = _FLOAT, b""
    values: list[float] = []
    for number_, wire, raw in _fields(data):
        if number_ == 1 and wire == 0:
            dtype = int(raw)
        elif number_ == 4 and wire == 2:
            content = raw
        elif number_ in (5, 6) and wire == 2:  # packed float_val / double_val
            fmt = "<f" if number_ == 5 else "<d"
            size = struct.calcsize(fmt)
            values += [v for (v,) in struct.iter_unpack(fmt, raw[: len(raw) // size * size])]
        elif number_ == 5 and wire == 5:
            values.append(struct.unpack("<f", raw)[0])
        elif number_ == 6 and wire == 1:
            values.append(struct.unpack("<d", raw)[0])
        elif number_ in (7, 10) and wire == 0:  # int_val / int64_val
            values.append(float(raw))
    if content:
        width = _WIDTHS.get(dtype)
        if width is None or len(content) != struct.calcsize(width):
            return None  # not one number: a histogram, an image, a text
        return float(struct.unpack(width, content)[0])
    return values[0] if len(values) == 1 else None


def trainer_state(data: bytes, name: str = "trainer_state.json") -> Decoded:
    """Hugging Face `Trainer`'s `trainer_state.json` (rewritten whole): every numeric key of
    each `log_history` entry at its `step`; `max_steps` as the run's total steps."""
    out = Decoded()
    try:
        obj = _json(data)
    except (ValueError, RecursionError):
        out.problems.append(
            f"{name}: not valid JSON (being rewritten?); read again when it changes"
        )
        return out
    if not isinstance(obj, dict) or not isinstance(obj.get("log_history"), list):
        out.problems.append(f'{name}: no "log_history" list; not a trainer state')
        return out
    for index, entry in enumerate(obj["log_history"]):
        if isinstance(entry, dict):
            out.samples.extend(_object_samples(entry, float(index)))
    total = obj.get("max_steps")
    if isinstance(total, int) and not isinstance(total, bool) and total > 0:
        out.total_steps = total
    return out


def final_numbers(data: bytes, name: str = "metrics.json") -> Decoded:
    """wild's `metrics.json`: a run's final numbers (every numeric key, NaN kept)."""
    out = Decoded()
    try:
        obj = _json(data)
    except (ValueError, RecursionError):
        out.problems.append(f"{name}: not valid JSON; its final numbers are not read")
        return out
    if not isinstance(obj, dict):
        out.problems.append(f"{name}: not a JSON object; its final numbers are not read")
        return out
    for key, raw in obj.items():
        value = json_value(raw)
        if key not in AXIS_KEYS and value is not None:
            out.final[str(key)] = value
    return out
