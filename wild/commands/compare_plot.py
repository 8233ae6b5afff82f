"""`wild --compare SWEEP --plot FILE.png`: the comparison as a picture, drawn with matplotlib
(the optional extra `wild[plot]`): the metric's curves, one line per group as the mean across
seeds with a ±std band, each diverged run marked where it diverged, a log y axis where the
values span decades; beside it the groups' means with their min-max range."""

from __future__ import annotations

from pathlib import Path

from wild.errors import WildError
from wild.metrics.follow import RunMetrics
from wild.parsers.metric_formats import diverged
from wild.parsers.run_compare import Comparison, band, group_label, spans_decades
from wild.parsers.runs import RunIndex, SweepRecord
from wild.paths import WildPaths


def plot_comparison(
    paths: WildPaths, index: RunIndex, sweep: SweepRecord, result: Comparison, target: Path
) -> None:
    try:
        import matplotlib as mpl  # noqa: PLC0415  (an optional extra: only when asked for)

        mpl.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        raise WildError(
            "--plot needs matplotlib: pip install 'wild[plot]' (or matplotlib)"
        ) from None
    figure, (curves_axis, bars_axis) = plt.subplots(1, 2, figsize=(11, 4.2), width_ratios=[3, 1])
    every: list[float] = []
    for number, group in enumerate(result.groups):
        color = f"C{number % 10}"
        runs = [index.runs[r] for r in group.runs]
        curves = []
        for run in runs:
            points = list(
                RunMetrics(paths, run, sweep.spec).refresh().series.get(result.metric, ())
            )
            curves.append(points)
            broke = next((step for step, value in points if diverged(value)), None)
            if broke is not None:
                finite = [v for _, v in points if not diverged(v)]
                curves_axis.plot(
                    [broke],
                    [finite[-1] if finite else 0.0],
                    "x",
                    color=color,
                    markersize=10,
                    mew=2.5,
                )
        line = band(curves)
        if line:
            steps = [p[0] for p in line]
            every += [p[1] for p in line]
            curves_axis.plot(
                steps,
                [p[1] for p in line],
                color=color,
                label=f"{group_label(group)} (n={len(runs)})",
            )
            curves_axis.fill_between(
                steps, [p[2] for p in line], [p[3] for p in line], color=color, alpha=0.2
            )
        if group.mean is not None:
            low, high = min(group.values), max(group.values)
            bars_axis.bar(
                number,
                group.mean,
                color=color,
                edgecolor="black" if group.best else color,
                linewidth=2,
            )
            bars_axis.errorbar(
                number,
                group.mean,
                yerr=[[group.mean - low], [high - group.mean]],
                color="black",
                capsize=4,
            )
    if spans_decades(every):
        curves_axis.set_yscale("log")
    curves_axis.set_xlabel("step")
    curves_axis.set_ylabel(result.metric)
    curves_axis.set_title(f"{sweep.name}: {result.metric}, mean ± std across seeds (x: diverged)")
    curves_axis.legend(fontsize=8)
    bars_axis.set_xticks(
        range(len(result.groups)), [group_label(g) for g in result.groups], rotation=30, fontsize=7
    )
    bars_axis.set_title("per run: " + ("best" if result.best_of_run else "last"), fontsize=9)
    figure.tight_layout()
    try:
        figure.savefig(target, dpi=110)
    except OSError as error:
        raise WildError(f"{target}: cannot write the plot ({error.strerror or error})") from None
    finally:
        plt.close(figure)
