"""The rl-training story's analysis: PPO on CartPole-v1, which clip, which off-policiness,
which start, each answered from seeds with 95 % t-intervals.

A setting is (init, clip, batch/minibatch, sampling); its runs are its seeds. Every run is
scored by its return AUC (the mean return over its curve, step 0 included: a setting that
learns faster from the same samples scores higher) and its final return. Each question is
asked in matched comparisons (the other factors held fixed), and a value wins a comparison
only when its AUC interval lies above every other's (wild_stories.intervals.winner); the
question's answer names a value only when some comparisons separate and all of those agree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from wild.parsers.run_compare import flat
from wild_stories.analysis import Analysis, number, table
from wild_stories.intervals import Interval, interval, winner
from wild_stories.plot import Series, line_chart, side_by_side
from wild_stories.results import RunResult

SCORE, FINAL = "return_auc", "final_return"
INITS = ("random", "bc")
OFF_POLICY = ("64/32", "64/16")  # where samples go stale and the clip can act
CLIPS = ("0.2", "0.28")


@dataclass(frozen=True)
class Setting:
    """A grid point less its seed: what the seeds of one setting share."""

    init: str
    clip: str
    pair: str  # batch/minibatch, "64/16"
    sampling: str  # "stale" (the batch sampled once) or "fresh" (the on-policy control)

    @property
    def label(self) -> str:
        if self.sampling == "fresh":
            return f"{self.pair} fresh (control)"
        if self.pair == "64/64":
            return "64/64 (on-policy)"
        return f"{self.pair} clip {self.clip}"


def setting(run: RunResult) -> Setting:
    p = flat(run.params)
    return Setting(
        init=str(p.get("init")),
        clip=str(p.get("clip_coef")),
        pair=f"{p.get('batch_size')}/{p.get('mini_batch_size')}",
        sampling=str(p.get("sampling", "stale")),
    )


@dataclass(frozen=True)
class Comparison:
    """One matched comparison: what is held fixed, each value's AUC and final-return
    interval, and the winner the AUC intervals allow (None: no difference detected)."""

    held: str
    auc: Mapping[str, Interval]
    final: Mapping[str, Interval]
    winner: str | None
    final_winner: str | None

    def line(self, seeds: int) -> str:
        verdict = f"`{self.winner}` better" if self.winner else _none(seeds)
        values = " vs ".join(f"{k} {v.text()}" for k, v in self.auc.items())
        return f"  - {self.held}: {values} → {verdict}"


def _none(seeds: int) -> str:
    return f"no difference detected at {seeds} seeds"


@dataclass(frozen=True)
class Answer:
    """A question's answer over its comparisons: `value` is the agreed winner, None for no
    difference detected anywhere, "mixed" when separated comparisons disagree."""

    value: str | None
    text: str


def answer(comparisons: Sequence[Comparison], seeds: int) -> Answer:
    winners = [c.winner for c in comparisons if c.winner is not None]
    total = len(comparisons)
    if not total:
        return Answer(None, "no comparison could be made: a setting it needs has no finished run")
    if not winners:
        return Answer(None, f"{_none(seeds)} (in any of {total} matched comparisons)")
    if len(set(winners)) > 1:
        said = ", ".join(sorted(set(winners)))
        return Answer("mixed", f"it depends on the setting: {said} each win somewhere")
    best = winners[0]
    if len(winners) == total:
        return Answer(best, f"`{best}`, in all {total} matched comparisons")
    rest = total - len(winners)
    return Answer(
        best,
        f"`{best}` where the intervals separate ({len(winners)} of {total} matched "
        f"comparisons); {_none(seeds)} in the other {rest}",
    )


def _scores(runs: Sequence[RunResult], key: str) -> dict[Setting, list[float]]:
    out: dict[Setting, list[float]] = {}
    for run in runs:
        value = number(run.summary, key)
        if value is not None:
            out.setdefault(setting(run), []).append(value)
    return out


def _compare(
    held: str, groups: Mapping[str, Setting], auc: Mapping[Setting, list[float]],
    final: Mapping[Setting, list[float]],
) -> Comparison | None:  # fmt: skip
    a = {k: interval(auc.get(s, [])) for k, s in groups.items()}
    f = {k: interval(final.get(s, [])) for k, s in groups.items()}
    if any(v is None for v in (*a.values(), *f.values())):
        return None  # a setting with no finished run: nothing to compare
    auc_i = {k: v for k, v in a.items() if v is not None}
    final_i = {k: v for k, v in f.items() if v is not None}
    return Comparison(held, auc_i, final_i, winner(auc_i), winner(final_i))


def comparisons(runs: Sequence[RunResult]) -> dict[str, list[Comparison]]:
    """Every matched comparison of the three questions and the control, from the runs."""
    auc, final = _scores(runs, SCORE), _scores(runs, FINAL)
    on_policy = {i: Setting(i, "0.2", "64/64", "stale") for i in INITS}
    found: dict[str, list[Comparison | None]] = {"clip": [], "offpolicy": [], "control": []}
    for init in INITS:
        for pair in OFF_POLICY:
            groups = {c: Setting(init, c, pair, "stale") for c in CLIPS}
            found["clip"].append(_compare(f"{init} init, {pair}", groups, auc, final))
        for clip in CLIPS:
            groups = {"64/64": on_policy[init]} | {
                p: Setting(init, clip, p, "stale") for p in OFF_POLICY
            }
            found["offpolicy"].append(_compare(f"{init} init, clip {clip}", groups, auc, final))
        for pair in OFF_POLICY:
            groups = {f"stale clip {c}": Setting(init, c, pair, "stale") for c in CLIPS}
            groups["fresh"] = Setting(init, "0.2", pair, "fresh")
            found["control"].append(_compare(f"{init} init, {pair}", groups, auc, final))
    labels = sorted({s for s in auc if s.init in INITS}, key=_order)
    found["init"] = [
        _compare(s.label, {i: Setting(i, s.clip, s.pair, s.sampling) for i in INITS}, auc, final)
        for s in labels
        if s.init == INITS[0]
    ]
    return {k: [c for c in v if c is not None] for k, v in found.items()}


def _order(s: Setting) -> tuple[int, bool, int, str]:
    """Grid order: by init, the stale runs first, the larger minibatch first, then clip."""
    mini = s.pair.rsplit("/", 1)[-1]
    return (
        INITS.index(s.init) if s.init in INITS else len(INITS),
        s.sampling == "fresh",
        -int(mini) if mini.isdecimal() else 0,
        s.clip,
    )


def _cell(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _mean_of(run: RunResult, key: str) -> float | None:
    values = [v for v in (number(s, key) for s in run.curve) if v is not None]
    return fmean(values) if values else None


QUESTIONS = (
    ("clip", "Which clip strategy works better?"),
    ("offpolicy", "Which off-policiness setting works better?"),
    ("init", "Which start works better (random init vs bc)?"),
)


def analyze(runs: Sequence[RunResult], human: str = "") -> Analysis:
    """The report from the runs' own metrics (`human` is unused: this story never asks)."""
    done = [r for r in runs if r.status == "finished" and number(r.summary, SCORE) is not None]
    if not done:
        return Analysis(
            report="# RL sweep report\n\nNo run finished with metrics; nothing to compare.\n",
            conclusions={"runs": len(runs), "finished": 0},
            need_human="no run of the rl sweep finished with metrics",
        )
    per_setting = _scores(done, SCORE)
    seeds = min(len(v) for v in per_setting.values())
    found = comparisons(done)
    answers = {key: answer(found[key], seeds) for key, _ in QUESTIONS}
    control = answer(found["control"], seeds)
    reruns = [r for r in runs if r.attempt > 1]
    lines = []
    for key, question in QUESTIONS:
        lines.append(f"- **{question}** {answers[key].text}.")
        lines += [c.line(seeds) for c in found[key]]
        if key == "offpolicy":
            lines.append(
                "- **Control at equal updates: do stale samples matter?** "
                f"{control.text}. (Same minibatches, optimizer steps and samples; `fresh` "
                "samples each minibatch with the policy it updates.)"
            )
            lines += [c.line(seeds) for c in found["control"]]
    lines.append(
        f"- Over {len(done)} finished runs of {len(runs)}"
        + (f" ({len(reruns)} rerun after a failure)" if reruns else "")
        + f"; {seeds} seeds per setting. Each comparison holds the other factors fixed and "
        "shows return AUC as mean ± 95 % t-interval over seeds; a winner is claimed only "
        "where its interval lies above every other's (final returns: see Per setting)."
    )
    conclusions: dict[str, Any] = {
        "best_clip_coef": _as_number(answers["clip"].value),
        "best_offpolicy": answers["offpolicy"].value,
        "best_init": answers["init"].value,
        "stale_vs_fresh": control.value,
        "seeds": seeds,
        "runs": len(runs),
        "finished": len(done),
        "reruns": len(reruns),
        "comparisons": {
            key: [_as_data(c) for c in found[key]]
            for key in ("clip", "offpolicy", "control", "init")
        },
    }
    summary = _setting_table(done)
    report = "\n\n".join(
        [
            "# RL sweep report: PPO clip and off-policiness on CartPole-v1",
            "## Answers\n" + "\n".join(lines),
            "## Per setting\nReturn AUC (mean return over the curve) and final return (mean "
            "over the last tenth of updates), mean ± 95 % t-interval over seeds.\n\n" + summary,
            "## Curve comparison\nMean return per update over seeds, shaded: the 95 % "
            "t-interval at each update.\n\n![return curves](curves.svg)",
            "## Run table\n" + _run_table(runs),
            "## Failures\n" + ("\n".join(_failure(r) for r in reruns) or "- none"),
        ]
    )
    return Analysis(
        report=report + "\n",
        conclusions=conclusions,
        files={"run_table.md": _run_table(runs) + "\n", "curves.svg": _plot(done)},
    )


def _as_number(value: str | None) -> float | str | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return value


def _as_data(c: Comparison) -> dict[str, Any]:
    def pack(values: Mapping[str, Interval]) -> dict[str, list[float]]:
        return {k: [v.mean, v.half if math.isfinite(v.half) else -1.0] for k, v in values.items()}

    return {
        "held": c.held,
        "auc": pack(c.auc),
        "final": pack(c.final),
        "winner": c.winner,
        "final_winner": c.final_winner,
    }


def _setting_table(done: Sequence[RunResult]) -> str:
    auc, final = _scores(done, SCORE), _scores(done, FINAL)
    rows = []
    for s in sorted(auc, key=_order):
        a, f = interval(auc[s]), interval(final.get(s, []))
        clipped = [_mean_of(r, "clip_frac") for r in done if setting(r) == s]
        clip = [v for v in clipped if v is not None]
        rows.append(
            [
                s.init,
                s.label,
                str(len(auc[s])),
                a.text() if a else "-",
                f.text() if f else "-",
                _cell(fmean(clip) if clip else 0.0, 3),
            ]
        )
    return table(["init", "setting", "seeds", "return AUC", "final return", "clipped"], rows)


def _run_table(runs: Sequence[RunResult]) -> str:
    rows = []
    for r in runs:
        s, p = setting(r), flat(r.params)
        rows.append(
            [
                r.id, s.init, s.clip, s.pair, s.sampling, str(p.get("seed")), r.status,
                str(r.attempt), _cell(number(r.summary, FINAL)), _cell(number(r.summary, SCORE)),
                _cell(_mean_of(r, "clip_frac"), 3), _cell(_mean_of(r, "approx_kl"), 4),
            ]
        )  # fmt: skip
    header = ["run", "init", "clip", "batch/mini", "sampling", "seed", "status", "attempts"]
    return table([*header, "final return", "return AUC", "clipped", "approx KL"], rows)


def _failure(r: RunResult) -> str:
    return (
        f"- `{r.id}` failed on attempt 1"
        + (f" (its log: `{r.error}`)" if r.error else "")
        + f" and was rerun (attempt {r.attempt}, now {r.status})."
    )


def curve_bands(runs: Sequence[RunResult]) -> dict[Setting, tuple[list[float], list[float]]]:
    """Per setting: the mean return per update over its seeds and the interval half-width."""
    curves: dict[Setting, list[list[float]]] = {}
    for run in runs:
        values = [number(line, "return") for line in run.curve]
        if values and all(v is not None for v in values):
            curves.setdefault(setting(run), []).append([v or 0.0 for v in values])
    out = {}
    for s, group in curves.items():
        length = min(len(c) for c in group)
        steps = [interval([c[i] for c in group]) for i in range(length)]
        known = [i for i in steps if i is not None]
        if len(known) == len(steps):  # else a value too large to average: no curve
            out[s] = (
                [i.mean for i in known],
                [i.half if math.isfinite(i.half) else 0.0 for i in known],
            )
    return out


STYLE: Mapping[str, tuple[int, bool]] = {
    "64/64 (on-policy)": (0, False),
    "64/32 clip 0.2": (1, False),
    "64/32 clip 0.28": (1, True),
    "64/16 clip 0.2": (2, False),
    "64/16 clip 0.28": (2, True),
    "64/32 fresh (control)": (3, False),
    "64/16 fresh (control)": (4, False),
}


def _plot(done: Sequence[RunResult]) -> str:
    bands = curve_bands(done)
    charts = []
    for init in INITS:
        series = []
        for s in sorted((s for s in bands if s.init == init), key=_order):
            means, halves = bands[s]
            colour, dashed = STYLE.get(s.label, (5, False))
            low = [m - h for m, h in zip(means, halves, strict=True)]
            high = [m + h for m, h in zip(means, halves, strict=True)]
            series.append(Series(s.label, means, colour, dashed, band=(low, high)))
        if series:
            title = f"CartPole-v1 return, {init} init (mean ± 95% CI)"
            charts.append(
                line_chart(series, title=title, y_label="return", first_step=0, x_label="update")
            )
    return side_by_side(charts)
