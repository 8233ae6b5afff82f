"""The prompt-tuning story's analysis: soft prompts for a frozen tiny transformer, each setting
(prompt length, initialisation, learning rate) scored by held-out exact match over seeds with
95 % t-intervals; the selected prompt and why; the failure modes seen in the real outputs.

A setting wins only when its interval lies above every other's (wild_stories.intervals).
Otherwise no difference is detected between the best setting and those whose intervals
overlap it, and the selection among them is a rule, not a claim: the shortest prompt (fewest
trained vectors), then the higher mean. Each factor is also asked in matched comparisons (the
other two held fixed); a factor's answer names a value only when some comparisons separate
and all of those agree.
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

SCORE = "exact_match"
LENGTHS, INITS, LRS = ("1", "4", "16"), ("random", "vocab"), ("0.3", "0.03")
RECOVERED = 0.5  # below half the task token's exact match, the prompt did not find the task
WITHHELD = "<sort>"


def _text(value: object) -> str:
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:g}"
    return str(value)


@dataclass(frozen=True)
class Setting:
    """A grid point less its seed."""

    prompt_len: str
    init: str
    lr: str

    @property
    def label(self) -> str:
        return f"len{self.prompt_len}/{self.init}/lr{self.lr}"


def setting(run: RunResult) -> Setting:
    p = flat(run.params)
    return Setting(_text(p.get("prompt_len")), _text(p.get("init")), _text(p.get("lr")))


def _percent(run: RunResult, key: str) -> float | None:
    value = number(run.summary, key)
    return None if value is None else 100.0 * value


def _scores(runs: Sequence[RunResult]) -> dict[Setting, list[float]]:
    out: dict[Setting, list[float]] = {}
    for run in runs:
        value = _percent(run, SCORE)
        if value is not None:
            out.setdefault(setting(run), []).append(value)
    return out


@dataclass(frozen=True)
class Comparison:
    """One matched comparison: what is held fixed, each value's exact-match interval (%),
    and the winner the intervals allow (None: no difference detected)."""

    held: str
    values: Mapping[str, Interval]
    winner: str | None

    def line(self, seeds: int) -> str:
        verdict = f"`{self.winner}` better" if self.winner else _none(seeds)
        shown = " vs ".join(f"{k} {v.text()}" for k, v in self.values.items())
        return f"  - {self.held}: {shown} → {verdict}"


def _none(seeds: int) -> str:
    return f"no difference detected at {seeds} seeds"


FACTORS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "prompt_len": ("Does the prompt length matter?", LENGTHS),
    "init": ("Does the initialisation matter (random vs sampled vocabulary)?", INITS),
    "lr": ("Which learning rate works better?", LRS),
}


def comparisons(scores: Mapping[Setting, list[float]]) -> dict[str, list[Comparison]]:
    """Per factor, every comparison of its values with the other two factors held fixed."""
    found: dict[str, list[Comparison]] = {}
    for factor, (_question, values) in FACTORS.items():
        others = [f for f in FACTORS if f != factor]
        found[factor] = []
        for a in FACTORS[others[0]][1]:
            for b in FACTORS[others[1]][1]:
                fixed = {others[0]: a, others[1]: b}
                groups = {v: Setting(**{factor: v, **fixed}) for v in values}
                found_i = {k: interval(scores.get(s, [])) for k, s in groups.items()}
                known = {k: i for k, i in found_i.items() if i is not None}
                if len(known) == len(groups):  # else a setting has no finished run
                    held = ", ".join(f"{k} {v}" for k, v in fixed.items())
                    found[factor].append(Comparison(held, known, winner(known)))
    return found


def answer(found: Sequence[Comparison], seeds: int) -> tuple[str | None, str]:
    """A factor's answer over its comparisons: the agreed winner (None: no difference
    detected anywhere; "mixed": separated comparisons disagree) and its sentence."""
    winners = [c.winner for c in found if c.winner is not None]
    if not found:
        return None, "no comparison could be made: a setting it needs has no finished run"
    if not winners:
        return None, f"{_none(seeds)} (in any of {len(found)} matched comparisons)"
    if len(set(winners)) > 1:
        return "mixed", f"it depends: {', '.join(sorted(set(winners)))} each win somewhere"
    where = f"in all {len(found)}" if len(winners) == len(found) else (
        f"where the intervals separate ({len(winners)} of {len(found)}"
    )  # fmt: skip
    close = " matched comparisons" if len(winners) == len(found) else " matched comparisons)"
    rest = len(found) - len(winners)
    tail = f"; {_none(seeds)} in the other {rest}" if rest else ""
    return winners[0], f"`{winners[0]}`, {where}{close}{tail}"


@dataclass(frozen=True)
class Selection:
    """The selected setting, whether the intervals make it a winner, and the settings that
    no interval separates from the best one (the best first)."""

    chosen: Setting
    winner: bool
    tied: tuple[Setting, ...]


def _length(s: Setting) -> float:
    try:
        return float(s.prompt_len)
    except ValueError:
        return math.inf


def select(intervals: Mapping[Setting, Interval]) -> Selection:
    best = max(intervals, key=lambda s: (intervals[s].mean, s.label))
    top = winner({s.label: i for s, i in intervals.items()})
    if top is not None:
        return Selection(best, True, (best,))
    low = intervals[best].low
    tied = [s for s, i in intervals.items() if s != best and i.high >= low]
    tied.sort(key=lambda s: -intervals[s].mean)
    chosen = min([best, *tied], key=lambda s: (_length(s), -intervals[s].mean, s.label))
    return Selection(chosen, False, (best, *tied))


def _failures(runs: Sequence[RunResult]) -> tuple[dict[str, int], dict[str, Mapping[str, Any]]]:
    """Wrong held-out outputs by kind over `runs`, and one real example of each kind."""
    counts: dict[str, int] = {}
    examples: dict[str, Mapping[str, Any]] = {}
    for run in runs:
        found = run.summary.get("failures")
        shown = run.summary.get("failure_examples")
        if not isinstance(found, Mapping):
            continue
        for kind, count in found.items():
            if isinstance(count, int) and not isinstance(count, bool) and count > 0:
                counts[str(kind)] = counts.get(str(kind), 0) + count
                sample = shown.get(kind) if isinstance(shown, Mapping) else None
                if kind not in examples and isinstance(sample, list) and sample:
                    first = sample[0]
                    examples[str(kind)] = first if isinstance(first, Mapping) else {}
    return counts, examples


def _digits(value: object) -> str:
    return "".join(str(d) for d in value) if isinstance(value, list) else str(value)


def _failure_lines(runs: Sequence[RunResult], scope: str) -> list[str]:
    counts, examples = _failures(runs)
    held = sum(int(number(r.summary, "held_out") or 0) for r in runs)
    if not counts:
        return [f"- {scope}: no wrong output."]
    wrong = sum(counts.values())
    lines = [f"- {scope}: {wrong} wrong outputs of {held} held-out answers, by kind:"]
    for kind, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        e = examples.get(kind, {})
        sample = (
            f" (e.g. input {_digits(e.get('input'))} → {_digits(e.get('output'))}, "
            f"expected {_digits(e.get('expected'))})"
            if e
            else ""
        )
        lines.append(f"  - {kind}: {count} ({100 * count / wrong:.0f} %){sample}")
    return lines


def _nearest_share(runs: Sequence[RunResult]) -> float | None:
    """The share of runs whose prompt has the withheld task token among its vectors' nearest
    vocabulary tokens."""
    lists = [r.summary.get("nearest_tokens") for r in runs]
    usable = [t for t in lists if isinstance(t, list)]
    return sum(WITHHELD in t for t in usable) / len(usable) if usable else None


def _reference(done: Sequence[RunResult], key: str) -> Interval | None:
    return interval([v for v in (_percent(r, key) for r in done) if v is not None])


def analyze(runs: Sequence[RunResult], human: str = "") -> Analysis:
    """The report from the runs' own metrics; `human` is what the human wrote."""
    done = [r for r in runs if r.status == "finished" and number(r.summary, SCORE) is not None]
    if not done:
        return Analysis(
            report="# Prompt-tuning report\n\nNo run finished with metrics; nothing to compare.\n",
            conclusions={"runs": len(runs), "finished": 0, "selected": None},
            need_human="no prompt-tuning run finished with metrics",
        )
    scores = _scores(done)
    seeds = min(len(v) for v in scores.values())
    intervals = {s: i for s, v in scores.items() if (i := interval(v)) is not None}
    if not intervals:
        return Analysis(
            report="# Prompt-tuning report\n\nNo setting's scores could be averaged.\n",
            conclusions={"runs": len(runs), "finished": len(done), "selected": None},
            need_human="the prompt-tuning runs' scores could not be averaged",
        )
    chosen = select(intervals)
    found = comparisons(scores)
    answers = {f: answer(found[f], seeds) for f in FACTORS}
    token, none = (
        _reference(done, "exact_match_task_token"),
        _reference(done, "exact_match_no_prompt"),
    )
    best = intervals[chosen.chosen]
    pick = chosen.chosen.label
    if chosen.winner:
        why = (
            f"`{pick}` is the best setting: its exact match {best.text()} % lies above every "
            "other setting's interval."
        )
    else:
        top, *rest = chosen.tied
        others = ", ".join(f"`{s.label}` {intervals[s].text()} %" for s in rest)
        why = (
            f"{_none(seeds)} between the best setting, `{top.label}` "
            f"({intervals[top].text()} %), and the {len(rest)} whose intervals overlap it "
            f"({others}); among these, the rule takes the shortest prompt (fewest trained "
            f"vectors), then the higher mean: `{pick}` ({best.text()} %)."
        )
    lines = [f"- **Selected prompt:** {why}"]
    for factor, (question, _values) in FACTORS.items():
        lines.append(f"- **{question}** {answers[factor][1]}.")
        lines += [c.line(seeds) for c in found[factor]]
    task = str(done[0].summary.get("task", "sort"))
    reference = (
        f"- Reference, the frozen model on the same held-out inputs: with the withheld `{task}` "
        f"token itself {token.text() if token else '-'} %, with no task token "
        f"{none.text() if none else '-'} %."
    )
    lines.append(reference)
    failed = [r for r in runs if r.status != "finished"]
    lines.append(
        f"- Over {len(done)} finished runs of {len(runs)}; {seeds} seeds per setting. Exact "
        "match on the held-out set, mean ± 95 % t-interval over seeds (the seeds vary the "
        "prompt's start and its training batches; the frozen model is the same in every run)."
    )
    need_human = None
    if token and best.mean < RECOVERED * token.mean and not human.strip():
        need_human = (
            f"The best soft prompt ({pick}) reaches {best.mean:.1f} % exact match, against "
            f"{token.mean:.1f} % with the task token: more prompt-tuning steps, or accept it?"
        )
    notes = _failure_lines([r for r in done if setting(r) == chosen.chosen], f"`{pick}`")
    notes += _failure_lines(done, f"all {len(done)} runs")
    notes += [
        f"- `{r.id}` ({setting(r).label}) ended {r.status}" + (f": `{r.error}`" if r.error else "")
        for r in failed
    ]
    if human.strip():
        notes.append(f'- The human said: "{" ".join(human.split())}".')
    variant_table = _variant_table(done, intervals)
    report = "\n\n".join(
        [
            f"# Prompt-tuning report: soft prompts for `{task}` on a frozen tiny transformer",
            "## Answers\n" + "\n".join(lines),
            "## Prompt variant table\n" + variant_table,
            "## Learning curves\nHeld-out exact match during prompt tuning, mean over seeds "
            "with the 95 % band, one panel per prompt length.\n\n![curves](curves.svg)",
            "## Failure modes\nEvery wrong held-out output, by what it did instead of "
            "sorting, with a real example of each.\n\n" + "\n".join(notes),
            "## Run table\n" + _run_table(runs),
        ]
    )
    winner_run = max(
        (r for r in done if setting(r) == chosen.chosen),
        key=lambda r: (number(r.summary, SCORE) or 0.0, r.id),
    )
    conclusions: dict[str, Any] = {
        "task": task,
        "selected": pick,
        "winner": pick if chosen.winner else None,
        "tied_with": [s.label for s in chosen.tied if s != chosen.chosen],
        "best_prompt_len": answers["prompt_len"][0],
        "best_init": answers["init"][0],
        "best_lr": answers["lr"][0],
        "seeds": seeds,
        "runs": len(runs),
        "finished": len(done),
        "settings": {s.label: _pack(i) for s, i in intervals.items()},
        "comparisons": {
            f: [
                {
                    "held": c.held,
                    "exact_match": {k: _pack(v) for k, v in c.values.items()},
                    "winner": c.winner,
                }
                for c in found[f]
            ]
            for f in FACTORS
        },
        "reference_task_token": token.mean if token else None,
        "reference_no_prompt": none.mean if none else None,
        "failure_modes": _failures(done)[0],
        "asks_human": need_human is not None,
    }
    return Analysis(
        report=report + "\n",
        conclusions=conclusions,
        files={
            "variant_table.md": variant_table + "\n",
            "run_table.md": _run_table(runs) + "\n",
            "curves.svg": _plot(done),
            "selected_prompt.md": _selected(chosen.chosen, why, winner_run),
        },
        copies={"selected_prompt.pt": f".wild/runs/{winner_run.id}/prompt.pt"},
        need_human=need_human,
    )


def _pack(i: Interval) -> list[float]:
    return [i.mean, i.half if math.isfinite(i.half) else -1.0]


def _cell(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _variant_table(done: Sequence[RunResult], intervals: Mapping[Setting, Interval]) -> str:
    rows = []
    for s in sorted(intervals, key=lambda s: (_length(s), s.init, s.lr)):
        mine = [r for r in done if setting(r) == s]
        losses = [v for v in (number(r.summary, "final_loss") for r in mine) if v is not None]
        share = _nearest_share(mine)
        rows.append(
            [
                s.label, s.prompt_len, s.init, s.lr, str(len(mine)), intervals[s].text(),
                _cell(fmean(losses) if losses else None, 3),
                "-" if share is None else f"{100 * share:.0f} %",
            ]
        )  # fmt: skip
    header = ["setting", "prompt length", "init", "lr", "seeds", "exact match % (95 % CI)"]
    return table([*header, "final loss", f"prompts with a `{WITHHELD}`-nearest vector"], rows)


def _run_table(runs: Sequence[RunResult]) -> str:
    rows = []
    for r in runs:
        tokens = r.summary.get("nearest_tokens")
        shown = " ".join(str(t) for t in tokens) if isinstance(tokens, list) else "-"
        rows.append(
            [
                r.id, setting(r).label, _text(flat(r.params).get("seed")), r.status,
                str(r.attempt), _cell(_percent(r, SCORE)),
                _cell(number(r.summary, "final_loss"), 3), f"`{shown}`",
            ]
        )  # fmt: skip
    header = ["run", "setting", "seed", "status", "attempts", "exact match %", "final loss"]
    return table([*header, "nearest tokens of the prompt"], rows)


def _selected(chosen: Setting, why: str, run: RunResult) -> str:
    tokens = run.summary.get("nearest_tokens")
    shown = " ".join(str(t) for t in tokens) if isinstance(tokens, list) else "-"
    return (
        f"# Selected prompt: {chosen.label}\n\n"
        f"Soft prompt of {chosen.prompt_len} vector(s), initialised `{chosen.init}`, trained "
        f"with Adam at lr {chosen.lr}.\n\nWhy: {why}\n\n"
        f"The trained prompt is `selected_prompt.pt` (a torch tensor, prompt length × model "
        f"width), from run `{run.id}` (seed {_text(flat(run.params).get('seed'))}, its best "
        f"seed: {_cell(_percent(run, SCORE))} % exact match). Each vector's nearest vocabulary "
        f"token: `{shown}`.\n"
    )


def _every(done: Sequence[RunResult]) -> str:
    steps = [number(r.curve[1], "step") for r in done if len(r.curve) > 1]
    every = next((int(v) for v in steps if v is not None), None)
    return f"evaluation (every {every} steps; 0: the start)" if every else "evaluation"


def _plot(done: Sequence[RunResult]) -> str:
    curves: dict[Setting, list[list[float]]] = {}
    for run in done:
        values = [number(line, SCORE) for line in run.curve]
        if values and all(v is not None for v in values):
            curves.setdefault(setting(run), []).append([100.0 * (v or 0.0) for v in values])
    charts = []
    for length in sorted({s.prompt_len for s in curves}, key=lambda v: _length(Setting(v, "", ""))):
        series = []
        for n, s in enumerate(sorted((s for s in curves if s.prompt_len == length), key=str)):
            group = curves[s]
            steps = min(len(c) for c in group)
            found = [interval([c[i] for c in group]) for i in range(steps)]
            known = [i for i in found if i is not None]
            if len(known) != steps:
                continue  # a value too large to average: no curve
            halves = [i.half if math.isfinite(i.half) else 0.0 for i in known]
            means = [i.mean for i in known]
            band = (  # exact match is a share: the band drawn within 0 to 100 %
                [max(0.0, m - h) for m, h in zip(means, halves, strict=True)],
                [min(100.0, m + h) for m, h in zip(means, halves, strict=True)],
            )
            label = f"{s.init}, lr {s.lr}"
            series.append(Series(label, means, n // 2, n % 2 == 1, band=band))
        if series:
            charts.append(
                line_chart(
                    series, title=f"prompt length {length}: held-out exact match (±95% CI)",
                    y_label="exact match %", first_step=0, x_label=_every(done),
                )
            )  # fmt: skip
    return side_by_side(charts)
