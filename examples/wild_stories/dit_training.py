"""The dit-training story's analysis: a quality summary per run, a human-check packet of
step-0 vs step-5 samples, and a continue/stop recommendation.

Quality is the runs' own `sample_nn_mse` (each sample's distance to its nearest training
image; lower is better) and held-out denoising loss. The best run is the non-diverged run
with the lowest final `sample_nn_mse` (ties: grid order). Training should continue while
the last stage still improved the samples by at least `STILL_LEARNING` (relative): the
recommendation follows the best run's own curve, so new numbers give a new answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wild.parsers.run_compare import flat
from wild_stories.analysis import Analysis, table
from wild_stories.results import RunResult

STILL_LEARNING = 0.02
QUALITY = "sample_nn_mse"
PACKET = "human-check"


def _run_folder(run_id: str) -> str:
    return f".wild/runs/{run_id}"


def _quality(curve: Sequence[Mapping[str, Any]]) -> list[float]:
    return [float(s[QUALITY]) for s in curve if isinstance(s.get(QUALITY), int | float)]


def last_gain(curve: Sequence[Mapping[str, Any]]) -> float:
    """How much the last stage improved the samples, relative (0 when under two points)."""
    quality = _quality(curve)
    if len(quality) < 2 or quality[-2] == 0:
        return 0.0
    return (quality[-2] - quality[-1]) / quality[-2]


def _diverged(run: RunResult) -> bool:
    return bool(run.summary.get("diverged")) or any(s.get("diverged") for s in run.curve)


def human_check_packet(runs: Sequence[RunResult]) -> tuple[str, dict[str, str], list[str]]:
    """The packet's markdown (first and last sample sheet of each run side by side), the
    sheets to copy beside it (results/ name → project file), and the runs it shows."""
    copies: dict[str, str] = {}
    packed: list[str] = []
    rows: list[list[str]] = []
    for r in runs:
        p = flat(r.params)
        samples = [str(s["sample"]) for s in r.curve if isinstance(s.get("sample"), str)]
        cells = []
        for name in (samples[0], samples[-1]) if samples else ():
            target = f"{PACKET}/{r.id}-{name.rsplit('/', 1)[-1]}"
            copies[target] = f"{_run_folder(r.id)}/{name}"
            cells.append(f"![{name}]({target})")
        if cells:
            packed.append(r.id)
        rows.append([r.id, str(p.get("lr")), str(p.get("width")), *(cells or ["no sheet", "-"])])
    text = "\n".join(
        [
            "# Human check: step 0 vs step 5 samples",
            "",
            "Each sheet holds 8 samples drawn from the same noise. Do the later samples show",
            "the four training shapes (square outline, plus, disc, diagonal bar)? Answer in",
            "human.md; training does not wait for you.",
            "",
            table(["run", "lr", "width", "first sheet (step 0)", "last sheet"], rows),
        ]
    )
    return text + "\n", copies, packed


def analyze(runs: Sequence[RunResult], human: str = "") -> Analysis:
    """The report from the runs' metrics and samples (`human` is unused: nothing is asked)."""
    healthy = [r for r in runs if r.status == "finished" and not _diverged(r) and _quality(r.curve)]
    diverged = [r for r in runs if _diverged(r)]
    rows = []
    for r in runs:
        quality = _quality(r.curve)
        p = flat(r.params)
        rows.append(
            [
                r.id,
                str(p.get("lr")),
                str(p.get("width")),
                "diverged" if _diverged(r) else r.status,
                f"{quality[0]:.3f}" if quality else "-",
                f"{quality[-1]:.3f}" if quality and not _diverged(r) else "-",
                f"{r.summary.get('eval_loss'):.3f}"
                if isinstance(r.summary.get("eval_loss"), int | float)
                else "-",
                f"{100 * last_gain(r.curve):.1f}%" if r in healthy else "-",
            ]
        )
    summary_table = table(
        [
            "run",
            "lr",
            "width",
            "status",
            "samples step 0",
            "samples last",
            "eval loss",
            "last gain",
        ],
        rows,
    )
    if not healthy:
        report = "# DiT sweep report\n\nNo run trained without diverging.\n\n" + summary_table
        return Analysis(
            report=report + "\n",
            conclusions={"runs": len(runs), "diverged": len(diverged), "recommendation": "stop"},
            files={"quality_summary.md": summary_table + "\n"},
            need_human="every run of the DiT sweep diverged or failed; lower the learning rate?",
        )
    best = min(healthy, key=lambda r: (_quality(r.curve)[-1], healthy.index(r)))
    gain = last_gain(best.curve)
    verdict = "continue" if gain >= STILL_LEARNING else "stop"
    packet, copies, packed = human_check_packet(healthy)
    p = flat(best.params)
    answers = [
        f"- **Best run:** `{best.id}` (lr={p.get('lr')}, width={p.get('width')}): sample "
        f"distance {_quality(best.curve)[0]:.3f} at step 0 → {_quality(best.curve)[-1]:.3f} at "
        f"the end.",
        f"- **Recommendation: {verdict}.** The last stage improved its samples by "
        f"{100 * gain:.1f}% (threshold {100 * STILL_LEARNING:.0f}%): "
        + (
            "still learning, so train this configuration longer."
            if verdict == "continue"
            else "it has levelled off, so stop here."
        ),
        f"- {len(diverged)} of {len(runs)} runs diverged and stopped early"
        + (
            " (" + ", ".join(f"`{r.id}` lr={flat(r.params).get('lr')}" for r in diverged) + "); "
            "each raised a critical alert: stop such learning rates."
            if diverged
            else "."
        ),
        f"- The human-check packet (`{PACKET}.md`) compares step-0 and step-5 samples of "
        f"{len(packed)} runs.",
    ]
    report = "\n\n".join(
        [
            "# DiT sweep report: quality and whether to continue",
            "## Answers\n" + "\n".join(answers),
            "## Per-run quality summary\n" + summary_table,
        ]
    )
    conclusions = {
        "runs": len(runs),
        "diverged": len(diverged),
        "best": {"lr": p.get("lr"), "width": p.get("width")},
        "recommendation": verdict,
        "packet_runs": len(packed),
    }
    return Analysis(
        report=report + "\n",
        conclusions=conclusions,
        files={
            "quality_summary.md": summary_table + "\n",
            f"{PACKET}.md": packet,
        },
        copies=copies,
        notify=f"The human-check packet of step-0 vs step-5 samples is ready in "
        f"results/{PACKET}.md; the story goes on without waiting.",
    )
