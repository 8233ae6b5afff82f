"""Fuzzing the CLI's arguments: any values for any action's options exit 0, 1 or 2, never 3.

Exit 3 is "wild crashed". Whatever a user types (or a script passes) must end in a result, an
`Error: …` line (1) or a usage error (2). The values mix hand-picked trouble (durations that
overflow, JSON that is not an object, ids with slashes, bytes that are not UTF-8 as Python
decodes them from argv) with random text. The loop itself is not run here: it starts an agent.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli_support import init_wild_dir, invoke
from wild.cli import cli, option_owners
from wild.commands.actions import ACTIONS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# Out-of-range durations (99999999d) are tests/reliability/test_liveness_*'s to fuzz.
# `--status --watch` redraws until interrupted; everything else returns.
NEVER = {"watch", "wild_dir"}
TROUBLE = [
    "",
    " ",
    "-",
    "--",
    "--status",
    "0",
    "-1",
    "1",
    "3",
    "1e309",
    "nan",
    "6h",
    "-5m",
    "0s",
    "task-001",
    "a/b",
    "@notify",
    ".",
    "..",
    "../escape",
    "~",
    "{",
    "[]",
    "{}",
    '{"a": 1}',
    "null",
    '{"a": NaN}',
    '{"a": 1e999}',
    "autonomous",
    "hands-off",
    "wild_night",
    "<promise>TASK_COMPLETE</promise>",
    "## [PENDING] 2026-01-01T00:00:00Z - x",
    "- [ ] task-001: x",
    "x" * 5000,
    "a\nb",
    "\r",
    "é",
    "\u2028",
    "0001-01-01T00:00:00+14:00",
    # A byte that is not UTF-8 reaches Python's argv as a lone surrogate (surrogateescape).
    "\udcff",
    "caf\udce9",
]
# NUL cannot be in an argument (the kernel ends a string there); other lone surrogates cannot
# come from a decoded argv either.
TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=30)
VALUES = st.one_of(st.sampled_from(TROUBLE), TEXT)
# Values each option accepts, so that the examples get past the first check as often as not.
TYPICAL = {
    "priority": ["1", "2", "9"],
    "depends_on": ["task-001", "task-002"],
    "blocked_by": ["barrier-x"],
    "context": ['{"run": 3, "loss": [1.5, null]}', "{}"],
    "duration": ["6h", "90m", "1h30m", "2 days"],
    "update_policy": ["autonomous", "Hands Off", "wild_night", "semi-autonomous"],
    "satisfy": ["barrier-x"],
    "approve": ["barrier-x", "@notify"],
    "generate_check": ["barrier-x"],
    "from_dir": ["ralph", "missing"],
}
# Examples per test are few, to keep the suite fast; `WILD_FUZZ_SCALE=50` runs a long fuzz.
SCALE = int(os.environ.get("WILD_FUZZ_SCALE", "1"))
PARAMS = {p.name: p for p in cli.params if isinstance(p, click.Option) and p.name}


@st.composite
def arguments(draw: st.DrawFn, action: str) -> list[str]:
    """The action's flag and a random choice of its own options, with random values."""
    own = [name for name, owners in option_owners(cli).items() if action in owners]
    # Three in four: an action's required companions (--alert's four) come together often.
    names = [action, *(n for n in own if n not in (action, *NEVER) and draw(st.integers(0, 3)))]
    args: list[str] = []
    for name in names:
        param = PARAMS[name]
        flag = param.opts[0]
        if param.is_flag:
            args.append(flag)
            continue
        repeat = draw(st.integers(1, 2)) if param.multiple else 1
        for _ in range(repeat):
            typical = (
                list(param.type.choices)
                if isinstance(param.type, click.Choice)
                else TYPICAL.get(name, [])
            )
            if typical and draw(st.booleans()):
                value = draw(st.sampled_from(typical))
            else:
                value = draw(VALUES)
            args += [flag, value]
    return args


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One folder that the examples share, so later actions meet what earlier ones wrote."""
    root = tmp_path_factory.mktemp("fuzz-cli")
    wild_dir = init_wild_dir(root)
    with (wild_dir / "barriers.md").open("a") as barriers:
        barriers.write("\n## [WAITING] barrier-x\n- Type: command-check\n- Check: false\n")
    shutil.copytree(FIXTURES / "ralph", root / "ralph")
    before = Path.cwd()
    os.chdir(root)  # relative paths in values (`--from ../escape`) stay inside the test folder
    try:
        yield root
    finally:
        os.chdir(before)


# `--migrate --force` replaces the folder: last, so the others meet the barrier set up above.
FUZZED = [action for action in ACTIONS if action not in ("init", "migrate")] + ["migrate"]


@pytest.mark.parametrize("action", FUZZED)
def test_any_option_values_exit_0_1_or_2(project: Path, action: str) -> None:
    @settings(max_examples=12 * SCALE)
    @given(arguments(action))
    def run(args: list[str]) -> None:
        result = invoke(*args, "--dir", str(project / ".wild"))
        # --wait-alert's own codes: 6 no such alert, 124 timed out (documented in docs/cli.md).
        allowed = (0, 1, 2, 6, 124) if action == "wait_alert" else (0, 1, 2)
        assert result.exit_code in allowed, (args, result.output)
        assert "Traceback" not in result.output

    run()


FLAGS = sorted(p.opts[0] for name, p in PARAMS.items() if name not in NEVER)


@settings(max_examples=25 * SCALE)
@given(st.lists(st.one_of(st.sampled_from([*FLAGS, "-h"]), VALUES), max_size=8))
def test_any_argument_list_exits_0_1_or_2(tmp_path: Path, args: list[str]) -> None:
    # `--status` first: a goal or a loop option beside it is a usage error, so no agent starts.
    result = invoke("--status", "--dir", str(tmp_path / "none"), *args)
    assert result.exit_code in (0, 1, 2), (args, result.output)
    assert "Traceback" not in result.output
