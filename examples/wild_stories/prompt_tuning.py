"""The prompt-tuning story's analysis: the variant table, the scores, the selected prompt with
a deterministic tie-break and its rationale, and failure-mode notes.

Selection is among variants whose replies kept the output schema (fewer than `REPEATED`
violations): the highest score wins; a tie goes to the shorter prompt (fewer characters: as
good and cheaper), then to the name. A variant that violates the schema `REPEATED` times or
more goes to the human (fix its format and rerun it, or drop it?) unless the human has
already answered about it in human.md; a single violation is only noted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wild.parsers.run_compare import flat
from wild_stories.analysis import Analysis, table
from wild_stories.results import RunResult

REPEATED = 2


def _name(run: RunResult) -> str:
    return str(run.summary.get("variant") or flat(run.params).get("variant") or run.id)


def _int(summary: Mapping[str, Any], key: str) -> int:
    value = summary.get(key, 0)
    return value if isinstance(value, int) else 0


def select(scored: Sequence[RunResult]) -> tuple[RunResult, list[RunResult]]:
    """The winner and every variant tied with it on score (winner first)."""
    best = max(_int(r.summary, "correct") for r in scored)
    tied = [r for r in scored if _int(r.summary, "correct") == best]
    tied.sort(key=lambda r: (_int(r.summary, "prompt_chars"), _name(r)))
    return tied[0], tied


def _by_kind(value: object) -> str:
    if not isinstance(value, Mapping):
        return "-"
    return ", ".join(f"{k} {v}" for k, v in value.items())


def _failure_notes(run: RunResult) -> list[str]:
    notes = []
    wrong: dict[str, int] = {}
    for step in run.curve:
        if step.get("valid") and not step.get("correct"):
            wrong[str(step.get("kind"))] = wrong.get(str(step.get("kind")), 0) + 1
    if wrong:
        kinds = ", ".join(f"{k} ({n})" for k, n in sorted(wrong.items()))
        notes.append(f"`{_name(run)}` answers in the schema but wrongly on: {kinds}.")
    bad = [s for s in run.curve if not s.get("valid")]
    if bad:
        sample = " ⏎ ".join(str(bad[0].get("reply", "")).splitlines())
        notes.append(
            f"`{_name(run)}` broke the output schema in {len(bad)} of {len(run.curve)} tasks "
            f"(first on `{bad[0].get('task')}`: {sample!r})"
            + ("; repeated, so it goes to the human." if len(bad) >= REPEATED else "; once only.")
        )
    return notes


def analyze(runs: Sequence[RunResult], human: str = "") -> Analysis:
    """The report from the variants' scored runs; `human` is what the human wrote."""
    scored = [r for r in runs if r.status == "finished" and "correct" in r.summary]
    if not scored:
        return Analysis(
            report="# Prompt-tuning report\n\nNo variant was scored.\n",
            conclusions={"runs": len(runs), "selected": None},
            need_human="no prompt variant finished scoring",
        )
    repeated = [r for r in scored if _int(r.summary, "violations") >= REPEATED]
    eligible = [r for r in scored if r not in repeated] or scored
    winner, tied = select(eligible)
    rows = [
        [
            _name(r),
            str(_int(r.summary, "prompt_chars")),
            f"{_int(r.summary, 'correct')}/{_int(r.summary, 'tasks')}",
            _by_kind(r.summary.get("correct_by_kind")),
            str(_int(r.summary, "violations")),
            str(_int(r.summary, "lenient_correct")),
        ]
        for r in scored
    ]
    variant_table = table(
        ["variant", "chars", "score", "correct by kind", "schema violations", "lenient correct"],
        rows,
    )
    if len(tied) > 1:
        others = ", ".join(
            f"`{_name(r)}` ({_int(r.summary, 'prompt_chars')} chars)" for r in tied[1:]
        )
        why = (
            f"it ties with {others} at {_int(winner.summary, 'correct')} correct; the tie-break "
            f"takes the shorter prompt ({_int(winner.summary, 'prompt_chars')} chars), then the "
            "name, so the choice is the same on every run."
        )
    else:
        why = f"it has the highest score, {_int(winner.summary, 'correct')} correct."
    unanswered = [r for r in repeated if _name(r) not in human]
    decisions = [r for r in repeated if _name(r) in human]
    notes = [n for r in scored for n in _failure_notes(r)]
    said = " ".join(human.split())  # their words on the note's one line, no `\n` escapes
    notes += [f'The human decided on `{_name(r)}`: "{said}".' for r in decisions]
    answers = [
        f"- **Selected prompt:** `{_name(winner)}`: {why}",
        f"- Scored {len(scored)} variants over {_int(winner.summary, 'tasks')} fixed tasks "
        "with the local deterministic scorer (strict JSON schema).",
    ]
    if repeated:
        answers.append(
            "- Not eligible (repeated schema violations): "
            + ", ".join(f"`{_name(r)}`" for r in repeated)
            + "."
        )
    report = "\n\n".join(
        [
            "# Prompt-tuning report",
            "## Answers\n" + "\n".join(answers),
            "## Variant table and scores\n" + variant_table,
            "## Failure-mode notes\n" + ("\n".join(f"- {n}" for n in notes) or "- none"),
        ]
    )
    need_human = None
    if unanswered:
        run = unanswered[0]
        need_human = (
            f"Prompt variant {_name(run)} broke the JSON output schema in "
            f"{_int(run.summary, 'violations')} of {_int(run.summary, 'tasks')} tasks (read "
            f"leniently it gets {_int(run.summary, 'lenient_correct')} right): fix its format "
            "instruction and rerun it, or drop it?"
        )
    conclusions = {
        "selected": _name(winner),
        "tie_between": [_name(r) for r in tied],
        "scores": {_name(r): _int(r.summary, "correct") for r in scored},
        "repeated_schema_violations": [_name(r) for r in repeated],
        "asks_human": need_human is not None,
    }
    return Analysis(
        report=report + "\n",
        conclusions=conclusions,
        files={
            "variant_table.md": variant_table + "\n",
            "selected_prompt.md": _selected(winner, why),
        },
        copies={"selected_prompt.txt": f"fixtures/variants/{_name(winner)}.md"},
        need_human=need_human,
    )


def _selected(winner: RunResult, why: str) -> str:
    heading = f"# Selected prompt: {_name(winner)}"
    return f"{heading}\n\nRationale: {why}\n\nThe prompt's text is selected_prompt.txt.\n"
