"""The dit-training story: the denoiser trains for real, its sample sheets are valid PNGs, the
human-check packet and the continue/stop recommendation come from the runs' own metrics."""

from __future__ import annotations

import json
import struct
import zlib

from tests.stories.conftest import Project, expected
from wild.agents.signals import parse_signals
from wild.parsers.alerts import parse_entry
from wild.paths import WildPaths
from wild.policy.escalation import should_escalate
from wild.policy.presets import preset
from wild_stories.agent import story_step
from wild_stories.results import load_results

ANALYZE = "Analyze the finished sweep."


def decode_png(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and the filtered scanlines of an 8-bit greyscale PNG; every CRC checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, []
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert crc == zlib.crc32(kind + body), kind
        chunks.append((kind, body))
        at += 12 + length
    assert [k for k, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    width, height, depth, colour, *_ = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, colour) == (8, 0)
    raw = zlib.decompress(chunks[1][1])
    assert len(raw) == height * (width + 1)
    return width, height, raw


def test_the_sweep_gives_a_quality_summary_a_packet_and_a_recommendation(
    story_project: Project,
) -> None:
    project = story_project("dit-training")
    signals = parse_signals(story_step(ANALYZE, project, "analysis"))
    # The packet is a notification that blocks nothing: the story completes.
    assert signals.promises == ("NOTIFY_HUMAN", "COMPLETE")
    results = project / "results"
    assert json.loads((results / "conclusions.json").read_text()) == expected("dit-training")
    summary = (results / "quality_summary.md").read_text()
    assert summary.count("| diverged |") == 2
    packet = (results / "human-check.md").read_text()
    sheets = sorted((results / "human-check").iterdir())
    pixels: dict[str, bytes] = {}
    assert len(sheets) == 8  # step 0 and step 5 of each of the 4 healthy runs
    for sheet in sheets:
        assert sheet.name.endswith(("-step-0.png", "-step-5.png"))
        assert f"](human-check/{sheet.name})" in packet
        width, height, raw = decode_png(sheet.read_bytes())
        assert (width, height) == (202, 102)
        pixels[sheet.name] = raw
    for name, raw in pixels.items():  # each run's samples changed between step 0 and step 5
        if name.endswith("-step-0.png"):
            assert raw != pixels[name.replace("-step-0", "-step-5")]
    report = (results / "report.md").read_text()
    assert "**Recommendation: continue.**" in report


def test_step_5_samples_are_closer_to_the_data_than_step_0(story_project: Project) -> None:
    project = story_project("dit-training")
    for run in load_results(WildPaths(project / ".wild")):
        if run.params["lr"] != 20.0:
            quality = [s["sample_nn_mse"] for s in run.curve]
            assert len(quality) == 6
            assert quality[-1] < quality[0]
            assert [s["sample"] for s in run.curve][-1] == "samples/step-5.png"


def test_a_diverged_run_raises_a_critical_alert_that_the_presets_page_on(
    story_project: Project,
) -> None:
    project = story_project("dit-training")
    lines = (project / ".wild" / "alerts.jsonl").read_bytes().splitlines()
    alerts = [parse_entry(line, n)[0] for n, line in enumerate(lines, start=1)]
    diverged = {r.id for r in load_results(WildPaths(project / ".wild")) if r.summary["diverged"]}
    assert len(diverged) == 2
    assert {a.source for a in alerts if a and a.severity == "critical"} == diverged
    alert = alerts[0]
    assert alert is not None
    assert alert.choices == ("stop_run", "ignore")

    def decision(name: str) -> tuple[bool, str, bool]:
        verdict = should_escalate(alert, preset(name), attempts=0, minutes_since_progress=0)
        return verdict.escalate, verdict.urgency, verdict.blocking

    # Paged at once, urgently; wild-night pages too but never waits; balanced lets the
    # agent handle it (it answers stop_run, see test_story_folders).
    assert decision("page_on_alert") == (True, "high", False)
    assert decision("wild_night") == (True, "high", False)
    assert decision("balanced")[0] is False


def test_the_recommendation_follows_the_curve(story_project: Project) -> None:
    project = story_project("dit-training")
    paths = WildPaths(project / ".wild")
    best = next(r for r in load_results(paths) if r.params == {"lr": 3.0, "width": 128})
    metrics = paths.run_dir(best.id) / "metrics.jsonl"
    lines = [json.loads(line) for line in metrics.read_text().splitlines()]
    lines[-1]["sample_nn_mse"] = lines[-2]["sample_nn_mse"]  # the last stage gained nothing
    metrics.write_text("".join(json.dumps(line) + "\n" for line in lines))
    story_step(ANALYZE, project, "analysis")
    conclusions = json.loads((project / "results" / "conclusions.json").read_text())
    assert conclusions["recommendation"] == "stop"
    assert "**Recommendation: stop.**" in (project / "results" / "report.md").read_text()
