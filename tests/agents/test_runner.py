"""The supervised agent run, driven by the scripted fake agent in real subprocesses."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.fake_agent import ARGV, COMMAND, payload
from tests.fd_support import descriptors_of
from wild.agents import runner
from wild.agents.registry import build_command, output_format
from wild.agents.run_result import AgentRun
from wild.agents.runner import TEXT_TAIL, AgentRequest, Heartbeat, agent_env, run_agent
from wild.agents.tracking import TRACK_S, RunTree
from wild.errors import RefusedWriteError
from wild.liveness import probe
from wild.record import replace

ROOT = Path(__file__).resolve().parents[2]
FAKE = ARGV
NOW = datetime(2026, 2, 8, 10, 45, 23, tzinfo=UTC)
HANDSHAKE_S = 30.0  # upper bound for a test's wait on the fake agent; never reached when healthy


class FixedClock:
    def now(self) -> datetime:
        return NOW

    def monotonic(self) -> float:
        return time.monotonic()


def _request(
    tmp_path: Path, iterations: list[list[dict[str, Any]]], **options: Any
) -> AgentRequest:
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"iterations": iterations}))
    env = {"WILD_FAKE_SCRIPT": str(script), "PYTHONPATH": str(ROOT), **options.pop("env", {})}
    return AgentRequest(
        argv=options.pop("argv", FAKE),
        cwd=tmp_path,
        log_path=tmp_path / ".wild" / "logs" / "iteration-1.log",
        env=env,
        heartbeat_s=options.pop("heartbeat_s", 3600.0),
        clock=FixedClock(),
        **options,
    )


def _pid_written(pid_file: Path) -> bool:
    """The file exists AND holds a whole pid: a writer may have created it but not written yet."""
    try:
        return pid_file.read_text().strip().isdigit()
    except FileNotFoundError:
        return False


def _wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + HANDSHAKE_S
    while not condition():
        assert time.monotonic() < deadline, "the fake agent never got there"
        time.sleep(0.01)


def _agent_output(run: AgentRun) -> bytes:
    """The log without wild's own header and footer lines."""
    lines = run.log_path.read_bytes().splitlines(keepends=True)
    assert lines[0].startswith(b"[wild] started ")
    assert lines[-1].startswith(b"[wild] ended ")
    return b"".join(lines[1:-1])


def _grandchild_spawner(pid_file: Path) -> list[dict[str, Any]]:
    return [{"print": "working"}, {"spawn": None, "pid_file": str(pid_file)}, {"sleep": 600}]


def test_env_stdin_and_cwd_reach_the_agent(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    env = agent_env(
        wild_dir=tmp_path / ".wild",
        iteration=4,
        work_type="alert",
        work_id="alert-17",
        prompt_file=tmp_path / ".wild" / "prompts" / "p.md",
    )
    request = _request(tmp_path, [[{"record": str(record)}]], env=env, stdin=b"the prompt\n")
    run = run_agent(request)
    seen = orjson.loads(record.read_bytes())
    assert seen["env"].pop("WILD_AGENT_RUN") == request.run_id  # how its leftovers are found
    assert seen["cwd"] == str(tmp_path)
    assert seen["stdin"] == "the prompt\n"
    assert seen["argv"] == []
    assert {k: v for k, v in seen["env"].items() if k != "WILD_FAKE_SCRIPT"} == {
        "WILD_DIR": str(tmp_path / ".wild"),
        "WILD_ITERATION": "4",
        "WILD_WORK_TYPE": "alert",
        "WILD_WORK_ID": "alert-17",
        "WILD_PROMPT_FILE": str(tmp_path / ".wild" / "prompts" / "p.md"),
    }
    assert (run.exit_code, run.failed) == (0, False)


def test_stdin_is_empty_when_not_fed(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    run_agent(_request(tmp_path, [[{"record": str(record)}]]))
    assert orjson.loads(record.read_bytes())["stdin"] == ""


def test_text_agent_final_text_signals_and_log(tmp_path: Path) -> None:
    run = run_agent(
        _request(
            tmp_path,
            [
                [
                    {"print": "Fixed it."},
                    {"stderr": "warning: slow disk"},
                    {"print": "<promise>TASK_COMPLETE</promise>"},
                ]
            ],
        )
    )
    assert run.final_text == "Fixed it.\nwarning: slow disk\n<promise>TASK_COMPLETE</promise>\n"
    assert run.signals.promises == ("TASK_COMPLETE",)
    assert (run.exit_code, run.timed_out, run.cancelled, run.is_error) == (0, False, False, False)
    assert (run.cost_usd, run.input_tokens, run.output_tokens) == (None, None, None)
    assert (run.rate_limited, run.rate_limit_reset) == (False, None)
    assert run.output_bytes == len(run.final_text)
    lines = run.log_path.read_text().splitlines()
    assert lines[0] == (f"[wild] started 2026-02-08T10:45:23Z in {tmp_path}: {COMMAND}")
    assert lines[1:4] == ["Fixed it.", "warning: slow disk", "<promise>TASK_COMPLETE</promise>"]
    assert re.fullmatch(r"\[wild\] ended 2026-02-08T10:45:23Z: exit 0 after \d+\.\ds", lines[4])
    assert len(lines) == 5


def test_a_long_prompt_argument_is_shortened_in_the_log_header(tmp_path: Path) -> None:
    run = run_agent(_request(tmp_path, [[]], argv=(*FAKE, "p" * 500)))
    header = run.log_path.read_text().splitlines()[0]
    assert header.endswith(f" {ARGV[1]} '" + "p" * 120 + "…(500 chars)'")


def test_a_second_run_appends_to_the_same_log(tmp_path: Path) -> None:
    request = _request(tmp_path, [[{"print": "one"}], [{"print": "two"}]])
    first = run_agent(request)
    second = run_agent(request)
    assert (first.final_text, second.final_text) == ("one\n", "two\n")
    assert [
        line for line in second.log_path.read_text().splitlines() if not line.startswith("[wild] ")
    ] == ["one", "two"]


def test_the_fake_agent_replays_its_last_iteration(tmp_path: Path) -> None:
    request = _request(tmp_path, [[{"print": "a"}], [{"print": "b"}]])
    texts = [run_agent(request).final_text for _ in range(3)]
    assert texts == ["a\n", "b\n", "b\n"]


def test_timeout_kills_the_agent_and_its_grandchild(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"

    def hold_until_spawned(_beat: Heartbeat) -> None:
        _wait_until(lambda: _pid_written(pid_file))  # the deadline is checked after this returns

    run = run_agent(
        _request(
            tmp_path,
            [_grandchild_spawner(pid_file)],
            timeout_s=0.2,
            heartbeat_s=0.05,
            on_heartbeat=hold_until_spawned,
        )
    )
    grandchild = int(pid_file.read_text())
    assert (run.timed_out, run.cancelled, run.exit_code) == (True, False, -signal.SIGTERM)
    assert run.failed
    _wait_until(lambda: probe(grandchild) is None)
    assert run.final_text == "working\n"
    last = run.log_path.read_text().splitlines()[-1]
    assert re.fullmatch(
        r"\[wild\] ended 2026-02-08T10:45:23Z: timed out after \d+\.\ds; process group killed "
        r"\(exit -15\)",
        last,
    )


def test_an_agent_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    run = run_agent(
        _request(
            tmp_path,
            [[{"ignore_sigterm": True}, {"write_file": str(ready), "text": ""}, {"sleep": 600}]],
            timeout_s=0.2,
            heartbeat_s=0.05,
            on_heartbeat=lambda _b: _wait_until(ready.exists),
        )
    )
    assert (run.timed_out, run.exit_code) == (True, -signal.SIGKILL)


def test_cancel_kills_the_group_at_once(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    cancel = threading.Event()

    def cancel_when_spawned(_beat: Heartbeat) -> None:
        _wait_until(lambda: _pid_written(pid_file))
        cancel.set()

    run = run_agent(
        _request(
            tmp_path,
            [_grandchild_spawner(pid_file)],
            cancel=cancel,
            heartbeat_s=0.05,
            on_heartbeat=cancel_when_spawned,
        )
    )
    assert (run.cancelled, run.timed_out, run.exit_code) == (True, False, -signal.SIGTERM)
    _wait_until(lambda: probe(int(pid_file.read_text())) is None)


def test_cancel_from_another_thread(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    cancel = threading.Event()

    def cancel_when_ready() -> None:
        _wait_until(ready.exists)
        cancel.set()

    thread = threading.Thread(target=cancel_when_ready)
    thread.start()
    run = run_agent(
        _request(
            tmp_path, [[{"write_file": str(ready), "text": ""}, {"sleep": 600}]], cancel=cancel
        )
    )
    thread.join()
    assert (run.cancelled, run.exit_code) == (True, -signal.SIGTERM)


def test_a_crashing_callback_still_kills_the_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"

    def explode(_beat: Heartbeat) -> None:
        _wait_until(lambda: _pid_written(pid_file))
        raise RuntimeError("boom")

    request = _request(
        tmp_path, [_grandchild_spawner(pid_file)], heartbeat_s=0.05, on_heartbeat=explode
    )
    with pytest.raises(RuntimeError, match=r"^boom$"):
        run_agent(request)
    _wait_until(lambda: probe(int(pid_file.read_text())) is None)
    _wait_until(lambda: not descriptors_of(request.log_path))  # its pump let the log go


def test_five_megabytes_of_output_do_not_deadlock_and_all_reach_the_log(tmp_path: Path) -> None:
    size = 5 * 1024 * 1024
    run = run_agent(
        _request(
            tmp_path,
            [[{"print_bytes": size}, {"print": ""}, {"print": "<promise>COMPLETE</promise>"}]],
        )
    )
    expected = payload(size) + b"\n<promise>COMPLETE</promise>\n"
    assert run.exit_code == 0
    assert _agent_output(run) == expected
    assert run.output_bytes == len(expected)
    tail = expected[-TEXT_TAIL:]
    assert expected[-TEXT_TAIL - 1] != ord("\n")  # the cut falls inside a line ...
    assert run.final_text == tail[tail.index(b"\n") + 1 :].decode()  # ... which is left out
    assert run.signals.promises == ("COMPLETE",)


def test_heartbeats_reach_the_log_and_the_callback(tmp_path: Path) -> None:
    go, record = tmp_path / "go", tmp_path / "record.json"
    beats: list[Heartbeat] = []

    def on_beat(beat: Heartbeat) -> None:
        beats.append(beat)
        go.touch()

    run = run_agent(
        _request(
            tmp_path,
            [
                [
                    {"record": str(record)},
                    {"print": "before"},
                    {"wait_for": str(go)},
                    {"print": "after"},
                ]
            ],
            heartbeat_s=0.05,
            on_heartbeat=on_beat,
        )
    )
    pid = orjson.loads(record.read_bytes())["pid"]
    assert beats
    assert {beat.pid for beat in beats} == {pid}
    assert run.final_text == "before\nafter\n"
    beat_lines = [
        line
        for line in run.log_path.read_text().splitlines()
        if line.startswith("[wild] heartbeat ")
    ]
    assert beat_lines
    assert re.fullmatch(
        rf"\[wild\] heartbeat 2026-02-08T10:45:23Z: agent pid {pid} running "
        r"\d+s, \d+ bytes of output",
        beat_lines[0],
    )
    assert run.output_bytes == len("before\nafter\n")


def test_a_heartbeat_never_splits_the_agents_line(tmp_path: Path) -> None:
    go, started = tmp_path / "go", tmp_path / "started"
    beats: list[Heartbeat] = []

    def on_beat(beat: Heartbeat) -> None:
        # Once the agent's first bytes are in the log: the agent writes them before `started`,
        # but the pump thread copies them from the pipe in its own time.
        if started.exists() and beat.output_bytes > 0:
            beats.append(beat)
            go.touch()

    run = run_agent(
        _request(
            tmp_path,
            [
                [
                    {"write": "<promise>TASK_"},
                    {"write_file": str(started), "text": ""},
                    {"wait_for": str(go)},
                    {"print": "COMPLETE</promise>"},
                ]
            ],
            heartbeat_s=0.05,
            on_heartbeat=on_beat,
        )
    )
    assert beats
    assert beats[0].output_bytes == len("<promise>TASK_")
    # Beats before the agent wrote anything may be logged; none may land inside its line.
    kept = [
        line
        for line in _agent_output(run).splitlines(keepends=True)
        if not line.startswith(b"[wild] heartbeat ")
    ]
    assert kept == [b"<promise>TASK_COMPLETE</promise>\n"]
    assert run.signals.promises == ("TASK_COMPLETE",)


@pytest.mark.parametrize(
    ("action", "exit_code"),
    [
        ({"exit": 3}, 3),
        ({"exit": 255}, 255),
        ({"kill_self": "SIGSEGV"}, -signal.SIGSEGV),
        ({"no_such_action": 1}, 1),
    ],
)
def test_crashes_and_odd_exit_codes_are_recorded(
    tmp_path: Path, action: dict[str, Any], exit_code: int
) -> None:
    run = run_agent(_request(tmp_path, [[{"print": "partial work"}, action]]))
    assert (run.exit_code, run.failed, run.timed_out) == (exit_code, True, False)
    assert run.final_text.startswith("partial work\n")


def test_a_python_crash_leaves_its_traceback_as_the_final_text(tmp_path: Path) -> None:
    run = run_agent(_request(tmp_path, [[{"no_such_action": 1}]]))
    assert run.final_text.endswith("ValueError: unknown fake-agent action {'no_such_action': 1}\n")


def test_the_last_line_is_ended_before_the_footer(tmp_path: Path) -> None:
    run = run_agent(_request(tmp_path, [[{"write": "no newline"}]]))
    lines = run.log_path.read_text().splitlines()
    assert lines[1] == "no newline"
    assert lines[2].startswith("[wild] ended ")
    assert run.final_text == "no newline"


def test_a_missing_binary_is_an_attempt_that_ended_with_its_reason(tmp_path: Path) -> None:
    """Issue 24 item 3: it once raised, and the loop died as if killed mid-iteration."""
    request = _request(tmp_path, [[]], argv=("no-such-agent-binary", "-p", "x"))
    run = run_agent(request)
    assert (run.exit_code, run.failed) == (127, True)
    assert run.start_error == "no-such-agent-binary: No such file or directory"
    assert request.log_path.read_text().splitlines()[-1] == (
        "[wild] could not start: No such file or directory"
    )


def test_usage_limit_reply_from_a_text_agent(tmp_path: Path) -> None:
    run = run_agent(
        _request(tmp_path, [[{"print": "Claude AI usage limit reached|1760000400"}, {"exit": 1}]])
    )
    assert run.rate_limited
    assert run.rate_limit_reset == datetime(2025, 10, 9, 9, 0, tzinfo=UTC)


def test_claude_through_the_registry_and_binary_override(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    prompt = "Finish task t-1."
    argv = build_command(
        "claude",
        prompt,
        "opus",
        prompt_file=tmp_path / "p.md",
        skip_permissions=True,
        environ={"WILD_CLAUDE_BINARY": COMMAND},
    )
    run = run_agent(
        _request(
            tmp_path,
            [
                [
                    {"record": str(record)},
                    {
                        "claude": {
                            "text": "Not done yet.",
                            "tool_result": "<promise>COMPLETE</promise>",
                            "cost_usd": 0.25,
                            "input_tokens": 1500,
                            "output_tokens": 40,
                        }
                    },
                ]
            ],
            argv=tuple(argv),
            output_format=output_format("claude"),
        )
    )
    assert orjson.loads(record.read_bytes())["argv"] == [
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        "opus",
        "--dangerously-skip-permissions",
    ]
    assert b"<promise>COMPLETE</promise>" in run.log_path.read_bytes()
    assert run.final_text == "Not done yet."
    assert run.signals.promises == ()
    assert (run.cost_usd, run.input_tokens, run.output_tokens) == (0.25, 1500, 40)
    assert run.problems == ()


def test_stream_json_agent_reporting_an_error(tmp_path: Path) -> None:
    run = run_agent(
        _request(
            tmp_path,
            [
                [
                    {"claude": {"text": "Reached max turns", "is_error": True}},
                ]
            ],
            output_format="stream-json",
        )
    )
    assert (run.exit_code, run.is_error, run.failed) == (0, True, True)


ROOT_REFUSAL = "--dangerously-skip-permissions cannot be used with root/sudo privileges"


def test_stream_json_agent_that_printed_only_an_error_message(tmp_path: Path) -> None:
    run = run_agent(
        _request(
            tmp_path,
            [
                [
                    {"stderr": ROOT_REFUSAL},
                    {"exit": 1},
                ]
            ],
            output_format="stream-json",
        )
    )
    assert run.final_text == (
        "--dangerously-skip-permissions cannot be used with root/sudo privileges\n"
    )
    assert run.problems == ("the agent printed no stream-json events",)
    assert run.exit_code == 1


def test_a_heartbeat_interval_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^heartbeat_s must be positive, not 0$"):
        AgentRequest(argv=FAKE, cwd=tmp_path, log_path=tmp_path / "x.log", heartbeat_s=0)


def test_on_start_is_told_the_agents_pid(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    told: list[int] = []
    run_agent(_request(tmp_path, [[{"record": str(record)}]], on_start=told.append))
    assert told == [orjson.loads(record.read_bytes())["pid"]]


def test_the_agents_program_runs_only_once_on_start_returned(tmp_path: Path) -> None:
    """The loop writes the run's record and the pid in one durable write in `on_start`: the
    agent waits at its gate until then, however long that takes (before: it ran at once)."""
    record = tmp_path / "record.json"
    seen: list[bool] = []

    def slow_write(pid: int) -> None:
        time.sleep(0.3)  # a slow disk: time enough for an ungated agent to have run
        seen.append(record.exists())

    run = run_agent(_request(tmp_path, [[{"record": str(record)}]], on_start=slow_write))
    assert (seen, run.exit_code, record.exists()) == ([False], 0, True)


def test_an_agent_whose_on_start_failed_never_ran(tmp_path: Path) -> None:
    record = tmp_path / "record.json"

    def fail(pid: int) -> None:
        time.sleep(0.3)  # time enough for an ungated agent to have run
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        run_agent(_request(tmp_path, [[{"record": str(record)}]], on_start=fail))
    assert not record.exists()


def test_a_failing_on_start_leaves_no_agent_running(tmp_path: Path) -> None:
    told: list[int] = []

    def fail(pid: int) -> None:
        told.append(pid)
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        run_agent(_request(tmp_path, [[{"sleep": 600}]], on_start=fail))
    assert probe(told[0]) is None


def test_on_running_is_called_once_the_agents_program_runs(tmp_path: Path) -> None:
    """Work that must not delay the agent (the loop's barrier checker) runs in `on_running`,
    after the gate opened: the agent's program runs meanwhile (issue 22 item 8: it ran at the
    gate, in `on_start`, the agent waiting for its import and first pass)."""
    record = tmp_path / "record.json"
    order: list[str] = []

    def running() -> None:
        order.append("running")
        _wait_until(record.exists)  # the agent's program ran while the callback waits

    run = run_agent(
        _request(
            tmp_path,
            [[{"record": str(record)}]],
            on_start=lambda _pid: order.append("start"),
            on_running=running,
        )
    )
    assert (order, run.exit_code) == (["start", "running"], 0)


def test_a_failing_on_running_leaves_no_agent_running(tmp_path: Path) -> None:
    told: list[int] = []

    def fail() -> None:
        raise OSError("no thread")

    request = _request(tmp_path, [[{"sleep": 600}]], on_start=told.append, on_running=fail)
    with pytest.raises(OSError, match="no thread"):
        run_agent(request)
    assert probe(told[0]) is None
    _wait_until(lambda: not descriptors_of(request.log_path))  # its pump let the log go


def test_the_log_is_opened_after_the_go_and_one_that_cannot_be_leaves_no_agent_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's log is opened after the go, while the agent's program starts (the loop's
    work before the go was the longer side of that window; issue 22 item 8): the agent's
    program runs before the log is opened (before: it waited at its gate for it), and what it
    printed at once is in the log, after its header. A link planted at its name since it was
    chosen is refused, never written through, and the agent, let go by then, is killed:
    nobody would supervise it."""
    record = tmp_path / "record.json"
    real_open_log = runner._open_log

    def open_log_once_the_agent_runs(request: AgentRequest, env: Any) -> Any:
        _wait_until(record.exists)  # before the go this would wait in vain
        return real_open_log(request, env)

    monkeypatch.setattr(runner, "_open_log", open_log_once_the_agent_runs)
    request = _request(tmp_path, [[{"record": str(record)}, {"print": "hello"}]])
    run = run_agent(request)
    assert run.exit_code == 0
    assert "hello" in request.log_path.read_text()
    monkeypatch.setattr(runner, "_open_log", real_open_log)

    outside = tmp_path / "outside"
    told: list[int] = []

    def plant(pid: int) -> None:
        told.append(pid)
        request.log_path.parent.mkdir(parents=True, exist_ok=True)
        (request.log_path.parent / "iteration-2.log").symlink_to(outside)

    second = replace(
        _request(tmp_path, [[{"sleep": 600}]], on_start=plant),
        log_path=request.log_path.parent / "iteration-2.log",
    )
    with pytest.raises(RefusedWriteError):
        run_agent(second)
    assert not outside.exists()
    assert probe(told[0]) is None


def test_the_output_pump_starts_once_the_agent_is_let_go_and_misses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pump's thread starts after the go (a thread's start waits for it to run: not on
    the agent's way); what the agent writes before it runs waits in the pipe and reaches the
    log after its header, whole."""
    from wild.agents import runner
    from wild.store.capped_log import Pump

    order: list[str] = []
    real_write = os.write

    def noting_write(fd: int, data: bytes) -> int:
        if data == b"\n" and threading.current_thread() is threading.main_thread():
            order.append("go")
        return real_write(fd, data)

    def noting_pump(read_fd: int, capped: Any, *, inline: bool = False) -> Pump:
        order.append("pump")
        return Pump(read_fd, capped, inline=inline)

    monkeypatch.setattr(os, "write", noting_write)
    monkeypatch.setattr(runner, "Pump", noting_pump)
    run = run_agent(_request(tmp_path, [[{"print": "x" * 100_000}, {"print": "done"}]]))
    assert order[:2] == ["go", "pump"]
    lines = run.log_path.read_text().splitlines()
    assert lines[0].startswith("[wild] started ")
    assert lines[1:3] == ["x" * 100_000, "done"]


def test_an_agent_that_ends_before_track_s_starts_no_follower_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A thread started and joined per run was two waits for a thread switch on the loop's
    # path (issue 22 item 8); its first look came only after TRACK_S anyway.
    started: list[int] = []
    real_start = RunTree.start

    def counting(tree: RunTree) -> RunTree:
        started.append(tree.leader)
        return real_start(tree)

    monkeypatch.setattr(RunTree, "start", counting)
    # "Before TRACK_S" made certain whatever the machine's load: the fake agent's interpreter
    # alone may take longer than the real 0.5 s to start on a busy machine.
    from wild.agents import runner

    monkeypatch.setattr(runner, "TRACK_S", 60.0)
    run = run_agent(_request(tmp_path, [[{"print": "quick"}]]))
    assert (run.exit_code, started) == (0, [])


def test_an_agent_running_past_track_s_is_followed_from_then_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    looks: list[float] = []
    real_members = RunTree.members

    def counting(tree: RunTree, procs: Any = None) -> set[tuple[int, int]]:
        looks.append(time.monotonic())
        return real_members(tree, procs)

    monkeypatch.setattr(RunTree, "members", counting)
    began = time.monotonic()
    run = run_agent(_request(tmp_path, [[{"sleep": 3 * TRACK_S}]]))
    assert run.exit_code == 0
    # the follower's looks while it ran (the first at TRACK_S), then the look at its end
    during = [at - began for at in looks[:-1]]
    assert len(during) >= 2
    assert all(at >= TRACK_S for at in during)


def _pump_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "wild-log-pump"}


@pytest.fixture
def thread_names(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads started from here on."""
    names: list[str] = []
    real_start = threading.Thread.start

    def noting_start(thread: threading.Thread) -> None:
        names.append(thread.name)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", noting_start)
    return names


def test_an_agent_that_leaves_nothing_behind_is_copied_without_a_pump_thread(
    tmp_path: Path, thread_names: list[str]
) -> None:
    # The thread that waits for the agent copies its output (issue 22 item 8): a thread's
    # start, wake-ups and hand-back were ~0.25 ms of CPU per iteration.
    run = run_agent(_request(tmp_path, [[{"print": "x" * 200_000}, {"print": "done"}]]))
    assert run.exit_code == 0
    assert _agent_output(run) == b"x" * 200_000 + b"\ndone\n"
    assert "wild-log-pump" not in thread_names


def test_what_a_job_left_behind_writes_after_the_agent_reaches_the_log(tmp_path: Path) -> None:
    before = _pump_threads()
    argv = ("sh", "-c", "echo early; (sleep 0.5; echo late) &")
    run = run_agent(_request(tmp_path, [], argv=argv))
    assert run.exit_code == 0
    [pump] = _pump_threads() - before  # the job holds the pipe: copied on a thread of its own
    pump.join(timeout=HANDSHAKE_S)
    assert not pump.is_alive()
    lines = run.log_path.read_text().splitlines()
    assert lines[1] == "early" and lines[2].startswith("[wild] ended ")
    assert lines[3:] == ["late"]


def test_a_flooding_agent_still_times_out_and_its_log_stays_bounded(tmp_path: Path) -> None:
    limit = 256 * 1024
    request = _request(
        tmp_path, [], argv=("yes",), timeout_s=0.5, env={"WILD_MAX_LOG_BYTES": str(limit)}
    )
    run = run_agent(request)
    assert run.timed_out
    assert run.output_bytes > limit  # copied while it flooded, by the waiting thread
    assert run.log_path.stat().st_size <= limit + 2 * 64 * 1024


def test_without_a_pidfd_the_output_is_copied_on_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, thread_names: list[str]
) -> None:
    from wild import process

    monkeypatch.setattr(process, "exit_notice", lambda _pid: None)  # an older kernel
    run = run_agent(_request(tmp_path, [[{"print": "x" * 200_000}, {"print": "done"}]]))
    assert _agent_output(run) == b"x" * 200_000 + b"\ndone\n"
    assert "wild-log-pump" in thread_names
