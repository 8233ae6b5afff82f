"""A scripted Anthropic Messages API on 127.0.0.1, so the real `claude` CLI runs offline in tests.

Each main-loop request (one that offers tools) gets the scripted turn whose index is the number
of assistant messages already in the conversation, so a retried request gets the same answer.
Side requests (titles, summaries, token counts) and any other endpoint get something harmless.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

MAX_BODY = 8 * 1024 * 1024  # Claude Code's requests are well under this; refuse anything bigger
MAX_REQUESTS = 200  # a runaway client is cut off instead of looping for ever
INPUT_TOKENS = 1200
OUTPUT_TOKENS = 300


@dataclass(frozen=True)
class ToolUse:
    """A tool call the scripted model makes (e.g. Bash with `{"command": "cat notes.txt"}`)."""

    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True)
class Turn:
    """One scripted assistant reply: some text, then optionally one tool call."""

    text: str
    tool_use: ToolUse | None = None


# The turns of one conversation, chosen from its first user message (each agent run of a loop
# is a fresh conversation, so a script can answer each iteration's prompt differently).
Script = Sequence[Turn] | Callable[[str], Sequence[Turn]]


@dataclass(frozen=True)
class Usage:
    """The token counts each scripted message reports (what Claude Code prices)."""

    input_tokens: int = INPUT_TOKENS
    output_tokens: int = OUTPUT_TOKENS


@dataclass
class Recorded:
    """What the server saw; read by the tests after the run."""

    paths: list[str] = field(default_factory=list)
    main_requests: list[Mapping[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def _first_user_text(messages: Sequence[Any]) -> str:
    """The text of the conversation's first user message (the prompt)."""
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _message_events(turn: Turn, model: str, number: int, usage: Usage) -> Iterator[bytes]:
    """The event stream of one assistant message, as the Messages API streams it."""
    yield _sse(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": f"msg_scripted_{number}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": usage.input_tokens, "output_tokens": 1},
            },
        },
    )
    blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if turn.text:
        blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": turn.text}))
    if turn.tool_use is not None:
        start = {
            "type": "tool_use",
            "id": f"toolu_scripted_{number}",
            "name": turn.tool_use.name,
            "input": {},
        }
        delta = {
            "type": "input_json_delta",
            "partial_json": orjson.dumps(dict(turn.tool_use.input)).decode(),
        }
        blocks.append((start, delta))
    for index, (start_block, delta) in enumerate(blocks):
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start_block},
        )
        yield _sse(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    stop_reason = "tool_use" if turn.tool_use is not None else "end_turn"
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": usage.output_tokens},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def _plain_message(text: str, model: str) -> dict[str, Any]:
    return {
        "id": "msg_side",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }


def _handler(script: Script, recorded: Recorded, usage: Usage) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output clean."""

        def _count(self) -> bool:
            with recorded.lock:
                recorded.paths.append(f"{self.command} {self.path}")
                return len(recorded.paths) <= MAX_REQUESTS

        def _reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._count()
            self._reply(200, b"{}")

        def do_HEAD(self) -> None:
            self._count()
            self._reply(200, b"")

        def do_POST(self) -> None:
            if not self._count():
                self._reply(429, b'{"type":"error","error":{"type":"rate_limit_error"}}')
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._reply(413, b"{}")
                return
            raw = self.rfile.read(length)
            try:
                request = orjson.loads(raw) if raw else {}
            except orjson.JSONDecodeError:
                request = {}
            if not isinstance(request, dict):
                request = {}
            path = self.path.split("?", 1)[0]
            if path.endswith("/count_tokens"):
                self._reply(200, b'{"input_tokens": 10}')
            elif path.endswith("/v1/messages"):
                self._messages(request)
            else:
                self._reply(200, b"{}")

        def _messages(self, request: Mapping[str, Any]) -> None:
            model = str(request.get("model") or "claude-sonnet-4-5")
            if not request.get("tools"):
                self._side_reply(request, model)
                return
            with recorded.lock:
                recorded.main_requests.append(request)
            messages = request.get("messages") or []
            index = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
            turns = script(_first_user_text(messages)) if callable(script) else script
            turn = turns[min(index, len(turns) - 1)]
            if request.get("stream"):
                body = b"".join(_message_events(turn, model, index, usage))
                self._reply(200, body, "text/event-stream")
            else:
                self._reply(200, orjson.dumps(_plain_message(turn.text, model)))

        def _side_reply(self, request: Mapping[str, Any], model: str) -> None:
            """Titles, topic checks and summaries: a short harmless answer."""
            message = _plain_message('{"title": "test", "isNewTopic": false}', model)
            if request.get("stream"):
                turn = Turn(text=message["content"][0]["text"])
                events = _message_events(turn, model, 999, Usage(10, 1))
                self._reply(200, b"".join(events), "text/event-stream")
            else:
                self._reply(200, orjson.dumps(message))

    return Handler


@contextmanager
def serve(script: Script, usage: Usage | None = None) -> Iterator[tuple[str, Recorded]]:
    """Run the server on a random 127.0.0.1 port; yields its base URL and the request record."""
    if not callable(script) and not script:
        raise ValueError("serve() needs at least one scripted turn")
    recorded = Recorded()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script, recorded, usage or Usage()))
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}", recorded
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
