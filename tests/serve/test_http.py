"""The dashboard over real HTTP on 127.0.0.1: the token, the cookie, refusals and actions."""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from pathlib import Path

import orjson

from tests.serve.conftest import Client
from wild.barriers.approvals import load_approvals
from wild.commands import edits
from wild.serve.server import MAX_BODY
from wild.store.files import read_text


def test_the_printed_url_sets_an_httponly_strict_cookie_and_drops_the_token(board: Client) -> None:
    reply = board.request("GET", f"/?token={board.board.access.token}")
    assert reply.status == 303
    assert reply.headers["Location"] == "/"
    other = board.request("GET", f"/?project=b&token={board.board.access.token}")
    assert other.headers["Location"] == "/?project=b"
    cookie = reply.headers["Set-Cookie"]
    assert cookie.startswith(board.cookie)
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    page = board.get("/")
    assert page.status == 200
    assert b'<textarea name="text"' in page.body
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]


def test_every_route_needs_the_token(board: Client) -> None:
    for target in ("/", "/static/app.js", "/api/view", "/api/stream", "/api/log?name=x.log"):
        assert board.request("GET", target).status == 403, target
        wrong = {"Cookie": f"{board.board.access.cookie_name}=not-the-token"}
        assert board.request("GET", target, wrong).status == 403, target
    assert board.request("GET", "/?token=guess").status == 403


def test_a_foreign_host_is_refused_even_with_the_token(board: Client) -> None:
    reply = board.get("/api/view", Host=f"evil.example:{board.board.port}")
    assert reply.status == 403
    assert b"Host" in reply.body


def test_a_post_needs_our_origin_or_the_token_header(board: Client) -> None:
    body = {"action": "human-input", "text": "from elsewhere"}
    assert board.act(body, Origin="http://evil.example").status == 403
    assert board.act(body, Origin="null").status == 403
    no_origin = {"Cookie": board.cookie, "Content-Type": "application/json"}
    assert board.request("POST", "/api/action", no_origin, orjson.dumps(body)).status == 403
    assert "from elsewhere" not in read_text(board.paths.human)
    token = {**no_origin, "X-Wild-Token": board.board.access.token}
    assert board.request("POST", "/api/action", token, orjson.dumps(body)).status == 200
    assert "from elsewhere" in read_text(board.paths.human)


def test_a_post_must_be_json_and_small(board: Client) -> None:
    form = board.act({"action": "pause"}, **{"Content-Type": "application/x-www-form-urlencoded"})
    assert form.status == 415
    huge = {"action": "human-input", "text": "x" * MAX_BODY}
    assert board.act(huge).status == 413
    assert (
        board.request(
            "POST",
            "/api/action",
            {"Cookie": board.cookie, "Origin": board.origin, "Content-Type": "application/json"},
            b"{not json",
        ).status
        == 400
    )


def test_human_input_lands_in_human_md(board: Client) -> None:
    reply = board.act({"action": "human-input", "text": "Use lr 3e-4", "urgent": True})
    assert reply.status == 200, reply.body
    text = read_text(board.paths.human)
    assert "Use lr 3e-4" in text
    assert "URGENT" in text.upper()


def test_answering_an_alert_appends_its_resolution_and_a_second_answer_is_a_conflict(
    board: Client,
) -> None:
    alert = board.get("/api/view").json()["alerts"]["rows"][0]
    reply = board.act({"action": "answer-alert", "id": alert["id"], "choice": "rerun"})
    assert reply.status == 200, reply.body
    last = orjson.loads(board.paths.alerts.read_bytes().splitlines()[-1])
    assert (last["id"], last["status"]) == (alert["id"], "resolved")
    assert last["resolution"] == {"choice": "rerun", "note": None}
    again = board.act({"action": "answer-alert", "id": alert["id"], "choice": "ignore"})
    assert again.status == 409
    assert "not open any more" in again.json()["error"]


def test_a_choice_the_alert_does_not_offer_is_refused(board: Client) -> None:
    alert = board.get("/api/view").json()["alerts"]["rows"][0]
    reply = board.act({"action": "answer-alert", "id": alert["id"], "choice": "rm -rf /"})
    assert reply.status == 400
    assert "not one of them" in reply.json()["error"]


def test_ticking_a_task_on_a_stale_view_is_refused(board: Client) -> None:
    tick = {"action": "tick-task", "id": "task-001", "seen": "todo", "status": "complete"}
    assert board.act(tick).status == 200
    assert "- [x] [P1] task-001" in read_text(board.paths.tasks)
    stale = board.act(tick)
    assert stale.status == 409
    assert "is complete now, not todo" in stale.json()["error"]


def test_a_tick_to_a_status_tasks_md_has_not_is_refused(board: Client) -> None:
    tick = {"action": "tick-task", "id": "task-001", "seen": "todo", "status": "done"}
    refused = board.act(tick)
    assert refused.status == 400
    assert refused.json()["error"] == (
        "status must be one of todo, in-progress, complete, cancelled, not 'done'"
    )
    assert "- [ ] [P1] task-001" in read_text(board.paths.tasks)


def test_policy_barrier_task_and_control_actions_write_their_files(board: Client) -> None:
    assert board.act({"action": "update-policy", "mode": "autonomous"}).status == 200
    assert "autonomous" in read_text(board.paths.policy)
    assert board.act({"action": "satisfy", "id": "train-done"}).status == 200
    assert "[SATISFIED] train-done" in read_text(board.paths.barriers)
    assert board.act({"action": "add-task", "text": "Write the report"}).status == 200
    assert "Write the report" in read_text(board.paths.tasks)
    for command in ("pause", "resume", "stop"):
        assert board.act({"action": command}).status == 200
    commands = [
        orjson.loads(line)["command"] for line in board.paths.control.read_bytes().splitlines()
    ]
    assert commands == ["pause", "resume", "stop"]
    bad = board.act({"action": "update-policy", "mode": "yolo"})
    assert bad.status == 400


def test_a_broken_file_shows_as_a_problem_not_an_error_page(board: Client) -> None:
    with board.paths.runs_log.open("ab") as log:
        log.write(b"{this is not json\n")
    board.paths.events.write_bytes(board.paths.events.read_bytes() + b"[1, 2]\n")
    reply = board.get("/api/view")
    assert reply.status == 200
    problems = reply.json()["problems"]
    assert any("runs.jsonl:6: not valid JSON" in p for p in problems), problems


def test_a_log_outside_the_logs_folder_cannot_be_read(board: Client) -> None:
    assert board.get("/api/log?name=../state.json").status == 400
    assert board.get("/api/log?run=../../etc").status == 400
    reply = board.get("/api/log?name=iteration-1.log")
    assert "iteration 1 log line" in reply.json()["text"]


def _next_version(sock: socket.socket, buffer: bytearray) -> int:
    """The version of the next complete server-sent event (blocking, under the socket timeout)."""
    while b"\n\n" not in buffer[buffer.find(b"data: ") :] or b"data: " not in buffer:
        buffer += sock.recv(4096)
    start = buffer.find(b"data: ")
    end = buffer.find(b"\n", start)
    version = int(buffer[start + 6 : end])
    del buffer[: end + 1]
    return version


def test_the_stream_sends_an_event_when_another_process_appends_an_alert(board: Client) -> None:
    with socket.create_connection(("127.0.0.1", board.board.port), timeout=10) as sock:
        request = (
            f"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{board.board.port}\r\n"
            f"Cookie: {board.cookie}\r\n\r\n"
        )
        sock.sendall(request.encode())
        buffer = bytearray()
        first = _next_version(sock, buffer)
        edits.raise_alert(
            board.paths,
            severity="warning",
            source="job-9",
            alert_type="divergence",
            description="loss is NaN",
            context={},
            choices=(),
            now=datetime.now(UTC),
        )
        assert _next_version(sock, buffer) > first
        # A run's metrics file, watched while the run is not finished, also wakes the page.
        seen = board.get("/api/view").json()["version"]
        with (board.paths.run_dir("s1-000") / "metrics.jsonl").open("ab") as metrics:
            metrics.write(b'{"step": 100, "loss": 0.05}\n')
        while (version := _next_version(sock, buffer)) <= seen:
            pass
        assert version > seen


def test_a_folder_where_tasks_md_belongs_is_shown_not_a_500(board: Client) -> None:
    board.paths.tasks.unlink()
    board.paths.tasks.mkdir()
    reply = board.get("/api/view")
    assert reply.status == 200
    assert str(board.paths.tasks) in reply.json()["fatal"]


def _barrier_shown(board: Client, barrier_id: str) -> dict[str, object]:
    view = orjson.loads(board.get("/api/view").body)
    found: dict[str, object] = next(b for b in view["barriers"] if b["id"] == barrier_id)
    return found


def test_approve_names_the_command_shown_and_a_changed_command_is_refused(board: Client) -> None:
    """The page showed `nvidia-smi -L`; the file says `touch PWNED` when the click lands."""
    shown_text = "\n## [WAITING] gpu-free\n- Type: command-check\n- Check: nvidia-smi -L\n"
    board.paths.barriers.write_text(read_text(board.paths.barriers) + shown_text)
    shown = _barrier_shown(board, "gpu-free")
    assert shown["needsApproval"] is True
    swapped = read_text(board.paths.barriers).replace("nvidia-smi -L", "touch PWNED")
    board.paths.barriers.write_text(swapped)
    click = {"action": "approve", "id": "gpu-free", "sha256": shown["commandSha256"]}
    refused = board.act(click)
    assert refused.status == 409
    assert b"changed since it was shown" in refused.body
    assert not load_approvals(board.paths.project).allows("touch PWNED")
    assert not load_approvals(board.paths.project).allows("nvidia-smi -L")
    assert board.act({"action": "approve", "id": "gpu-free"}).status == 400  # no hash: refused
    assert not load_approvals(board.paths.project).allows("touch PWNED")
    again = _barrier_shown(board, "gpu-free")  # the human looks again and approves what is shown
    click = {"action": "approve", "id": "gpu-free", "sha256": again["commandSha256"]}
    assert board.act(click).status == 200
    assert load_approvals(board.paths.project).allows("touch PWNED")


def test_a_log_that_is_a_link_is_not_served_through(board: Client, tmp_path: Path) -> None:
    """An agent replaced a log with a link to a file outside the project: the page gets the
    refusal, never the file's bytes."""
    secret = tmp_path / "outside-secret"
    secret.write_text("ssh-ed25519 AAAA private\n")
    log = board.paths.logs / "iteration-1.log"
    log.unlink()
    log.symlink_to(secret)
    reply = board.get("/api/log?name=iteration-1.log")
    assert reply.status == 200
    assert "AAAA" not in reply.json()["text"]
    assert "a symbolic link" in reply.json()["text"]
