"""A run's files are its own: whatever a skill wrote (wrong types, NaN, missing keys, torn
curves), each story's analysis still gives a report and never raises."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from wild_stories.agent import STORIES, analysis_of
from wild_stories.results import RunResult

KEYS = st.sampled_from(
    [
        "auc_accuracy", "final_accuracy", "clip_frac", "accuracy", "clip_coef", "model",
        "batch_size", "mini_batch_size", "offpolicy", "diverged", "sample_nn_mse", "sample",
        "eval_loss", "correct", "tasks", "violations", "prompt_chars", "variant", "valid",
        "correct_by_kind", "kind", "reply", "lr", "width", "lenient_correct", "task",
        "return_auc", "final_return", "return", "init", "sampling", "seed", "approx_kl",
        "sample_score", "sample_label_match",
        "exact_match", "prompt_len", "failures", "failure_examples", "nearest_tokens",
        "held_out", "final_loss", "exact_match_task_token", "exact_match_no_prompt",
        "did copy instead", "input", "output", "expected",
    ]
)  # fmt: skip
SCALARS = st.none() | st.booleans() | st.integers(-5, 300) | st.floats() | st.text(max_size=8)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3)
)
OBJECTS = st.dictionaries(KEYS, VALUES, max_size=8)


@st.composite
def runs(draw: Any) -> list[RunResult]:
    count = draw(st.integers(0, 5))
    return [
        RunResult(
            id=f"s-{n:03d}",
            params=draw(OBJECTS),
            status=draw(st.sampled_from(["finished", "failed", "running"])),
            attempt=draw(st.integers(1, 3)),
            summary=draw(OBJECTS),
            curve=tuple(draw(st.lists(OBJECTS, max_size=4))),
            error=draw(st.none() | st.text(max_size=10)),
        )
        for n in range(count)
    ]


# STORIES_FUZZ_EXAMPLES=1500 for a long hunt by hand (about 4 minutes).
@settings(max_examples=int(os.environ.get("STORIES_FUZZ_EXAMPLES", "25")), deadline=None)
@given(story=st.sampled_from(sorted(STORIES)), results=runs(), human=st.text(max_size=20))
def test_garbage_metrics_never_break_an_analysis(
    story: str, results: list[RunResult], human: str
) -> None:
    analysis = analysis_of(story)(results, human)
    assert analysis.report.startswith("# ")
