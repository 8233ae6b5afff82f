"""docs/webhook.md stays true: its openssl + curl example works against a live webhook, and
the limits it states are the ones the code uses."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from wild import http_guard
from wild.barriers import webhook_auth
from wild.barriers.webhook import MAX_BODY, WebhookServer
from wild.paths import WildPaths

DOC = Path(__file__).resolve().parents[2] / "docs" / "webhook.md"


def shell_example() -> str:
    blocks = re.findall(r"^```sh[^\n]*\n(.*?)^```$", DOC.read_text(), re.M | re.S)
    assert len(blocks) == 1
    return str(blocks[0])


@pytest.mark.skipif(
    shutil.which("curl") is None or shutil.which("openssl") is None,
    reason="the example needs curl and openssl",
)
def test_the_signing_example_is_accepted_once(paths: WildPaths) -> None:
    server = WebhookServer(paths, token=None, secret=b"doc-secret", wake=lambda _id: None)
    port = server.start()
    # No proxy: curl would send even a 127.0.0.1 request through one.
    env = {name: value for name, value in os.environ.items() if "proxy" not in name.lower()}
    env |= {"WILD_WEBHOOK_SECRET": "doc-secret", "PORT": str(port)}
    try:
        run = subprocess.run(
            ["bash", "-c", shell_example()], env=env, capture_output=True, timeout=30, check=True
        )
        reply = orjson.loads(run.stdout)
        assert reply["ok"] is True and str(reply["alert"]).startswith("alert-")
        alert = orjson.loads(paths.alerts.read_bytes())
        assert (alert["type"], alert["description"]) == ("job-done", "job 42 finished")
    finally:
        server.stop()


def test_the_documented_limits_are_the_real_ones() -> None:
    doc = " ".join(DOC.read_text().split())
    assert webhook_auth.TOLERANCE_S == 5 * 60 and "more than **5 minutes**" in doc
    assert webhook_auth.MAX_DELIVERY_ID == 128 and "up to 128 characters" in doc
    assert MAX_BODY == 64 * 1024 and "at most 64 KiB" in doc
    assert http_guard.REQUEST_DEADLINE_S == 10 and "within **10 s**" in doc
    assert http_guard.MAX_PER_CLIENT == 8 and "At most **8** connections" in doc
    assert http_guard.MAX_CONNECTIONS == 32 and "**32** in all" in doc
    assert http_guard.REPORT_BURST == 10 and http_guard.REPORT_WINDOW_S == 60
    assert "at most 10 a minute" in doc
