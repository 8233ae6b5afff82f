"""A scripted stand-in for an agent CLI, for tests: `python tests/fake_agent.py` (`ARGV`).
It imports nothing of wild or the tests, so it runs as a plain script from any folder.

`WILD_FAKE_SCRIPT` names a JSON file `{"iterations": [[action, ...], ...]}`. Run k (counted in
`<script>.runs` next to it) plays iteration k; runs past the end replay the last one. Actions,
each an object with one action key and its options, run in order:

  {"print": "text"}          stdout line           {"write": "raw"}         stdout, no newline
  {"stderr": "text"}         stderr line           {"print_bytes": N}       N bytes of `payload`
  {"print_hex": "ff fe 0a"}  raw stdout bytes (say, invalid UTF-8)   {"delete_file": "p"}
  {"write_file": "p", "text": "…"}   {"append_file": "p", "text": "…"}
  {"replace_in_file": "p", "old": "…", "new": "…"}                 (paths relative to the cwd)
  {"sleep": 1.5}             {"exit": 3}           {"kill_self": "SIGSEGV"}
  {"wait_for": "p"}          wait (at most 60 s) until file p exists: a test's handshake
  {"ignore_sigterm": true}   {"spawn": ["argv", …] or null, "pid_file": "p"}  (null: sleep 1 h;
                             with "setsid": true the child gets a session of its own)
  {"record": "p"}            write pid, argv, cwd, stdin and the WILD_* environment as JSON
  {"stream_json": [event, …]}                       one JSON line per event
  {"claude": {"text": "…", "tool_result": "…", "cost_usd": 0.01, "input_tokens": 10,
              "output_tokens": 5, "is_error": false, "result": true}}
                             a Claude Code-shaped stream-json run (init, optional Bash tool use
                             whose output is `tool_result`, the final text, the result event)
Without an `exit` action the run exits 0 after its last action.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

SCRIPT_ENV = "WILD_FAKE_SCRIPT"
# How a test starts it: as an argv, or as one shell-split command line (`--agent-cmd`).
ARGV = (sys.executable, str(Path(__file__).resolve()))
COMMAND = " ".join(ARGV)
_LINE = 100
WAIT_FOR_S = 60.0


def payload(size: int) -> bytes:
    """`size` bytes of numbered 100-byte lines, so a test can check order and completeness."""
    return b"".join(_payload_chunks(size))


def _payload_chunks(size: int, chunk: int = 64 * 1024) -> Iterator[bytes]:
    """`payload(size)` a piece at a time, so printing 50 MB does not hold 50 MB."""
    count = size // _LINE + 1
    per_chunk = chunk // _LINE
    for first in range(0, count, per_chunk):
        lines = range(first, min(first + per_chunk, count))
        data = b"".join(b"%08d " % i + b"x" * (_LINE - 10) + b"\n" for i in lines)
        yield data[: max(0, size - first * _LINE)]


def claude_events(
    text: str,
    *,
    tool_result: str | None = None,
    cost_usd: float = 0.0123,
    input_tokens: int = 100,
    output_tokens: int = 20,
    is_error: bool = False,
    result: bool = True,
) -> list[dict[str, Any]]:
    """The events Claude Code prints for one run, trimmed to the fields wild reads."""
    session = {"session_id": "fake-session"}
    events: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "cwd": os.getcwd(), "tools": ["Bash"], **session},
    ]
    if tool_result is not None:
        events += [
            {
                "type": "assistant",
                "message": {
                    "id": "msg_1",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Let me look at the file."}],
                },
                **session,
            },
            {
                "type": "assistant",
                "message": {
                    "id": "msg_1",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_1",
                            "name": "Bash",
                            "input": {"command": "cat notes.txt"},
                        }
                    ],
                },
                **session,
            },
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": tool_result}
                    ],
                },
                **session,
            },
        ]
    events.append(
        {
            "type": "assistant",
            "message": {
                "id": "msg_2",
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
            },
            **session,
        }
    )
    if result:
        events.append(
            {
                "type": "result",
                "subtype": "success",
                "is_error": is_error,
                "num_turns": 2,
                "result": text,
                "total_cost_usd": cost_usd,
                "usage": {
                    "input_tokens": input_tokens,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": output_tokens,
                },
                **session,
            }
        )
    return events


def _out(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _print_bytes(size: int) -> None:
    for data in _payload_chunks(size):
        _out(data)


def _spawn(argv: Sequence[str] | None, pid_file: str | None, setsid: bool) -> None:
    command = list(argv) if argv else [sys.executable, "-c", "import time; time.sleep(3600)"]
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=setsid)
    if pid_file:
        Path(pid_file).write_text(str(child.pid))


def _record(path: str) -> None:
    stdin = "" if sys.stdin is None or sys.stdin.closed else sys.stdin.read()
    Path(path).write_bytes(
        orjson.dumps(
            {
                "pid": os.getpid(),
                "argv": sys.argv[1:],
                "cwd": os.getcwd(),
                "stdin": stdin,
                "env": {k: v for k, v in os.environ.items() if k.startswith("WILD_")},
            }
        )
    )


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_FOR_S
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def _replace(path: str, old: str, new: str) -> None:
    target = Path(path)
    target.write_text(target.read_text().replace(old, new, 1))


def _run(action: Mapping[str, Any]) -> None:
    if "print" in action:
        _out(str(action["print"]).encode() + b"\n")
    elif "write" in action:
        _out(str(action["write"]).encode())
    elif "stderr" in action:
        sys.stderr.write(str(action["stderr"]) + "\n")
        sys.stderr.flush()
    elif "print_bytes" in action:
        _print_bytes(int(action["print_bytes"]))
    elif "print_hex" in action:
        _out(bytes.fromhex(str(action["print_hex"])))
    elif "delete_file" in action:
        Path(action["delete_file"]).unlink(missing_ok=True)
    elif "symlink" in action:  # an agent planting a link where wild writes (`to`: its target)
        link = Path(action["symlink"])
        if link.is_dir() and not link.is_symlink():
            shutil.rmtree(link)
        link.unlink(missing_ok=True)
        link.symlink_to(str(action["to"]))
    elif "write_file" in action:
        Path(action["write_file"]).write_text(str(action.get("text", "")))
    elif "append_file" in action:
        with Path(action["append_file"]).open("a") as handle:
            handle.write(str(action.get("text", "")))
    elif "replace_in_file" in action:
        _replace(action["replace_in_file"], str(action["old"]), str(action["new"]))
    elif "sleep" in action:
        time.sleep(float(action["sleep"]))
    elif "wait_for" in action:
        _wait_for(Path(action["wait_for"]))
    elif "exit" in action:
        sys.stdout.flush()
        os._exit(int(action["exit"]))
    elif "kill_self" in action:
        os.kill(os.getpid(), getattr(signal, str(action["kill_self"])))
    elif "ignore_sigterm" in action:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif "spawn" in action:
        _spawn(action["spawn"], action.get("pid_file"), bool(action.get("setsid")))
    elif "record" in action:
        _record(str(action["record"]))
    elif "stream_json" in action:
        for event in action["stream_json"]:
            _out(orjson.dumps(event) + b"\n")
    elif "claude" in action:
        for event in claude_events(**action["claude"]):
            _out(orjson.dumps(event) + b"\n")
    else:
        raise ValueError(f"unknown fake-agent action {dict(action)!r}")


def _next_iteration(script: Path) -> list[Mapping[str, Any]]:
    data = orjson.loads(script.read_bytes())
    iterations = data["iterations"]
    counter = script.with_name(script.name + ".runs")
    runs = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(runs + 1))
    return list(iterations[min(runs, len(iterations) - 1)]) if iterations else []


def main() -> int:
    script = os.environ.get(SCRIPT_ENV)
    if not script:
        sys.stderr.write(f"fake agent: set {SCRIPT_ENV} to a JSON script file\n")
        return 2
    try:
        actions = _next_iteration(Path(script))
    except (OSError, ValueError, KeyError, TypeError) as error:
        sys.stderr.write(f"fake agent: cannot read {script}: {error}\n")
        return 2
    for action in actions:
        _run(action)
    return 0


if __name__ == "__main__":
    sys.exit(main())
