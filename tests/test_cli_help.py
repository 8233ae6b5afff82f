"""`wild --help` is grouped into sections a person scans, each action flag on one line."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click

from tests.cli_support import invoke
from wild.cli import EXAMPLES, WildOption, cli

# The sections issue 22 asks for, in this order, then the flags of any command, the
# subcommands and the examples.
SECTIONS = [
    "Run the loop",
    "Tasks and input",
    "Alerts",
    "Barriers and approval",
    "Runs and sweeps",
    "Reading state",
    "The dashboard",
    "Set up",
    "With any command",
    "Commands",
    "Examples",
]
# Where a person looks for each action flag.
ACTION_SECTIONS = {
    "Run the loop": ["--pause", "--resume", "--stop"],
    "Tasks and input": ["--human-input", "--add-task", "--update-policy"],
    "Alerts": ["--alert", "--wait-alert"],
    "Barriers and approval": [
        "--satisfy",
        "--check-barriers",
        "--run-checks",
        "--approve",
        "--generate-check",
    ],
    "Runs and sweeps": ["--sweep", "--runs", "--compare", "--run-sweeps", "--stop-run", "--rerun"],
    "Reading state": ["--status", "--list-work", "--show-policy"],
    "The dashboard": ["--serve"],
    "Set up": ["--init", "--migrate"],
}
HEADING = re.compile(r"^(\S[^:]*):$")


def help_sections() -> dict[str, list[str]]:
    """Each section's title -> its lines, in the order `wild --help` prints them."""
    result = invoke("--help")
    assert result.exit_code == 0
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in result.output.splitlines():
        heading = HEADING.match(line)
        if heading:
            current = sections.setdefault(heading.group(1), [])
        elif current is not None and line:
            current.append(line)
    return sections


def entries(lines: list[str]) -> dict[str, list[str]]:
    """A section's flags (`--add-task`, `-h, --help`: `--help`) -> their lines, the first and
    any that continue its description."""
    found: dict[str, list[str]] = {}
    last: list[str] = []
    for line in lines:
        term = re.match(r"^  (?:-\w, )?(--?[\w-]+|[A-Za-z]\w*)", line)
        if term:
            last = found.setdefault(term.group(1), [])
        last.append(line)
    return found


def test_the_help_has_the_sections_in_order() -> None:
    assert list(help_sections()) == SECTIONS


def test_each_action_flag_is_listed_once_in_its_section_on_one_line() -> None:
    sections = help_sections()
    actions = {p.opts[0] for p in cli.params if isinstance(p, WildOption) and p.acts}
    assert sorted(flag for flags in ACTION_SECTIONS.values() for flag in flags) == sorted(actions)
    for title, flags in ACTION_SECTIONS.items():
        listed = entries(sections[title])
        for flag in flags:
            assert len(listed[flag]) == 1, (flag, listed[flag])  # one line: no continuation
            assert re.match(r"^  --[\w-]+(?: \S+)?  +\w", listed[flag][0]), listed[flag]
        others = [t for t in sections if t != title]
        assert [(f, t) for f in flags for t in others if f in entries(sections[t])] == []


def test_every_option_is_listed_exactly_once() -> None:
    sections = help_sections()
    terms = [term for lines in sections.values() for term in entries(lines)]
    options = [
        p.opts[-1] for p in cli.get_params(click.Context(cli)) if isinstance(p, click.Option)
    ]
    assert sorted(t for t in terms if t.startswith("-")) == sorted(options)


def test_the_help_fits_a_terminal_of_80_columns() -> None:
    assert [line for line in invoke("--help").output.splitlines() if len(line) > 80] == []


def test_the_examples_are_shown_and_are_command_lines_wild_accepts() -> None:
    shown = [line.strip() for line in help_sections()["Examples"]]
    assert shown == list(EXAMPLES)
    for example in EXAMPLES:
        words = shlex.split(example)
        assert words[0] == "wild"
        with cli.make_context("wild", words[1:]) as ctx:  # parses; runs nothing
            assert ctx.params


def doc_regions() -> dict[str, str]:
    """docs/cli.md's headings -> their text, up to the next heading of the same or a higher
    level (so `## Run the loop` holds its `###` subsections)."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text()
    headings = list(re.finditer(r"^(#{2,3}) (.+)$", doc, re.M))
    regions: dict[str, str] = {}
    for at, heading in enumerate(headings):
        level = len(heading.group(1))
        ends = [h.start() for h in headings[at + 1 :] if len(h.group(1)) <= level]
        regions[heading.group(2)] = doc[heading.end() : ends[0] if ends else len(doc)]
    return regions


def test_docs_cli_md_has_the_help_sections_in_order_each_documenting_its_flags() -> None:
    sections, regions = help_sections(), doc_regions()
    titles = SECTIONS[: SECTIONS.index("With any command")]
    assert [title for title in regions if title in titles] == titles
    undocumented = [
        (title, flag)
        for title in titles
        for flag in entries(sections[title])
        if flag.startswith("--") and f"| `{flag}" not in regions[title]
    ]
    assert undocumented == []
