"""The built-in scripted agent of the research stories: one step per loop iteration.

`story_step(prompt, project)` answers as a coding agent would, from what it can read: the
prompt wild built, the story's own files (story.md, sweep.json) and what the runs wrote. In
the exploring stage it proposes the story's sweep; for a failed run's alert it reads the run's
log and attempts and answers `rerun` (or asks the human after repeated failures); in the
analysis stage it runs the story's analysis over the runs' real metrics, writes the artifacts
under results/ and ends with the report and its promise. Nothing it concludes is written in.

Run as `python -m wild_stories.agent` (custom-agent style: the prompt on stdin or in
`$WILD_PROMPT_FILE`, routed by `$WILD_WORK_TYPE`).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from wild.parsers import human as human_md
from wild.paths import WildPaths
from wild.store.files import read_text
from wild_stories.analysis import Analysis
from wild_stories.results import (
    RunResult,
    error_line,
    every_log,
    latest_sweep,
    load_results,
    read_index,
)

Analyze = Callable[[Sequence[RunResult], str], Analysis]
# Each story's analysis module (imported only for its own story: one story's libraries are not
# another's, and `wild demo` runs with numpy alone).
STORIES = {
    "rl-training": "wild_stories.rl_training",
    "prompt-tuning": "wild_stories.prompt_tuning",
    "dit-training": "wild_stories.dit_training",
}


def analysis_of(story: str) -> Analyze:
    analyze: Analyze = importlib.import_module(STORIES[story]).analyze
    return analyze


RESULTS = "results"
_STORY_LINE = re.compile(r"^Story:\s*(\S+)\s*$", re.MULTILINE)
_FIELD = r"^\s*-\s*\*\*{name}:\*\*\s*(.+?)\s*$"


def story_name(project: Path) -> str:
    """The story this project is, from the `Story: NAME` line of its story.md."""
    match = _STORY_LINE.search(read_text(project / "story.md"))
    if match is None or match.group(1) not in STORIES:
        known = ", ".join(STORIES)
        raise ValueError(f"{project / 'story.md'}: no `Story: NAME` line naming one of {known}")
    return match.group(1)


def _field(prompt: str, name: str) -> str | None:
    match = re.search(_FIELD.format(name=re.escape(name)), prompt, re.MULTILINE)
    return match.group(1) if match else None


def stage(prompt: str, work_type: str | None) -> str:
    """What the prompt asks for: `alert`, `sweep`, `analysis`, `human-input` or `other`.

    `$WILD_WORK_TYPE` decides when wild gave it (planning is the exploring stage's prompt
    until a sweep exists; an analysis may come as a task blocked by the sweep's barrier);
    without it, the prompt's own words do.
    """
    if work_type in ("alert", "sweep", "analysis", "human-input"):
        return work_type
    if work_type == "planning":
        return "sweep"
    if work_type == "task" or work_type is None:
        if work_type is None and "Handling Alert" in prompt:
            return "alert"
        if re.search(r"\banaly[sz](is|e|ing)\b", prompt, re.IGNORECASE):
            return "analysis"
        if work_type is None and ("<sweep>" in prompt or "exploring" in prompt.lower()):
            return "sweep"
    return "other"


def sweep_reply(project: Path) -> str:
    """The exploring stage: propose the story's planned sweep, read from its sweep.json."""
    spec = json.loads(read_text(project / "sweep.json"))
    runs = 1
    for values in spec["parameters"].values():
        runs *= len(values)
    return (
        f"Planned sweep `{spec['name']}` from the story's goal and constraints: "
        f"{' × '.join(spec['parameters'])}, {runs} runs.\n"
        f"<sweep>{json.dumps(spec)}</sweep>\n"
    )


_CONTEXT_RUNS = re.compile(r'"runs": \[([^\]]*)\]')


def _runs_in_context(prompt: str) -> list[str]:
    """The run ids a run alert's context names (runs failing together share one alert)."""
    found = _CONTEXT_RUNS.search(prompt)
    return re.findall(r'"([^"]+)"', found.group(1)) if found else []


def alert_reply(prompt: str, paths: WildPaths, work_id: str | None) -> str:
    """A run's alert: stop a diverged configuration; rerun a first failure; a run that failed
    again goes to the human."""
    alert_id = _field(prompt, "ID") or work_id or ""
    source = _field(prompt, "Source") or ""
    choices = [c.strip() for c in (_field(prompt, "Choices") or "").split(";")]
    if "diverg" in (_field(prompt, "Type") or "") and "stop_run" in choices:
        resolution = json.dumps({"alert_id": alert_id, "choice": "stop_run"})
        return (
            f"{source} diverged and stopped itself; this configuration is not worth rerunning.\n"
            f"<resolve_alert>{resolution}</resolve_alert>\n"
        )
    index = read_index(paths)
    named = [index.runs[r] for r in _runs_in_context(prompt) if r in index.runs]
    run = index.runs.get(source.strip("`")) or (named[0] if named else None)
    again = [
        r for r in (named or ([run] if run else [])) if r.attempt >= 2 and r.status == "failed"
    ]
    if again:
        run = again[0]
        return (
            f"Run {run.id} failed again on attempt {run.attempt}; a rerun is unlikely to help.\n"
            "<promise>NEED_HUMAN_INPUT</promise>\n"
            f"<reason>Run {run.id} failed {run.attempt} times; rerun, fix or drop it?</reason>\n"
            "<urgency>high</urgency>\n"
        )
    error = error_line(every_log(paths.run_dir(run.id))) if run else None
    seen = f" Its log says: {error!r}." if error else ""
    if "rerun" in choices:
        resolution = json.dumps({"alert_id": alert_id, "choice": "rerun"})
        return (
            f"The run {source} failed{' on its first attempt' if run else ''}.{seen} "
            "That looks transient, so I rerun it.\n"
            f"<resolve_alert>{resolution}</resolve_alert>\n"
        )
    return f"Looked at alert {alert_id}; nothing to rerun.\n<promise>ALERT_RESOLVED</promise>\n"


def human_text(paths: WildPaths) -> str:
    """Everything the human wrote in human.md, for the analysis to take into account: their
    inputs, not wild's questions (answered ones included) nor its progress reports."""
    doc = human_md.parse(read_text(paths.human))
    return "\n".join(e.content for e in doc.inputs if e.status in ("pending", "processed"))


def write_artifacts(project: Path, paths: WildPaths, analysis: Analysis) -> Path:
    """The report, its answers as JSON, the sweep spec and the story's files under results/."""
    out = project / RESULTS
    out.mkdir(exist_ok=True)
    sweep = latest_sweep(read_index(paths))
    if sweep is not None:
        (out / "sweep.json").write_text(json.dumps(dict(sweep.spec), indent=2) + "\n")
    (out / "report.md").write_text(analysis.report)
    (out / "conclusions.json").write_text(json.dumps(dict(analysis.conclusions), indent=2) + "\n")
    for name, text in analysis.files.items():
        (out / name).write_text(text)
    for name, source in analysis.copies.items():
        if not (project / source).is_file():
            continue  # a run's file removed since (a cleaned-up run): the report still stands
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(project / source, out / name)
    return out


def analysis_reply(project: Path, paths: WildPaths) -> str:
    """The analysis stage: the report from the runs' metrics, then COMPLETE, or the human."""
    analysis = analysis_of(story_name(project))(load_results(paths), human_text(paths))
    out = write_artifacts(project, paths, analysis)
    lines = [analysis.report.rstrip(), "", f"The artifacts are in {out}.", ""]
    if analysis.notify:
        lines += ["<promise>NOTIFY_HUMAN</promise>", f"<reason>{analysis.notify}</reason>"]
    if analysis.need_human:
        lines += ["<promise>NEEDS_HUMAN</promise>", f"<reason>{analysis.need_human}</reason>"]
    else:
        lines.append("<promise>COMPLETE</promise>")
    return "\n".join(lines) + "\n"


def story_step(
    prompt: str, project: Path, work_type: str | None = None, work_id: str | None = None
) -> str:
    """The agent's reply to one prompt, read and acted on in `project`."""
    paths = WildPaths(project / ".wild")
    kind = stage(prompt, work_type)
    if kind == "alert":
        return alert_reply(prompt, paths, work_id)
    if kind == "sweep" and latest_sweep(read_index(paths)) is None:
        return sweep_reply(project)
    if kind in ("sweep", "analysis"):
        return analysis_reply(project, paths)
    if kind == "human-input":
        return "Read the human's input; the analysis will take it into account.\n" + (
            "<promise>HUMAN_INPUT_PROCESSED</promise>\n"
        )
    nothing = f"Nothing to do for this {work_type or 'work'} in a story."
    return nothing + "\n<promise>TASK_COMPLETE</promise>\n"


def main() -> int:
    prompt_file = os.environ.get("WILD_PROMPT_FILE")
    try:
        prompt = Path(prompt_file).read_text() if prompt_file else sys.stdin.read()
        reply = story_step(
            prompt, Path.cwd(), os.environ.get("WILD_WORK_TYPE"), os.environ.get("WILD_WORK_ID")
        )
    except (OSError, ValueError, KeyError) as error:  # a broken story folder: say what is wrong
        print(f"story agent: {error}", file=sys.stderr)
        return 1
    print(reply, end="", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
