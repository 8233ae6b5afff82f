"""The click shell: parse flags, call one core function, print, map errors to exit codes.

Exit codes: 0 ok, 1 user error (`Error: …` with what to do; also an OSError, such as a file
wild cannot read or a lock another wild holds), 2 usage, 3 unexpected crash (details in a crash
log), 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from wild import __version__
from wild import cli_options as options
from wild.cli_options import (
    CHOICE,
    FLAG,
    FLOAT,
    INT,
    OPTIONAL,
    OPTIONS,
    PATH,
    SECTIONS,
    Option,
    call_for,
    print_undecodable_bytes_as_they_are,
)
from wild.clock import Clock, SystemClock
from wild.commands.actions import HANDLERS, LOOP, SERVE, action_words, misplaced_option
from wild.errors import UsageError, WildError
from wild.output import capped
from wild.paths import WildPaths
from wild.record import replace

clock: Clock = SystemClock()
SWEEP_COMMAND = "wild.sweep_command"  # ctx.meta: the words of `wild --sweep -- CMD…`


class GuardedCommand(click.Command):
    """Maps wild's errors to one `Error: …` line and an exit code, also under CliRunner."""

    def invoke(self, ctx: click.Context) -> Any:
        print_undecodable_bytes_as_they_are()
        try:
            return super().invoke(ctx)
        except (Exception, KeyboardInterrupt) as exc:
            ctx.exit(failure_code(exc, ctx.params.get("wild_dir"), "wild_dir" in ctx.params))


def failure_code(exc: Exception | KeyboardInterrupt, wild_dir: str | None, has_dir: bool) -> int:
    """Say what went wrong in one line on stderr; the exit code it means. `wild_dir`: the
    `--dir` given (`has_dir`: the command reads one), for an OSError's message."""
    if isinstance(exc, WildError):
        click.echo(f"Error: {capped(str(exc))}", err=True)
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        click.echo("Interrupted.", err=True)
        return 130
    if isinstance(exc, BrokenPipeError):
        # The reader went away (`wild demo | head`): stop quietly, as other CLIs do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    if isinstance(exc, OSError):  # the system refused: a lock held, a file wild cannot use
        from wild.commands.failures import os_error_message  # noqa: PLC0415  (on failure)

        folder = WildPaths.resolve(wild_dir).root if has_dir else None
        click.echo(f"Error: {capped(os_error_message(exc, folder))}", err=True)
        return 1
    # A bug: keep the user's terminal free of tracebacks.
    from wild.commands.failures import crash_log  # noqa: PLC0415  (on failure)

    click.echo(
        f"Error: wild crashed ({type(exc).__name__}: {capped(str(exc))}); " + crash_log(exc),
        err=True,
    )
    return 3


FC = TypeVar("FC", bound=Callable[..., Any])


class HelpSection:
    """One section of `wild --help`. Its `action` and `option` declare the flags listed in it,
    each with the actions it goes with, so that no flag can be added without saying both.

    A plain class, not a dataclass: every command builds these at start (issue 22 item 8).
    """

    def __init__(self, title: str) -> None:
        self.title = title

    def action(self, *decls: str, also: tuple[str, ...] = (), **attrs: Any) -> Callable[[FC], FC]:
        """A flag that chooses what wild does (at most one per command line); `also`: the
        other actions it modifies as an option (`--runs --sweep ID`)."""
        return click.option(
            *decls, cls=WildOption, section=self, acts=True, goes_with=also, **attrs
        )

    def option(self, *decls: str, goes_with: tuple[str, ...], **attrs: Any) -> Callable[[FC], FC]:
        """An option, and the actions it does something with (by their parameter names, or
        LOOP for `wild "GOAL"` and SERVE for `--serve` alone)."""
        return click.option(*decls, cls=WildOption, section=self, goes_with=goes_with, **attrs)


# The sections of `wild --help`, in the order a person scans them (wild.cli_options names them).
HELP_SECTIONS = tuple(HelpSection(title) for title in SECTIONS)
_SECTION = {section.title: section for section in HELP_SECTIONS}
RUN_THE_LOOP = _SECTION[options.RUN_THE_LOOP]
READING_STATE = _SECTION[options.READING_STATE]
EVERYWHERE = _SECTION[options.EVERYWHERE]  # --dir, and click's own --version and --help
# Shown at the end of `wild --help`.
EXAMPLES = (
    'wild "Fix the flaky tests" --agent codex --max-iterations 20',
    'wild --add-task "Write the report" --priority 1',
    'wild --human-input "Use the smaller model" --urgent',
    "wild --approve",
    "wild --sweep sweep.yaml --run",
    "wild --status --watch",
    "wild --serve",
)


class WildOption(click.Option):
    """A flag of `wild` that knows its help section and the actions it goes with: an action
    flag goes with its own action. Declared through a `HelpSection`."""

    def __init__(
        self,
        param_decls: Sequence[str],
        *,
        section: HelpSection,
        goes_with: tuple[str, ...],
        acts: bool = False,
        **attrs: Any,
    ) -> None:
        super().__init__(param_decls, **attrs)
        self.section = section
        self.acts = acts
        self.owners: tuple[str, ...] = (*((self.name,) if acts and self.name else ()), *goes_with)

    def get_help_extra(self, ctx: click.Context) -> Any:
        """Without the range (`[0<x<=1000000000000.0]`): docs/cli.md gives it; `--help` stays
        one line an option."""
        extra = super().get_help_extra(ctx)
        extra.pop("range", None)
        return extra


def option_owners(command: click.Command) -> dict[str, tuple[str, ...]]:
    """Each option's parameter name -> the actions it goes with."""
    return {p.name: p.owners for p in command.params if isinstance(p, WildOption) and p.name}


def _undeclared_options(params: Sequence[click.Parameter]) -> list[str]:
    """Why these parameters could not make `wild` (empty when they can): an option declared
    outside a help section, or one that goes with no action or with one that does not exist."""
    problems = [
        f"{p.opts[0]} is not declared through a HelpSection"
        for p in params
        if isinstance(p, click.Option) and not p.is_eager and not isinstance(p, WildOption)
    ]
    declared = [p for p in params if isinstance(p, WildOption)]
    actions = {p.name for p in declared if p.acts} | {LOOP}
    for p in declared:
        unknown = [owner for owner in p.owners if owner not in actions]
        if not p.owners or unknown:
            problems.append(f"{p.opts[0]} goes with no action, or with unknown ones {unknown}")
    return problems


class WildCommand(GuardedCommand):
    """`wild`: the loop and the actions; a first word naming a subcommand runs that instead.

    A click group would read a goal as an unknown subcommand, so the subcommands (`demo`) are
    looked up here, before parsing, and listed in `--help` beside the options.
    """

    def __init__(self, *args: Any, subcommands: Mapping[str, click.Command], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.subcommands = dict(subcommands)
        problems = _undeclared_options(self.params)
        if problems:  # a new flag must say where --help lists it and what it goes with
            raise TypeError("; ".join(problems))

    def main(  # type: ignore[override]
        self, args: Sequence[str] | None = None, prog_name: str | None = None, **extra: Any
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        sub = self.subcommands.get(argv[0]) if argv else None
        if sub is not None:
            return sub.main(argv[1:], prog_name=f"{prog_name or 'wild'} {argv[0]}", **extra)
        return super().main(argv, prog_name, **extra)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args, command = _sweep_command(args)
        if command is not None:
            ctx.meta[SWEEP_COMMAND] = command
        # `wild --dir x demo` reads as the demo but would start a real agent on the goal "demo".
        explicit = "--" in args  # checked first: parsing consumes `args`
        rest = super().parse_args(ctx, args)
        name = ctx.params.get("goal")
        if name in self.subcommands and not explicit:
            raise click.UsageError(
                f'`{name}` is a command: run `wild {name}` on its own; for the goal "{name}",'
                f" write `wild -- {name}` or `wild --goal {name}`",
                ctx,
            )
        params = ((p.name, p.opts, not p.expose_value) for p in self.get_params(ctx))
        flag = action_words(params).get(name.strip().lower()) if name else None
        if flag is not None and not explicit:  # `wild status` would start an agent
            raise click.UsageError(
                f"did you mean `wild {flag}`? `{name}` alone is not taken as a goal;"
                f' for the goal "{name}", write `wild --goal {name}`',
                ctx,
            )
        return rest

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_usage(ctx, formatter)
        for name in self.subcommands:
            formatter.write_usage(f"{ctx.command_path} {name}", prefix="       ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The options by section (see HELP_SECTIONS), aligned in one column across them."""
        rows: dict[HelpSection, list[tuple[str, str]]] = {s: [] for s in HELP_SECTIONS}
        rows[RUN_THE_LOOP].append(("GOAL", "Any text: run the agent loop until it is reached."))
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None and isinstance(param, click.Option):
                section = param.section if isinstance(param, WildOption) else EVERYWHERE
                rows[section].append(record)
        commands = [(name, sub.get_short_help_str()) for name, sub in self.subcommands.items()]
        terms = [term for records in (*rows.values(), commands) for term, _ in records]
        width = min(max(map(len, terms)), 30)
        for title, records in (
            *((s.title, rows[s]) for s in HELP_SECTIONS),
            ("Commands", commands),
        ):
            with formatter.section(title):
                formatter.write_dl([(term.ljust(width), text) for term, text in records])

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Examples"):
            for example in EXAMPLES:
                formatter.write(f"{'':>{formatter.current_indent}}{example}\n")


def _sweep_command(args: list[str]) -> tuple[list[str], list[str] | None]:
    """`wild --sweep -- python train.py -m lr=0.1,0.01`: the words after `--` are a Hydra
    multirun command line, the sweep itself, not wild's options or a goal."""
    for at in range(len(args) - 1):
        if args[at : at + 2] == ["--sweep", "--"]:
            return args[: at + 2], args[at + 2 :]
    return args, None


@click.command(
    "demo",
    cls=GuardedCommand,
    short_help="The first research story, in a temporary folder.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
def demo() -> None:
    """The rl-training story: the real loop, real runs and a scripted agent, in a temp folder."""
    from wild.commands.demo import run_demo  # noqa: PLC0415  (the loop: only for the demo)

    sys.exit(run_demo(out=click.echo, heading=lambda title: click.secho(title, bold=True)))


def _click_option(option: Option) -> Callable[[FC], FC]:
    """The click option `option` describes, in its help section."""
    attrs: dict[str, Any] = {"metavar": option.metavar, "help": option.help}
    if option.kind == FLAG:
        attrs["is_flag"] = True
    elif option.kind == OPTIONAL:  # `--approve` alone, or `--approve ID`
        attrs.update(is_flag=False, flag_value="", default=None)
    elif option.kind == INT and _ranged(option):
        low, high = (None if n is None else int(n) for n in (option.low, option.high))
        attrs["type"] = click.IntRange(low, high, min_open=option.low_open)
    elif option.kind == FLOAT and _ranged(option):
        attrs["type"] = click.FloatRange(option.low, option.high, min_open=option.low_open)
    elif option.kind in (INT, FLOAT):
        attrs["type"] = int if option.kind == INT else float
    elif option.kind == PATH:
        attrs["type"] = click.Path(path_type=Path)
    elif option.kind == CHOICE:
        attrs["type"] = click.Choice(option.choices)
    if option.default is not None:
        attrs.update(default=option.default, show_default=True)
    if option.multiple:
        attrs["multiple"] = True
    section = _SECTION[option.section]
    if option.acts:
        return section.action(*option.decls, also=option.goes_with, **attrs)
    return section.option(*option.decls, goes_with=option.goes_with, **attrs)


def _ranged(option: Option) -> bool:
    return option.low is not None or option.high is not None


def _options(command: FC) -> FC:
    """Every option of `wild`, from `wild.cli_options.OPTIONS`, in its order."""
    for option in reversed(OPTIONS):
        command = _click_option(option)(command)
    return command


@click.command(
    "wild",
    cls=WildCommand,
    subcommands={"demo": demo},
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("goal", required=False)
@click.version_option(__version__, "--version", prog_name="wild", message="%(prog)s %(version)s")
@_options
def cli(**params: Any) -> None:
    """Run a coding agent autonomously towards GOAL over the files in .wild/, or manage them.

    GOAL is any text; when it is the name of a command, write `wild -- demo` or
    `wild --goal demo`.
    """
    ctx = click.get_current_context()
    action, call = call_for(
        params,
        sweep_command=ctx.meta.get(SWEEP_COMMAND),
        clock=clock,
        echo=click.echo,
        clear=click.clear,
    )
    _check_options_belong(ctx, action)
    serving = params["serve"]
    if not serving and ctx.get_parameter_source("port") is ParameterSource.COMMANDLINE:
        raise UsageError("--port belongs to --serve; it does nothing without it")
    if serving:
        from wild.serve.command import serve  # noqa: PLC0415  (only when serving)

        def loop(ready: Callable[[], None]) -> None:
            HANDLERS[LOOP](replace(call, opts={**call.opts, "on_ready": ready}))

        port = params["port"]
        paths = call.paths
        serve(paths, clock, port=port, out=click.echo, beside=None if action == SERVE else loop)
        return
    HANDLERS[action](call)


def _check_options_belong(ctx: click.Context, action: str) -> None:
    """Refuse an option the chosen action would silently ignore (`--status --priority 1`)."""
    options = [p for p in ctx.command.params if isinstance(p, WildOption) and p.name]
    given = [
        p.name
        for p in options
        if p.name and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE
    ]
    flags = {p.name: p.opts[0] for p in options if p.name}
    problem = misplaced_option(action, given, option_owners(ctx.command), flags)
    if problem:
        raise UsageError(problem)


def main() -> None:
    cli(prog_name="wild")
