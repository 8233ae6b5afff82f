"""The page's data, read from the files: pages of long lists, and problems instead of errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.serve.sample import NOW, XSS, make_project
from wild.commands import edits
from wild.metrics.follow import FileFollower
from wild.paths import WildPaths
from wild.serve import runs_view, view
from wild.serve.view import TEXT_CAP, Window, dashboard
from wild.workspace import ParseCache


def test_every_section_is_filled_from_the_files(tmp_path: Path) -> None:
    paths = make_project(tmp_path)
    data = dashboard(paths, NOW)
    assert data["problems"] == []
    banner = data["banner"]
    assert (banner["stage"], banner["alerts"], banner["critical"]) == ("running", 1, 1)
    assert banner["runs"]["running"] == 2
    assert data["tasks"]["rows"][0]["text"] == XSS  # as data; the page escapes
    assert data["alerts"]["rows"][0]["choices"] == ["rerun", "ignore", "stop_sweep"]
    blocked = data["queue"]["rows"][-1]
    assert (blocked["id"], blocked["reason"]) == ("task-002", "waiting for barrier train-done")
    assert data["barriers"][0] == {
        "id": "train-done",
        "status": "waiting",
        "type": "manual",
        "command": "",
        "commandSha256": None,
        "result": "",
        "lastCheck": None,
        "blocks": ["task-002"],
        "needsApproval": False,
        "canSatisfy": True,
    }
    assert "autonomous" in data["policy"]["modes"]
    assert data["human"][0]["content"] == "Use batch size 32 from now on"
    assert data["iterations"]["stats"]["iterations"] == 5
    assert len(data["runs"]["runs"]["rows"]) == 4


def test_long_lists_come_a_page_at_a_time(tmp_path: Path) -> None:
    paths = make_project(tmp_path, runs=0, iterations=0)
    lines = "".join(f"- [ ] [P2] task-{n + 100}: task number {n}\n" for n in range(250))
    paths.tasks.write_text(paths.tasks.read_text() + lines)
    data = dashboard(paths, NOW, Window(tasks_offset=200, tasks_limit=100))
    tasks = data["tasks"]
    assert (tasks["total"], tasks["offset"], len(tasks["rows"])) == (252, 200, 52)
    assert tasks["rows"][0]["text"] == "task number 198"
    assert data["queue"]["total"] == 254 and len(data["queue"]["rows"]) == 100


def test_huge_untrusted_text_is_capped(tmp_path: Path) -> None:
    paths = make_project(tmp_path, runs=0, iterations=0)
    edits.raise_alert(
        paths,
        severity="info",
        source="s",
        alert_type="t",
        description="x" * 50_000,
        context={},
        choices=(),
        now=NOW,
    )
    description = dashboard(paths, NOW)["alerts"]["rows"][-1]["description"]
    assert len(description) < TEXT_CAP + 40
    assert description.endswith("(50000 characters)")


def test_bad_files_show_as_problems_with_file_and_line(tmp_path: Path) -> None:
    paths = make_project(tmp_path)
    with paths.tasks.open("a") as tasks:
        tasks.write("- [?] not a task line\n")
    with paths.runs_log.open("ab") as runs:
        runs.write(b'{"kind": "run", "id": 7}\n')
    with (paths.run_dir("s1-000") / "metrics.jsonl").open("ab") as metrics:
        metrics.write(b"garbage\n")
    paths.events.write_bytes(paths.events.read_bytes() + b"{torn")
    data = dashboard(paths, NOW)
    problems = "\n".join(data["problems"])
    assert f"{paths.runs_log}:6:" in problems
    assert f"{paths.run_dir('s1-000') / 'metrics.jsonl'}:31: not valid JSON" in problems
    assert "incomplete last line" in problems
    assert data["runs"]["runs"]["total"] == 4  # the good lines still show


def test_a_folder_where_a_file_should_be_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    paths = make_project(tmp_path)
    paths.runs_log.unlink()
    paths.runs_log.mkdir()
    paths.events.unlink()
    paths.events.mkdir()
    data = dashboard(paths, NOW)
    problems = "\n".join(data["problems"])
    assert str(paths.runs_log) in problems and str(paths.events) in problems
    assert data["tasks"]["total"] == 2


def test_open_alerts_show_critical_first_then_newest_first(tmp_path: Path) -> None:
    paths = make_project(tmp_path, runs=0, iterations=0)
    for n, severity in enumerate(("info", "warning", "critical", "info")):
        edits.raise_alert(
            paths,
            severity=severity,
            source=f"s{n}",
            alert_type="t",
            description=f"d{n}",
            context={},
            choices=(),
            now=NOW,
        )
    rows = dashboard(paths, NOW)["alerts"]["rows"]
    assert [r["description"] for r in rows] == [
        "d2",
        "CUDA out of memory <script>alert(1)</script>",
        "d1",
        "d3",
        "d0",
    ]


def test_a_kept_history_and_curves_are_read_again_only_when_their_file_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the server's ParseCache, an alert appended re-reads neither events.log's history
    nor the runs' metrics files; a changed file is read again (and the page shows it)."""
    paths = make_project(tmp_path)
    reads: list[str] = []
    real_history, real_read = view._history, FileFollower._read

    def counting_history(paths: WildPaths) -> Any:
        reads.append("events")
        return real_history(paths)

    def counting_read(self: FileFollower, source: Any) -> None:
        reads.append(Path(self.path).parent.name)
        real_read(self, source)

    monkeypatch.setattr(view, "_history", counting_history)
    monkeypatch.setattr(FileFollower, "_read", counting_read)
    cache = ParseCache()
    first = dashboard(paths, NOW, cache=cache)
    assert reads.count("events") == 1 and len(reads) == 5  # the history, 4 runs' curves
    edits.add_human_input(paths, "one more note", urgent=False, now=NOW)
    second = dashboard(paths, NOW, cache=cache)
    assert (second["iterations"], second["runs"]) == (first["iterations"], first["runs"])
    assert len(second["human"]) == len(first["human"]) + 1
    assert len(reads) == 5
    run = first["runs"]["runs"]["rows"][0]["id"]
    with (paths.run_dir(run) / "metrics.jsonl").open("a") as handle:
        handle.write('{"step": 999, "loss": 0.01}\n')
    with paths.events.open("a") as handle:
        handle.write(paths.events.read_text().splitlines()[-1] + "\n")
    again = dashboard(paths, NOW, cache=cache)
    assert sorted(reads[5:]) == sorted(["events", run])
    assert again["runs"]["runs"]["rows"][0]["curves"]["loss"][-1] == (999.0, 0.01)


def test_a_long_burndown_is_thinned_like_a_curve_first_and_last_kept(tmp_path: Path) -> None:
    paths = make_project(tmp_path, runs=0, iterations=0)
    stamps = [f"2026-11-25T11:{n // 60:02d}:{n % 60:02d}.000Z" for n in range(300)]
    added = [{"id": f"e{n}", "ts": ts, "kind": "task-added"} for n, ts in enumerate(stamps)]
    paths.events.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in added))
    burndown = dashboard(paths, NOW)["iterations"]["burndown"]
    assert len(burndown) == runs_view.CURVE_POINTS  # 601 points before
    assert burndown[0] == {"at": "2026-11-25T11:00:00.000Z", "open": 0}
    assert burndown[-1] == {"at": "2026-11-25T12:00:00.000Z", "open": 2}
