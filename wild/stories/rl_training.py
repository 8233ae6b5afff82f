"""The rl-training story's analysis: which clip strategy and which off-policiness work better.

Runs are compared by their area under the accuracy curve (`auc_accuracy`, the mean accuracy
over training, so a setting that learns faster from the same samples scores higher) and by
final accuracy. A setting wins on the mean over every finished run that has it; the report
also counts the matched pairs (same model and other setting) it wins, so a reader sees
whether the answer holds everywhere or only on average. Ties go to the first value in grid
order, so the answer is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from wild.parsers.run_compare import flat
from wild.stories.analysis import Analysis, number, table
from wild.stories.plot import Series, line_chart, mean_curve
from wild.stories.results import RunResult

SCORE = "auc_accuracy"


def _score(run: RunResult) -> float:
    """The run's score; only runs that have one (checked in `analyze`) are compared."""
    return number(run.summary, SCORE) or 0.0


def _clip_value(label: str) -> float | str:
    try:
        return float(label)
    except ValueError:
        return label


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return fmean(known) if known else None


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def pair_label(params: dict[str, Any]) -> str:
    return f"{params.get('batch_size')}/{params.get('mini_batch_size')}"


def _best(groups: dict[str, list[float]]) -> str:
    """The value with the highest mean; the first in grid order on a tie."""
    means = {k: fmean(v) for k, v in groups.items() if v}
    return max(means, key=lambda k: (means[k], -list(means).index(k)))


def setting(run: RunResult) -> dict[str, str]:
    """A run's grid point as labels: model, clip_coef, and the off-policiness pair."""
    p = flat(run.params)
    return {
        "model": str(p.get("model")),
        "clip_coef": str(p.get("clip_coef")),
        "offpolicy": pair_label(p),
    }


def _matched_wins(runs: Sequence[RunResult], key: str, winner: str) -> tuple[int, int, int]:
    """Over groups of runs that differ only in `key`: in how many the winner scores highest
    alone, in how many it ties for highest, and how many groups there are."""
    groups: dict[tuple[tuple[str, str], ...], dict[str, float]] = {}
    for run in runs:
        point = setting(run)
        rest = tuple((k, v) for k, v in point.items() if k != key)
        groups.setdefault(rest, {})[point[key]] = _score(run)
    full = [g for g in groups.values() if len(g) > 1 and winner in g]
    top = [[k for k, v in g.items() if v == max(g.values())] for g in full]
    return top.count([winner]), sum(winner in t and len(t) > 1 for t in top), len(full)


def _wins(counts: tuple[int, int, int], what: str) -> str:
    wins, ties, total = counts
    tied = f" and ties in {ties}" if ties else ""
    return f"it is best in {wins} of {total} matched {what}{tied}"


def analyze(runs: Sequence[RunResult], human: str = "") -> Analysis:
    """The report from the runs' own metrics (`human` is unused: this story never asks)."""
    done = [r for r in runs if r.status == "finished" and number(r.summary, SCORE) is not None]
    if not done:
        return Analysis(
            report="# RL sweep report\n\nNo run finished with metrics; nothing to compare.\n",
            conclusions={"runs": len(runs), "finished": 0},
            need_human="no run of the rl sweep finished with metrics",
        )
    by_clip: dict[str, list[float]] = {}
    by_clip_offpolicy: dict[str, list[float]] = {}
    by_pair: dict[str, list[float]] = {}
    for run in done:
        p, score = flat(run.params), _score(run)
        by_clip.setdefault(str(p.get("clip_coef")), []).append(score)
        by_pair.setdefault(pair_label(p), []).append(score)
        if p.get("mini_batch_size") != p.get("batch_size"):
            by_clip_offpolicy.setdefault(str(p.get("clip_coef")), []).append(score)
    best_clip, best_pair = _best(by_clip), _best(by_pair)
    clip_wins = _matched_wins(done, "clip_coef", best_clip)
    pair_wins = _matched_wins(done, "offpolicy", best_pair)
    reruns = [r for r in runs if r.attempt > 1]
    conclusions = {
        "best_clip_coef": _clip_value(best_clip),
        "best_offpolicy": best_pair,
        "runs": len(runs),
        "finished": len(done),
        "reruns": len(reruns),
    }
    means = {f"clip {k}": fmean(v) for k, v in by_clip.items()}
    off_means = {f"clip {k}": fmean(v) for k, v in by_clip_offpolicy.items()}
    pair_means = {k: fmean(v) for k, v in by_pair.items()}
    answers = [
        f"- **Which clip strategy works better?** `clip_coef={best_clip}`: mean accuracy AUC "
        + ", ".join(f"{k} {v:.3f}" for k, v in means.items())
        + f"; {_wins(clip_wins, 'pairs')}. In the off-policy "
        "settings alone: "
        + (", ".join(f"{k} {v:.3f}" for k, v in off_means.items()) or "none ran")
        + "."
        + (
            " On-policy (`mini_batch_size = batch_size`) both clips score the same: the ratio "
            "is 1 there and nothing is clipped, so clip only matters once samples go stale."
            if _on_policy_tie(done)
            else ""
        ),
        f"- **Which off-policiness setting works better?** `{{batch_size, mini_batch_size}} = "
        f"{best_pair}`: mean accuracy AUC "
        + ", ".join(f"{k} {v:.3f}" for k, v in pair_means.items())
        + f"; {_wins(pair_wins, 'groups')}.",
        f"- Over {len(done)} finished runs of {len(runs)}"
        + (f" ({len(reruns)} rerun after a failure)." if reruns else "."),
    ]
    rows = [
        [
            r.id,
            str(flat(r.params).get("model")),
            str(flat(r.params).get("clip_coef")),
            pair_label(flat(r.params)),
            r.status,
            str(r.attempt),
            _cell(number(r.summary, "final_accuracy")),
            _cell(number(r.summary, SCORE)),
            _cell(_mean([number(s, "clip_frac") for s in r.curve])),
        ]
        for r in runs
    ]
    run_table = table(
        ["run", "model", "clip", "batch/mini", "status", "attempts", "final acc", "AUC", "clipped"],
        rows,
    )
    curves = _curves(done)
    checkpoints = [i for i in (5, 10, 20, 30) if i <= min(len(v) for v in curves.values())]
    curve_rows = [[k] + [f"{v[i - 1]:.3f}" for i in checkpoints] for k, v in curves.items()]
    curve_table = table(
        ["setting (mean over models)"] + [f"step {i}" for i in checkpoints], curve_rows
    )
    failures = [
        f"- `{r.id}` failed on attempt 1"
        + (f" (its log: `{r.error}`)" if r.error else "")
        + f" and was rerun (attempt {r.attempt}, now {r.status})."
        for r in reruns
    ]
    report = "\n\n".join(
        [
            "# RL sweep report: clip strategy and off-policiness",
            "## Answers\n" + "\n".join(answers),
            "## Curve comparison\nMean accuracy (expected over all problems) per setting.\n\n"
            "![accuracy curves](curves.svg)\n\n" + curve_table,
            "## Run table\n" + run_table,
            "## Failures\n" + ("\n".join(failures) or "- none"),
        ]
    )
    svg = line_chart(
        [Series(k, v, colour=n // 2, dashed=n % 2 == 1) for n, (k, v) in enumerate(curves.items())],
        title="Accuracy by clip and off-policiness (mean over models)",
        y_label="accuracy",
    )
    return Analysis(
        report=report + "\n",
        conclusions=conclusions,
        files={"run_table.md": run_table + "\n", "curves.svg": svg},
    )


def _on_policy_tie(done: Sequence[RunResult]) -> bool:
    """Whether every on-policy run scores exactly as its twin with the other clip."""
    scores: dict[str, set[float]] = {}
    for run in done:
        p = flat(run.params)
        if p.get("batch_size") == p.get("mini_batch_size"):
            scores.setdefault(str(p.get("model")), set()).add(_score(run))
    return bool(scores) and all(len(s) == 1 for s in scores.values())


def _curves(done: Sequence[RunResult]) -> dict[str, list[float]]:
    """Mean accuracy per step for each (off-policiness, clip) setting, on-policy first."""
    groups: dict[tuple[float, str, str], list[Sequence[dict[str, float]]]] = {}
    for run in done:
        p = flat(run.params)
        clip = str(p.get("clip_coef"))
        key = (-(number(p, "mini_batch_size") or 0.0), clip, f"{pair_label(p)} clip {clip}")
        groups.setdefault(key, []).append([dict(s) for s in run.curve])
    return {key[2]: mean_curve(v, "accuracy") for key, v in sorted(groups.items())}
