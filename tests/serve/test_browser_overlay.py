"""The sweep overlay in a real headless Chromium: one chart per metric, each with its own y
axis (log where the values span decades), runs grouped across seeds as mean with a band, and
a run that went NaN marked."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.serve.browser import screenshot, wait_until
from tests.serve.test_browser import all_css, by_css, no_page_errors, open_page
from wild.clock import SystemClock
from wild.commands.init import init_wild
from wild.parsers.runs import RunRecord, SweepRecord, run_line, sweep_line
from wild.paths import WildPaths
from wild.serve.server import Dashboard

pytestmark = pytest.mark.timeout(120)
NAN_RUN = "s1-003"


def _sweep_project(root: Path) -> WildPaths:
    """lr 0.1 and 0.01, two seeds each; the loss spans four decades, the accuracy does not;
    run s1-003 (lr 0.01, seed 1) goes NaN at step 30."""
    paths = WildPaths(root / ".wild")
    init_wild(paths)
    runs = [
        RunRecord(f"s1-00{n}", "s1", {"lr": lr, "seed": seed}, "true", "finished")
        for n, (lr, seed) in enumerate([(0.1, 0), (0.1, 1), (0.01, 0), (0.01, 1)])
    ]
    sweep = SweepRecord("s1", "lr-sweep", {"name": "lr-sweep"}, "done", tuple(r.id for r in runs))
    lines = [sweep_line(sweep), *(run_line(r) for r in runs)]
    paths.runs_log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    for n, run in enumerate(runs):
        folder = paths.run_dir(run.id)
        folder.mkdir(parents=True)
        rate = 0.2 if run.params["lr"] == 0.1 else 0.1
        rows = []
        for step in range(0, 50, 2):
            loss = 10 * math.exp(-rate * step) * (1 + 0.05 * n)
            if run.id == NAN_RUN and step >= 30:
                loss = math.nan
            acc = 0.4 + 0.004 * step * (2 if run.params["lr"] == 0.1 else 1) + 0.02 * (n % 2)
            rows.append({"step": step, "loss": loss, "acc": acc})
        (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return paths


def test_the_overlay_has_an_axis_per_metric_groups_seeds_and_marks_the_nan_run(
    driver: Any, tmp_path: Path
) -> None:
    paths = _sweep_project(tmp_path)
    with Dashboard(paths, SystemClock(), port=0) as board:
        open_page(driver, board.url)
        wait_until(driver, "the overlay", lambda d: all_css(d, ".overlay svg.overlay-chart"))
        charts = {
            c.get_attribute("data-metric"): c for c in all_css(driver, ".overlay svg.overlay-chart")
        }
        assert set(charts) == {"loss", "acc"}  # one chart per metric
        assert charts["loss"].get_attribute("data-scale") == "log"
        assert charts["acc"].get_attribute("data-scale") == "linear"
        for metric, chart in charts.items():
            ticks = [t.text for t in chart.find_elements("css selector", ".y-tick")]
            assert len(ticks) == 2, metric  # its own y axis, top and bottom
            groups = [
                m.get_attribute("data-group")
                for m in chart.find_elements("css selector", "polyline.mean")
            ]
            assert groups == ["lr=0.1", "lr=0.01"], metric  # two seeds each: two groups
            assert len(chart.find_elements("css selector", "polygon.band")) == 2
        own_axes = {
            charts["loss"].find_element("css selector", ".y-tick").text,
            charts["acc"].find_element("css selector", ".y-tick").text,
        }
        assert len(own_axes) == 2  # the accuracy is not drawn on the loss's scale
        marks = charts["loss"].find_elements("css selector", ".diverged")
        assert [m.get_attribute("data-run") for m in marks] == [NAN_RUN]
        assert "1 diverged" in by_css(driver, ".overlay").text
        # Each run's card draws each metric on a chart of its own, the NaN run's loss marked.
        card = by_css(driver, f'#runs .run[data-run="{NAN_RUN}"]')
        assert len(card.find_elements("css selector", ".run-chart svg")) == 2
        assert "loss (diverged at step 30" in card.text
        no_page_errors(driver)
        driver.execute_script("document.getElementById('runs-card').scrollIntoView()")
        shot = screenshot(driver, "dashboard-overlay", tmp_path)
        assert shot.is_file()
