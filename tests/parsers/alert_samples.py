"""Sample alerts.jsonl lines shared by the parser's and the store's tests."""

from __future__ import annotations

from typing import Any

import orjson

from wild.parsers.alerts import Alert

SEED = (
    b'{"id":"alert-001","timestamp":"2026-02-08T10:45:23Z","severity":"critical",'
    b'"source":"training-job-3","type":"OOM","description":"GPU memory exhausted (24GB/24GB) '
    b'during batch 1250","status":"pending","context":{"batch_size":64,"model":"llama-7b",'
    b'"gpu":"A100-40GB"}}\n'
    b'{"id":"alert-002","timestamp":"2026-02-08T10:47:15Z","severity":"warning",'
    b'"source":"training-job-5","type":"divergence","description":"Loss increased from 2.3 to '
    b'15.7 in 10 steps","status":"pending"}\n'
    b'{"id":"alert-001","timestamp":"2026-02-08T10:50:00Z","severity":"critical",'
    b'"source":"training-job-3","type":"OOM","description":"GPU memory exhausted (24GB/24GB) '
    b'during batch 1250","status":"in-progress","context":{"batch_size":64,"model":"llama-7b",'
    b'"gpu":"A100-40GB","attempt":1}}\n'
    b'{"id":"alert-001","timestamp":"2026-02-08T10:55:00Z","severity":"critical",'
    b'"source":"training-job-3","type":"OOM","description":"GPU memory exhausted (24GB/24GB) '
    b'during batch 1250","status":"resolved","context":{"batch_size":32,"solution":"reduced '
    b'batch size to 32"},"resolvedAt":"2026-02-08T10:55:00Z"}\n'
)


def line(alert_id: str, status: str = "pending", **more: Any) -> bytes:
    record = {"id": alert_id, "timestamp": "2026-02-08T10:45:23Z", "severity": "warning"}
    record.update(status=status, **more)
    return orjson.dumps(record) + b"\n"


def ids(entries: tuple[Alert, ...]) -> list[tuple[str, str, int]]:
    return [(a.id, a.status, a.line) for a in entries]
