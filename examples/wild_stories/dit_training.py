"""The dit-training story's analysis: which setting gives the DiT the best samples, and whether
to keep training it, from the seeds of each setting with 95 % t-intervals.

A setting is a grid point less its seed (here the learning rate); its runs are its seeds.
Quality is what the runs measured at their last checkpoint: `sample_score` (the judge's
Inception-Score analogue, higher is better) first, the held-out `eval_loss` second. A setting
wins only where its score interval lies above every other's (wild_stories.intervals.winner);
otherwise no difference is detected at that many seeds, and the recommendation follows the
setting with the highest mean score. Continue while that setting's last stage still improved
its samples: the interval of its per-seed score gain over the last checkpoint lies wholly
above zero; otherwise stop (no gain detected). No fixed threshold, no single seed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from wild.parsers.run_compare import flat
from wild_stories.analysis import Analysis, number, table
from wild_stories.intervals import Interval, interval, winner
from wild_stories.plot import Series, line_chart, side_by_side
from wild_stories.results import RunResult

SCORE, LOSS, MATCH = "sample_score", "eval_loss", "sample_label_match"
PACKET = "human-check"
PROGRESS = "samples/progress.png"
NOT_A_SETTING = ("seed", "scale")  # what varies within a setting, or is the same for all


def setting(run: RunResult) -> str:
    """The run's setting as a label: its parameters less the seed, e.g. `lr=0.001`."""
    p = flat(run.params)
    return ", ".join(f"{k}={p[k]}" for k in sorted(p) if k not in NOT_A_SETTING)


def checkpoints(run: RunResult) -> list[Mapping[str, Any]]:
    """The run's checkpoint lines: those with a sample score."""
    return [line for line in run.curve if number(line, SCORE) is not None]


def diverged(run: RunResult) -> bool:
    if run.summary.get("diverged") or any(line.get("diverged") for line in run.curve):
        return True
    return any(
        isinstance(v, float) and not math.isfinite(v) for line in run.curve for v in line.values()
    )


def healthy(runs: Sequence[RunResult]) -> list[RunResult]:
    return [r for r in runs if r.status == "finished" and not diverged(r) and checkpoints(r)]


def final(run: RunResult, key: str) -> float | None:
    points = checkpoints(run)
    return number(points[-1], key) if points else None


def last_gain(run: RunResult, key: str = SCORE) -> float | None:
    """How much `key` rose from the second-to-last checkpoint to the last (None under two)."""
    points = [number(line, key) for line in checkpoints(run)]
    if len(points) < 2 or points[-1] is None or points[-2] is None:
        return None
    return points[-1] - points[-2]


def by_setting(runs: Sequence[RunResult], value: Any) -> dict[str, list[float]]:
    """Per setting (in grid order), `value(run)` of each of its runs that has one."""
    out: dict[str, list[float]] = {}
    for run in runs:
        v = value(run)
        if v is not None:
            out.setdefault(setting(run), []).append(v)
    return out


def intervals(runs: Sequence[RunResult], value: Any) -> dict[str, Interval]:
    found = {k: interval(v) for k, v in by_setting(runs, value).items()}
    return {k: v for k, v in found.items() if v is not None}


def leaders(groups: Mapping[str, Interval]) -> list[str]:
    """The settings no other setting beats: none has an interval wholly above theirs. One
    leader is the winner; several are not separated from each other."""
    return [k for k, g in groups.items() if not any(o.low > g.high for o in groups.values())]


def _compared(groups: Mapping[str, Interval], seeds: int, why: str) -> str:
    """The answer the intervals allow: the winner, or the leaders and who is behind them."""
    best = winner(groups)
    if best:
        return f"`{best}`"
    ahead = leaders(groups)
    behind = [k for k in groups if k not in ahead]
    if not behind:
        return f"no difference detected at {seeds} seeds"
    names = ", ".join(f"`{k}`" for k in ahead)
    return (
        f"no single best: {names} lead, not separated from each other at {seeds} seeds; "
        + ", ".join(f"`{k}`" for k in behind)
        + f" {'is' if len(behind) == 1 else 'are'} behind ({why})"
    )


def _flip(values: Mapping[str, Interval]) -> dict[str, Interval]:
    """Negated intervals, so that `winner` (highest wins) picks the lowest loss."""
    return {k: Interval(-v.mean, v.half, v.n) for k, v in values.items()}


def _data(value: Interval) -> list[float]:
    return [value.mean, value.half if math.isfinite(value.half) else -1.0]


def analyze(runs: Sequence[RunResult], human: str = "") -> Analysis:
    """The report from the runs' own metrics (`human` is unused: this story never asks)."""
    good = healthy(runs)
    broken = [r for r in runs if diverged(r)]
    if not good:
        report = "# DiT sweep report\n\nNo run trained without diverging or failing.\n\n"
        return Analysis(
            report=report + _run_table(runs) + "\n",
            conclusions={"runs": len(runs), "diverged": len(broken), "recommendation": "stop"},
            files={"quality_summary.md": _run_table(runs) + "\n"},
            need_human="every run of the DiT sweep diverged or failed; lower the learning rate?",
        )
    score = intervals(good, lambda r: final(r, SCORE))
    loss = intervals(good, lambda r: final(r, LOSS))
    match = intervals(good, lambda r: final(r, MATCH))
    gain = intervals(good, last_gain)
    seeds = min(v.n for v in score.values())
    best = winner(score)
    loss_best = winner(_flip(loss))
    chosen = best or max(score, key=lambda k: score[k].mean)
    chosen_gain = gain.get(chosen)
    verdict = "continue" if chosen_gain is not None and chosen_gain.low > 0 else "stop"
    packet, copies = human_check_packet(good)
    listed = " vs ".join(f"{k} {v.text(2)}" for k, v in score.items())
    loss_listed = " vs ".join(f"{k} {v.text(3)}" for k, v in loss.items())
    answers = [
        "- **Which setting gives the best samples?** "
        + _compared(score, seeds, "its score interval lies below a leader's")
        + f": sample score (mean ± 95 % t-interval over seeds) {listed}.",
        "- **Which has the lowest held-out loss?** "
        + _compared(_flip(loss), seeds, "its loss interval lies above a leader's")
        + f": {loss_listed}.",
        f"- **Recommendation: {verdict}.** " + _why(verdict, chosen, best, chosen_gain, seeds),
        f"- {len(good)} of {len(runs)} runs finished healthy, {seeds} seeds per setting"
        + (
            "; diverged: " + ", ".join(f"`{r.id}` ({setting(r)})" for r in broken)
            if broken
            else "; none diverged"
        )
        + ".",
        f"- The human-check packet (`{PACKET}.md`) shows each run's sample grids from step 0 "
        f"to its last checkpoint side by side, {len(copies)} runs.",
    ]
    report = "\n\n".join(
        [
            "# DiT sweep report: sample quality and whether to continue",
            "## Answers\n" + "\n".join(answers),
            "## Per setting\nAt the last checkpoint, mean ± 95 % t-interval over seeds. "
            "Sample score: the judge's Inception-Score analogue (1 to 10); label match: the "
            "share of samples the judge reads as the digit they were drawn for; last gain: "
            "the sample score's rise over the last checkpoint.\n\n"
            + _setting_table(score, loss, match, gain),
            "## Curve comparison\nMean over seeds per checkpoint, shaded: the 95 % "
            "t-interval.\n\n![curves](curves.svg)",
            "## Per-run quality summary\n" + _run_table(runs),
        ]
    )
    conclusions: dict[str, Any] = {
        "runs": len(runs),
        "finished": len(good),
        "diverged": len(broken),
        "seeds": seeds,
        "best_setting": best,
        "leading_settings": leaders(score),
        "lowest_loss_setting": loss_best,
        "lowest_loss_leaders": leaders(_flip(loss)),
        "followed_setting": chosen,
        "recommendation": verdict,
        "packet_runs": len(copies),
        "settings": {
            k: {
                SCORE: _data(score[k]),
                LOSS: _data(loss[k]),
                MATCH: _data(match[k]),
                "last_gain": _data(gain[k]) if k in gain else None,
            }
            for k in score
            if k in loss and k in match
        },
    }
    return Analysis(
        report=report + "\n",
        conclusions=conclusions,
        files={
            "quality_summary.md": _run_table(runs) + "\n",
            f"{PACKET}.md": packet,
            "curves.svg": _plot(good),
        },
        copies=copies,
        notify=f"The human-check packet of sample grids (step 0 to the last checkpoint) is "
        f"ready in results/{PACKET}.md; the story goes on without waiting.",
    )


def _why(verdict: str, chosen: str, best: str | None, gain: Interval | None, seeds: int) -> str:
    which = (
        f"`{chosen}` (the best setting)"
        if best
        else f"`{chosen}` (the highest mean score; the leaders are not separated)"
    )
    if gain is None:
        return f"{which} has fewer than two checkpoints: no gain can justify going on."
    said = f"its sample score rose {gain.text(2)} over the last checkpoint ({seeds} seeds)"
    if verdict == "continue":
        return f"For {which}, {said}: the interval lies above zero, so it is still learning."
    return (
        f"For {which}, {said}: the interval reaches zero or below, so no further gain is "
        "detected: it has levelled off."
    )


def _setting_table(
    score: Mapping[str, Interval], loss: Mapping[str, Interval],
    match: Mapping[str, Interval], gain: Mapping[str, Interval],
) -> str:  # fmt: skip
    rows = []
    for k, s in score.items():
        cells = [loss.get(k), match.get(k), gain.get(k)]
        digits = (3, 3, 2)
        rows.append(
            [k, str(s.n), s.text(2)]
            + [c.text(d) if c else "-" for c, d in zip(cells, digits, strict=True)]
        )
    header = ["setting", "seeds", "sample score", "eval loss", "label match", "last gain"]
    return table(header, rows)


def _cell(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _run_table(runs: Sequence[RunResult]) -> str:
    rows = []
    for r in runs:
        points = checkpoints(r)
        first = number(points[0], SCORE) if points else None
        rows.append(
            [
                r.id, setting(r), str(flat(r.params).get("seed")),
                "diverged" if diverged(r) else r.status, str(len(points)),
                _cell(first, 2), _cell(final(r, SCORE), 2), _cell(final(r, MATCH), 3),
                _cell(final(r, LOSS), 3), _cell(last_gain(r), 2),
            ]
        )  # fmt: skip
    header = ["run", "setting", "seed", "status", "checkpoints", "score step 0", "score last"]
    return table([*header, "label match", "eval loss", "last gain"], rows)


def human_check_packet(runs: Sequence[RunResult]) -> tuple[str, dict[str, str]]:
    """The packet's markdown (each run's grids from step 0 to its last checkpoint, side by
    side in one picture) and the pictures to copy beside it (results/ name → project file)."""
    copies: dict[str, str] = {}
    rows = []
    for r in runs:
        points = checkpoints(r)
        target = f"{PACKET}/{r.id}.png"
        copies[target] = f".wild/runs/{r.id}/{PROGRESS}"
        steps = " → ".join(f"{number(p, SCORE) or 0:.2f}" for p in points)
        shown = ", ".join(str(p.get("step")) for p in points)
        rows.append([r.id, setting(r), str(flat(r.params).get("seed")), shown, steps])
    pictures = "\n\n".join(f"### `{name[len(PACKET) + 1 : -4]}`\n![]({name})" for name in copies)
    text = "\n".join(
        [
            "# Human check: the samples from step 0 to the last checkpoint",
            "",
            "Each picture is one run: its sample grids at step 0 (the untrained model) and at",
            "each checkpoint, left to right, labelled with the step and the sample score. In",
            "every grid, row k holds ten samples drawn for digit k from the same noise. Do the",
            "later rows show their digit, and do the grids still change between the last two",
            "checkpoints? Answer in human.md; training does not wait for you.",
            "",
            table(["run", "setting", "seed", "checkpoints (steps)", "sample score"], rows),
            "",
            pictures,
        ]
    )
    return text + "\n", copies


def _plot(runs: Sequence[RunResult]) -> str:
    groups: dict[str, list[list[Mapping[str, Any]]]] = {}
    for r in runs:
        groups.setdefault(setting(r), []).append(checkpoints(r))
    charts = []
    for key, title in ((SCORE, "sample score (higher is better)"), (LOSS, "held-out loss")):
        series = []
        for n, (label, curves) in enumerate(groups.items()):
            length = min(len(c) for c in curves)
            steps = [interval([number(c[i], key) or 0.0 for c in curves]) for i in range(length)]
            known = [s for s in steps if s is not None]
            if len(known) != length or not known:
                continue
            means = [s.mean for s in known]
            halves = [s.half if math.isfinite(s.half) else 0.0 for s in known]
            band = (
                [m - h for m, h in zip(means, halves, strict=True)],
                [m + h for m, h in zip(means, halves, strict=True)],
            )
            series.append(Series(label, means, n, band=band))
        if series:
            charts.append(
                line_chart(
                    series, title=f"DiT {title}, mean ± 95% CI", y_label=key, first_step=0,
                    x_label="checkpoint (0: untrained)",
                )
            )  # fmt: skip
    return side_by_side(charts)
