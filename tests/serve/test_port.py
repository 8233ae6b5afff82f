"""One default port: the `--port` option, the dashboard and docs/cli.md agree."""

from __future__ import annotations

import inspect
from pathlib import Path

from wild.cli import cli
from wild.serve import DEFAULT_PORT
from wild.serve.server import Dashboard

CLI_DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_the_cli_the_dashboard_and_the_docs_share_one_default_port() -> None:
    port = next(param for param in cli.params if param.name == "port")
    assert port.default == DEFAULT_PORT
    assert inspect.signature(Dashboard).parameters["port"].default == DEFAULT_PORT
    assert f"default {DEFAULT_PORT};" in CLI_DOC.read_text()
