"""An option the chosen action would ignore is a usage error naming the action it belongs to."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from tests.cli_support import init_wild_dir, invoke
from wild.cli import READING_STATE as READING
from wild.cli import WildCommand, WildOption, cli, option_owners
from wild.commands.actions import ACTIONS, EVERY, SERVE


@pytest.fixture
def wild_dir(tmp_path: Path) -> Path:
    root = init_wild_dir(tmp_path)
    return root


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--status", "--priority", "1"),
            "--priority belongs to --add-task; it does nothing with --status",
        ),
        (
            ("--status", "--agent", "codex"),
            '--agent belongs to the loop (wild "GOAL"); it does nothing with --status',
        ),
        (
            ("GOAL", "--urgent"),
            '--urgent belongs to --human-input; it does nothing with the loop (wild "GOAL")',
        ),
        (
            ("--list-work", "--watch"),
            "--watch belongs to --status or --runs; it does nothing with --list-work",
        ),
        (("--pause", "--from", "x"), "--from belongs to --migrate; it does nothing with --pause"),
        (
            ("--satisfy", "b", "--type", "OOM"),
            "--type belongs to --alert; it does nothing with --satisfy",
        ),
        (
            ("--add-task", "x", "--json"),
            "--json belongs to --status, --list-work, --show-policy, --check-barriers,"
            " --run-checks, --compare, --sweep or --runs;"
            " it does nothing with --add-task",
        ),
        (
            ("--show-policy", "--duration", "6h"),
            '--duration belongs to --update-policy or the loop (wild "GOAL");'
            " it does nothing with --show-policy",
        ),
        # An explicit default is still an option given to the wrong action.
        (
            ("--status", "--priority", "2"),
            "--priority belongs to --add-task; it does nothing with --status",
        ),
    ],
)
def test_an_option_for_another_action_is_refused(
    wild_dir: Path, args: tuple[str, ...], message: str
) -> None:
    before = {p.name: p.read_bytes() for p in wild_dir.iterdir() if p.is_file()}
    result = invoke(*args, "--dir", str(wild_dir))
    assert result.exit_code == 2
    assert result.output == f"Error: {message}\n"
    after = {p.name: p.read_bytes() for p in wild_dir.iterdir() if p.is_file()}
    assert after == before  # refused before doing anything


@pytest.mark.parametrize(
    "args",
    [
        ("--status", "--json"),
        ("--add-task", "x", "--priority", "1", "--depends-on", "task-9", "--blocked-by", "b"),
        ("--update-policy", "autonomous", "--duration", "6h"),
        ("--check-barriers", "--json"),
    ],
)
def test_options_of_the_chosen_action_are_accepted(wild_dir: Path, args: tuple[str, ...]) -> None:
    result = invoke(*args, "--dir", str(wild_dir))
    assert result.exit_code == 0, result.output


def test_every_option_says_which_actions_it_goes_with() -> None:
    # An eager option (--version) acts and exits before any action is chosen.
    options = {p.name for p in cli.params if isinstance(p, click.Option) and not p.is_eager}
    owners = option_owners(cli)
    assert set(owners) == options
    assert all(owners[name] and set(owners[name]) <= set(EVERY) for name in options)


def test_the_action_flags_are_the_actions_wild_dispatches() -> None:
    flags = {p.name for p in cli.params if isinstance(p, WildOption) and p.acts}
    assert flags == {*ACTIONS, SERVE}


def test_dir_works_with_every_action() -> None:
    assert option_owners(cli)["wild_dir"] == EVERY


def _command(*params: click.Parameter) -> WildCommand:
    return WildCommand("wild", params=list(params), subcommands={})


def test_a_new_option_declared_without_its_section_and_actions_is_refused() -> None:
    """The guard that replaced the hand-made table: a flag added the plain click way, or one
    naming an action that does not exist, stops `wild` from being built at all."""
    with pytest.raises(TypeError, match="--new-thing is not declared through a HelpSection"):
        _command(click.Option(["--new-thing"], is_flag=True))
    status = WildOption(["--status"], section=READING, goes_with=(), acts=True, is_flag=True)
    with pytest.raises(TypeError, match=r"--limit goes with .* \['stats'\]"):
        _command(status, WildOption(["--limit"], section=READING, goes_with=("stats",)))
    with pytest.raises(TypeError, match="--orphan goes with no action"):
        _command(WildOption(["--orphan"], section=READING, goes_with=()))
    assert option_owners(_command(status)) == {"status": ("status",)}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--status", "--serve"), "--serve belongs to --serve or the loop"),
        (("GOAL", "--port", "9000"), "--port belongs to --serve; it does nothing without it"),
        (
            ("--serve", "--urgent"),
            "--urgent belongs to --human-input; it does nothing with --serve",
        ),
    ],
)
def test_serve_options_are_checked_like_the_others(
    wild_dir: Path, args: tuple[str, ...], message: str
) -> None:
    result = invoke(*args, "--dir", str(wild_dir))
    assert result.exit_code == 2
    assert message in result.output
