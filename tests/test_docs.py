"""The user docs stay true: every CLI flag documented and none stale; format examples parse."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from wild.cli import cli
from wild.commands.run_loop import EXIT_CODES
from wild.control import read_pending
from wild.errors import UsageError, WildError
from wild.parsers import barriers, checks, human, policy, tasks
from wild.parsers.state import LoopState
from wild.paths import WildPaths
from wild.store.alerts_log import read_new
from wild.store.events_log import read_events
from wild.store.runs_log import read_runs
from wild.store.state_file import load_state

ROOT = Path(__file__).resolve().parent.parent
CLI_DOC = ROOT / "docs" / "cli.md"
FORMATS_DOC = ROOT / "docs" / "formats.md"
NOT_BUILT = "\n## Not built yet\n"
# `--flag` as a whole token: not the tail of `---` or of a longer word.
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*(?![\w-])")
FENCE = re.compile(r"(`{3,}|~{3,})(.*)")
ATTRIBUTE = re.compile(r"(\w+)=(\S+)")


def cli_long_options() -> set[str]:
    """Every `--name` the click command accepts, `--help` included."""
    params = cli.get_params(click.Context(cli))
    return {name for p in params for name in (*p.opts, *p.secondary_opts) if name[:2] == "--"}


def cli_doc_parts() -> tuple[str, str]:
    """(the documented part of docs/cli.md, its "Not built yet" section, if any)."""
    documented, _marker, not_built = CLI_DOC.read_text().partition(NOT_BUILT)
    return documented, not_built


def test_every_cli_option_is_documented() -> None:
    documented = set(FLAG.findall(cli_doc_parts()[0]))
    assert sorted(cli_long_options() - documented) == []


def test_every_option_the_doc_names_exists() -> None:
    documented = set(FLAG.findall(cli_doc_parts()[0]))
    assert sorted(documented - cli_long_options()) == []


def test_options_listed_as_not_built_really_are_missing() -> None:
    """When one gets built, this fails until the doc describes it properly."""
    not_built = set(FLAG.findall(cli_doc_parts()[1]))
    assert sorted(not_built & cli_long_options()) == []


def test_documented_exit_codes_are_the_ones_wild_uses() -> None:
    documented = {int(code) for code in re.findall(r"^\| (\d+) \|", CLI_DOC.read_text(), re.M)}
    assert documented == {0, 1, 2, 3, 4, 5, 130}
    assert {WildError.exit_code, UsageError.exit_code, *EXIT_CODES.values()} <= documented


def test_readme_points_to_the_reference_docs() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "docs/cli.md" in readme
    assert "docs/formats.md" in readme


def readme_setup_commands() -> list[str]:
    """The two set-up commands the README opens with (its first fenced block)."""
    block = (ROOT / "README.md").read_text().split("```bash", 1)[1].split("\n", 1)[1]
    block = block.split("```", 1)[0]
    return block.strip().splitlines()


def test_the_readme_setup_installs_nothing_globally_and_ci_runs_it_verbatim_in_a_venv() -> None:
    install_and_demo, install_and_test = readme_setup_commands()
    assert "wild demo" in install_and_demo
    # A pinned global CLI would downgrade a user's own newer copy.
    assert " -g " not in f" {install_and_test} " and "--global" not in install_and_test
    ci = (ROOT / ".ci" / "run").read_text()
    assert install_and_test in ci.splitlines()
    venv = ci.index('. "$venv/bin/activate"')
    assert ci.index("python3 -m venv") < venv < ci.index(install_and_test)


def test_the_tools_the_readme_tells_a_developer_to_run_are_installed_by_the_test_extra() -> None:
    readme = (ROOT / "README.md").read_text()
    extra = (ROOT / "setup.cfg").read_text().split("test =", 1)[1].split("\n\n", 1)[0]
    assert "pre-commit install" in readme
    assert re.search(r"^\s+pre-commit\b", extra, re.MULTILINE)


def test_the_agent_doc_names_every_work_type_and_every_variable_wild_sets() -> None:
    """What a custom agent's author needs: each `$WILD_WORK_TYPE` wild gives and each variable
    an agent or a research run gets (from the code that sets them, not a copy)."""
    from wild.agents.runner import agent_env
    from wild.parsers.runs import RunRecord
    from wild.prompts import KINDS
    from wild.runs.decide import run_env

    doc = (ROOT / "docs" / "agents.md").read_text()
    agent = agent_env(wild_dir=ROOT, iteration=1, work_type="t", work_id="i", prompt_file=ROOT)
    run = RunRecord("r", "s", {"lr": 0.1}, "true", "queued")
    names = {*agent, *run_env(run, "d", "r", {})} - {"WILD_PARAM_LR"} | {"WILD_PARAM_<KEY>"}
    assert [kind for kind in KINDS if f"| `{kind}` |" not in doc] == []
    assert [name for name in sorted(names) if f"`{name}`" not in doc] == []
    assert "IS_SANDBOX=1" in doc
    assert "docs/agents.md" in (ROOT / "README.md").read_text()


# ---------------------------------------------------------------------- docs/formats.md


@dataclass(frozen=True)
class Example:
    """One fenced block of docs/formats.md tagged `title=<file>`."""

    file: str
    line: int  # of the opening fence, 1-based
    text: str
    problems: int  # how many problems the example is meant to show


def examples(doc: str) -> list[Example]:
    found: list[Example] = []
    lines = doc.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        opening = FENCE.fullmatch(lines[index].rstrip("\n"))
        index += 1
        if opening is None:
            continue
        fence, attributes = opening.group(1), dict(ATTRIBUTE.findall(opening.group(2)))
        start = index
        while index < len(lines) and lines[index].rstrip() != fence:
            index += 1
        if "title" in attributes:
            text = "".join(lines[start:index])
            found.append(
                Example(attributes["title"], start, text, int(attributes.get("problems", "0")))
            )
        index += 1  # past the closing fence
    return found


# Each reader returns (records found, problems) for an example's text.
Reader = Callable[[str, Path], tuple[int, list[str]]]


def _tasks(text: str, _tmp: Path) -> tuple[int, list[str]]:
    doc = tasks.parse(text)
    return len(doc.tasks), [str(p) for p in doc.problems]


def _barriers(text: str, _tmp: Path) -> tuple[int, list[str]]:
    doc = barriers.parse(text)
    return len(doc.barriers), [str(p) for p in doc.problems]


def _checks(text: str, _tmp: Path) -> tuple[int, list[str]]:
    doc = checks.parse(text)
    return len(doc.checks), [str(p) for p in doc.problems]


def _human(text: str, _tmp: Path) -> tuple[int, list[str]]:
    doc = human.parse(text)
    return len(doc.inputs), [str(p) for p in doc.problems]


def _policy(text: str, _tmp: Path) -> tuple[int, list[str]]:
    doc = policy.parse(text)
    return len(doc.settings) + len(doc.rules), [str(p) for p in doc.problems]


def _alerts(text: str, tmp: Path) -> tuple[int, list[str]]:
    path = tmp / "alerts.jsonl"
    path.write_text(text)
    result = read_new(path, None)
    return len(result.entries), [str(p) for p in result.problems]


def _events(text: str, tmp: Path) -> tuple[int, list[str]]:
    path = tmp / "events.log"
    path.write_text(text)
    events, problems = read_events(path)
    return len(events), [str(p) for p in problems]


def _state(text: str, tmp: Path) -> tuple[int, list[str]]:
    path = tmp / "state.json"
    path.write_text(text)
    loaded = load_state(path)
    return int(loaded.state != LoopState()), [str(p) for p in loaded.problems]


def _control(text: str, tmp: Path) -> tuple[int, list[str]]:
    paths = WildPaths(tmp)
    paths.control.write_text(text)
    requests, _ = read_pending(paths, 0)
    lines = [line for line in text.splitlines() if line.strip()]
    # The control reader skips what it cannot use without a report: count those lines here.
    return len(requests), [f"control: {len(lines) - len(requests)} line(s) skipped"][
        : int(len(lines) != len(requests))
    ]


def _runs(text: str, tmp: Path) -> tuple[int, list[str]]:
    path = tmp / "runs.jsonl"
    path.write_text(text)
    log = read_runs(path)
    return len(log.index.runs) + len(log.index.sweeps), [str(p) for p in log.problems]


READERS: dict[str, Reader] = {
    "tasks.md": _tasks,
    "alerts.jsonl": _alerts,
    "barriers.md": _barriers,
    "checks.md": _checks,
    "human-policy.md": _policy,
    "human.md": _human,
    "state.json": _state,
    "events.log": _events,
    "control": _control,
    "runs.jsonl": _runs,
}
EXAMPLES = examples(FORMATS_DOC.read_text())


def test_every_file_has_an_example_and_every_example_a_known_file() -> None:
    assert sorted({e.file for e in EXAMPLES}) == sorted(READERS)


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e.file}@{e.line}" for e in EXAMPLES])
def test_format_example_parses_as_documented(example: Example, tmp_path: Path) -> None:
    records, problems = READERS[example.file](example.text, tmp_path)
    assert records > 0, "an example that holds no record shows nothing"
    if example.problems == 0:
        assert problems == []
    else:
        assert len(problems) == example.problems, problems


def test_examples_finds_tagged_blocks_only() -> None:
    doc = (
        "text\n```bash\nwild --init\n```\n"
        "```markdown title=tasks.md problems=2\n- [ ] a\n```\n"
        "````jsonl title=control\n```\n{}\n````\n"
    )
    assert examples(doc) == [
        Example("tasks.md", 5, "- [ ] a\n", 2),
        Example("control", 8, "```\n{}\n", 0),
    ]


# ---------------------------------------------------------------------- docs/reliability.md


def test_every_test_the_reliability_doc_names_exists() -> None:
    """Each promise names its tests; a renamed or deleted one must take the doc with it."""
    doc = (ROOT / "docs" / "reliability.md").read_text()
    files = set(re.findall(r"tests/[\w/]+\.py", doc))
    assert files, "the doc names no test file"
    assert sorted(f for f in files if not (ROOT / f).is_file()) == []
    bare = {f"tests/reliability/{name}.py" for name in re.findall(r"`(test_\w+)\.py`", doc)}
    assert sorted(f for f in bare - files if not (ROOT / f).is_file()) == []
    every_test = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    named = set(re.findall(r"`(?:[\w/]+\.py::)?(test_\w+)`", doc))
    assert named, "the doc names no test function"
    assert sorted(t for t in named if f"def {t}(" not in every_test) == []
