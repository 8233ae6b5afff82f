"""`wild --compare`: runs grouped across seeds, mean ± std, the best group marked, diverged
and failed runs counted apart; the analysis prompt carries the table and names only files
that exist."""

from __future__ import annotations

import json
import math
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from wild import prompts
from wild.cli import cli
from wild.commands.init import init_wild
from wild.errors import UsageError
from wild.metrics.comparison import sweep_comparison, sweep_metrics
from wild.parsers.metric_summary import RunSummary
from wild.parsers.run_compare import band, compare, seed_like, spans_decades
from wild.parsers.runs import RunRecord, RunStatus, SweepRecord, run_line, sweep_line
from wild.paths import WildPaths
from wild.store.runs_log import RunLog, read_runs

SPEC = {"name": "lr", "objective": {"metric": "val_loss", "mode": "min"}}
# (lr, seed, status, val_loss curve)
RUNS: list[tuple[float, int, RunStatus, list[float]]] = [
    (0.1, 0, "finished", [1.0, 0.5]),
    (0.1, 1, "finished", [1.0, 0.7]),
    (0.01, 0, "finished", [1.0, 0.9]),
    (0.01, 1, "finished", [1.0, 0.8]),
    (1.0, 0, "finished", [1.0, math.nan]),
    (1.0, 1, "failed", []),
]


def _project(tmp_path: Path) -> WildPaths:
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    runs = [
        RunRecord(f"s1-00{n}", "s1", {"lr": lr, "seed": seed}, "true", status)
        for n, (lr, seed, status, _) in enumerate(RUNS)
    ]
    sweep = SweepRecord("s1", "lr", SPEC, "done", tuple(r.id for r in runs))
    lines = [sweep_line(sweep), *(run_line(r) for r in runs)]
    paths.runs_log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    for run, (*_, curve) in zip(runs, RUNS, strict=True):
        paths.run_dir(run.id).mkdir(parents=True)
        if curve:
            (paths.run_dir(run.id) / "metrics.jsonl").write_text(
                "".join(json.dumps({"step": s, "val_loss": v}) + "\n" for s, v in enumerate(curve))
            )
    return paths


def test_seed_like_names() -> None:
    assert all(map(seed_like, ["seed", "data_seed", "seed_init", "rng", "random_state", "SEED"]))
    assert not any(map(seed_like, ["lr", "seeds_per_batch", "strength"]))


def test_compare_groups_across_seeds_and_counts_diverged_and_failed_apart(tmp_path: Path) -> None:
    paths = _project(tmp_path)
    result = CliRunner().invoke(cli, ["--dir", str(paths.root), "--compare", "s1"])
    assert result.exit_code == 0, result.output
    assert result.output == (
        "Sweep s1 (lr): val_loss (best of each run; lower is better), runs grouped by lr; "
        "* marks the best group.\n\n"
        "| group | n | mean ± std | min | max | diverged | failed | not ended |\n"
        "|---|---|---|---|---|---|---|---|\n"
        "| lr=0.1 * | 2 | 0.6 ± 0.1414 | 0.5 | 0.7 | 0 | 0 | 0 |\n"
        "| lr=0.01 | 2 | 0.85 ± 0.07071 | 0.8 | 0.9 | 0 | 0 | 0 |\n"
        "| lr=1.0 | 0 | - | - | - | 1 | 1 | 0 |\n"
    )
    data = orjson.loads(
        CliRunner().invoke(cli, ["--dir", str(paths.root), "--compare", "lr", "--json"]).output
    )
    assert [(g["params"], g["n"], g["best"]) for g in data["groups"]] == [
        ({"lr": 0.1}, 2, True),
        ({"lr": 0.01}, 2, False),
        ({"lr": 1.0}, 0, False),
    ]


def test_compare_by_a_chosen_parameter_and_metric(tmp_path: Path) -> None:
    paths = _project(tmp_path)
    out = (
        CliRunner()
        .invoke(
            cli,
            [
                "--dir",
                str(paths.root),
                "--compare",
                "s1",
                "--group-by",
                "seed",
                "--metric",
                "val_loss",
            ],
        )
        .output
    )
    assert "runs grouped by seed" in out and "| seed=0 * | 2 | 0.7 ± 0.2828 |" in out
    bad = CliRunner().invoke(cli, ["--dir", str(paths.root), "--compare", "s1", "--group-by", "x"])
    assert bad.exit_code == 2
    assert "--group-by x: sweep s1 has no such parameter (it has: lr, seed)" in bad.output
    assert CliRunner().invoke(cli, ["--dir", str(paths.root), "--compare", "nope"]).exit_code == 1


def test_the_analysis_prompt_carries_the_comparison_and_names_only_files_that_exist(
    tmp_path: Path,
) -> None:
    # Before, it told the agent every run had metrics.jsonl and metrics.json, present or not.
    paths = _project(tmp_path)
    index = read_runs(paths.runs_log).index
    sweep = index.sweeps["s1"]
    runs = index.of_sweep("s1")
    values = prompts.analysis_values(
        sweep, runs, lambda r: str(paths.run_dir(r)), "r.md", sweep_metrics(paths, index, sweep)
    )
    assert "| lr=0.1 * | 2 | 0.6 ± 0.1414 |" in str(values["comparison"])
    files = str(values["metric_paths"])
    assert f"`{paths.run_dir('s1-000')}/` `metrics.jsonl`, `log`" in files
    assert f"`{paths.run_dir('s1-005')}/` `log` (no metric file found)" in files
    assert "metrics.json`" not in files
    table = str(values["run_table"])
    assert "DIVERGED" in table and "best val_loss=0.5 at step 1" in table


def test_band_and_log_axis_rules() -> None:
    assert band([[(0, 1.0), (1, 2.0)], [(0, 3.0), (1, math.nan)]]) == [
        (0, 2.0, 1.0, 3.0),
        (1, 2.0, 2.0, 2.0),
    ]
    assert spans_decades([0.001, 1.0]) and not spans_decades([0.5, 2.0])


def test_plot_writes_a_png(tmp_path: Path) -> None:
    paths = _project(tmp_path)
    target = tmp_path / "cmp.png"
    result = CliRunner().invoke(
        cli, ["--dir", str(paths.root), "--compare", "s1", "--plot", str(target)]
    )
    assert result.exit_code == 0, result.output
    assert result.output.endswith(f"Wrote {target}\n")
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _project(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    result = CliRunner().invoke(
        cli, ["--dir", str(paths.root), "--compare", "s1", "--plot", str(tmp_path / "x.png")]
    )
    assert result.exit_code == 1
    assert result.output == (
        "Error: --plot needs matplotlib: pip install 'wild[plot]' (or matplotlib)\n"
    )


def test_compare_is_pure_over_summaries() -> None:
    run = RunRecord("a", "s", {"lr": 1, "seed": 0}, "x", "finished")
    found = compare([run], {"a": RunSummary({"acc": 0.5})}, "acc", "max")
    assert found.groups[0].best and found.groups[0].values == (0.5,)


def test_the_comparison_keeps_of_each_run_what_it_shows_not_its_line(tmp_path: Path) -> None:
    # `wild --sweep FILE --run` ends with the comparison of every run of its sweep: it held
    # every run's whole record (the line's object) at once, tens of MB at 10,000 runs. Read
    # through the loop's lean index, each record is read, summed up and let go: lines with
    # a big field wild does not know cost the comparison no more than thin ones.
    notes = "n" * 20_000

    def peak_of(folder: Path, extra: dict[str, str]) -> int:
        paths = WildPaths(folder / ".wild")
        init_wild(paths)
        runs = [
            RunRecord(f"s1-{n:03d}", "s1", {"lr": n % 4, "seed": n}, "true", "finished")
            for n in range(100)
        ]
        sweep = SweepRecord("s1", "lr", SPEC, "done", tuple(r.id for r in runs))
        lines = [sweep_line(sweep), *({**run_line(r), **extra} for r in runs)]
        paths.runs_log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
        for run in runs:
            paths.run_dir(run.id).mkdir(parents=True)
            (paths.run_dir(run.id) / "metrics.jsonl").write_text('{"step": 1, "val_loss": 0.5}\n')
        log = RunLog(paths.runs_log, lean=True)
        log.refresh()
        sweep_comparison(paths, log.index, log.index.sweeps["s1"])  # readers imported, kept
        tracemalloc.start()
        try:
            start, _ = tracemalloc.get_traced_memory()
            comparison = sweep_comparison(paths, log.index, log.index.sweeps["s1"])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert [len(group.runs) for group in comparison.groups] == [25, 25, 25, 25]
        return peak - start

    (tmp_path / "thin").mkdir()
    (tmp_path / "fat").mkdir()
    thin = peak_of(tmp_path / "thin", {})
    fat = peak_of(tmp_path / "fat", {"notes": notes})
    assert fat - thin < 100 * len(notes) / 4


def _a_finished_sweep_of_50_runs(tmp_path: Path) -> tuple[WildPaths, list[RunRecord]]:
    """A project whose runs.jsonl holds sweep `s1` and its 50 finished runs (`i` 0-49)."""
    paths = WildPaths(tmp_path / ".wild")
    init_wild(paths)
    runs = [RunRecord(f"s1-{n:03d}", "s1", {"i": n}, "true", "finished") for n in range(50)]
    sweep = SweepRecord("s1", "i", {"name": "i"}, "done", tuple(r.id for r in runs))
    lines = [sweep_line(sweep), *(run_line(r) for r in runs)]
    paths.runs_log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return paths, runs


def test_a_comparison_refused_for_want_of_a_metric_holds_no_run_beside_the_summaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The end of `wild --sweep FILE --run` whose runs logged no metric: every run's compared
    # record was kept beside its summary (~0.4 KB a run) for a table it then refused. The
    # summaries come first; the runs are read again only for a table that is made.
    from wild.metrics import comparison as module

    compared: list[str] = []
    real = module._compared

    def counted(run: RunRecord) -> RunRecord:
        compared.append(run.id)
        return real(run)

    monkeypatch.setattr(module, "_compared", counted)
    paths, runs = _a_finished_sweep_of_50_runs(tmp_path)
    log = RunLog(paths.runs_log, lean=True)
    log.refresh()
    with pytest.raises(UsageError, match="declares no objective"):
        sweep_comparison(paths, log.index, log.index.sweeps["s1"])
    assert compared == []
    (paths.run_dir("s1-007")).mkdir(parents=True)
    (paths.run_dir("s1-007") / "metrics.jsonl").write_text('{"step": 1, "loss": 0.5}\n')
    table = sweep_comparison(paths, log.index, log.index.sweeps["s1"])
    assert compared == [r.id for r in runs] and table.metric == "loss"
    assert [g.values for g in table.groups if g.values] == [(0.5,)]


def test_the_comparison_holds_one_summary_for_every_run_that_logged_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The end of a 10,000-run `wild --sweep FILE --run`: each run's summary (and the metric
    # files it names) was held to the end of the table, ~0.2 KB a run, though a run that
    # logged nothing has nothing to compare. They are one object; a run's files are not kept.
    from wild.metrics import comparison as module
    from wild.metrics.kept import summaries as real

    held: list[dict[str, RunSummary]] = []

    def kept(*args: Any, **kwargs: Any) -> dict[str, RunSummary]:
        found = real(*args, **kwargs)
        held.append(found)
        return found

    monkeypatch.setattr(module, "summaries", kept)
    paths, runs = _a_finished_sweep_of_50_runs(tmp_path)
    for run in runs:
        paths.run_dir(run.id).mkdir(parents=True)
    (paths.run_dir("s1-007") / "metrics.jsonl").write_text('{"step": 1, "loss": 0.5}\n')
    log = RunLog(paths.runs_log, lean=True)
    log.refresh()
    table = sweep_comparison(paths, log.index, log.index.sweeps["s1"])
    assert table.metric == "loss" and [g.values for g in table.groups if g.values] == [(0.5,)]
    (found,) = held
    assert len({id(s) for run_id, s in found.items() if run_id != "s1-007"}) == 1
    assert found["s1-007"].last == {"loss": 0.5} and found["s1-007"].files == ()
