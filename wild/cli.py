"""The click shell: parse flags, call one core function, print, map errors to exit codes.

Exit codes: 0 ok, 1 user error (`Error: …` with what to do; also an OSError, such as a file
wild cannot read or a lock another wild holds), 2 usage, 3 unexpected crash (details in a crash
log), 130 interrupted.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from wild import __version__
from wild.clock import Clock, SystemClock
from wild.commands.actions import (
    ACTIONS,
    EVERY,
    HANDLERS,
    LOOP,
    SERVE,
    Call,
    action_words,
    misplaced_option,
)
from wild.errors import UsageError, WildError
from wild.output import capped
from wild.parsers.severity import SEVERITIES
from wild.paths import WildPaths
from wild.serve import DEFAULT_PORT

clock: Clock = SystemClock()
SWEEP_COMMAND = "wild.sweep_command"  # ctx.meta: the words of `wild --sweep -- CMD…`


class GuardedCommand(click.Command):
    """Maps wild's errors to one `Error: …` line and an exit code, also under CliRunner."""

    def invoke(self, ctx: click.Context) -> Any:
        _print_undecodable_bytes_as_they_are()
        try:
            return super().invoke(ctx)
        except WildError as exc:
            click.echo(f"Error: {capped(str(exc))}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            # The reader went away (`wild demo | head`): stop quietly, as other CLIs do.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(1)
        except OSError as exc:  # the system refused: a lock held, a file wild cannot use
            from wild.commands.failures import os_error_message  # noqa: PLC0415  (on failure)

            has_dir = "wild_dir" in ctx.params
            folder = WildPaths.resolve(ctx.params["wild_dir"]).root if has_dir else None
            click.echo(f"Error: {capped(os_error_message(exc, folder))}", err=True)
            ctx.exit(1)
        except Exception as exc:  # a bug: keep the user's terminal free of tracebacks
            from wild.commands.failures import crash_log  # noqa: PLC0415  (on failure)

            click.echo(
                f"Error: wild crashed ({type(exc).__name__}: {capped(str(exc))}); "
                + crash_log(exc),
                err=True,
            )
            ctx.exit(3)


def _print_undecodable_bytes_as_they_are() -> None:
    """Let stdout write back the bytes of a file that are not UTF-8, as `cat` would.

    wild reads files with surrogateescape, so such a byte is a lone surrogate in the text; a
    strict UTF-8 stdout (a desktop locale) would fail on it. stderr already escapes them.
    """
    stdout = sys.stdout
    if isinstance(stdout, io.TextIOWrapper) and stdout.errors == "strict":
        stdout.reconfigure(errors="surrogateescape")


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


# The sections of `wild --help`, in the order a person scans them.
RUN_THE_LOOP = HelpSection("Run the loop")
TASKS_AND_INPUT = HelpSection("Tasks and input")
ALERTS = HelpSection("Alerts")
BARRIERS_AND_APPROVAL = HelpSection("Barriers and approval")
RUNS_AND_SWEEPS = HelpSection("Runs and sweeps")
READING_STATE = HelpSection("Reading state")
THE_DASHBOARD = HelpSection("The dashboard")
SET_UP = HelpSection("Set up")
EVERYWHERE = HelpSection("With any command")  # --dir, and click's own --version and --help
HELP_SECTIONS = (
    RUN_THE_LOOP,
    TASKS_AND_INPUT,
    ALERTS,
    BARRIERS_AND_APPROVAL,
    RUNS_AND_SWEEPS,
    READING_STATE,
    THE_DASHBOARD,
    SET_UP,
    EVERYWHERE,
)
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


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


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


@click.command(
    "wild",
    cls=WildCommand,
    subcommands={"demo": demo},
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("goal", required=False)
@click.version_option(__version__, "--version", prog_name="wild", message="%(prog)s %(version)s")
# Run the loop
@RUN_THE_LOOP.option(
    "--goal",
    "goal_option",
    metavar="TEXT",
    goes_with=(LOOP,),
    help="The goal as an option (any text: --goal demo).",
)
@RUN_THE_LOOP.option(
    "--agent",
    metavar="NAME",
    goes_with=(LOOP,),
    help="claude (default), codex, opencode, gemini, copilot, cursor-agent, aider, custom.",
)
@RUN_THE_LOOP.option(
    "--model", metavar="M", goes_with=(LOOP,), help="Model name passed to the agent."
)
@RUN_THE_LOOP.option(
    "--agent-cmd",
    metavar="CMD",
    goes_with=(LOOP,),
    help="Any command; the prompt comes on stdin.",
)
@RUN_THE_LOOP.option(
    "--policy",
    metavar="MODE",
    goes_with=(LOOP,),
    help="Start under this policy mode or preset.",
)
@RUN_THE_LOOP.option(
    "--duration",
    metavar="D",
    goes_with=("update_policy", LOOP),
    help="How long --policy or --update-policy lasts (6h).",
)
@RUN_THE_LOOP.option(
    "--policy-file",
    type=click.Path(path_type=Path),
    metavar="F",
    goes_with=(LOOP,),
    help="Start with this human-policy.md.",
)
@RUN_THE_LOOP.option(
    "--max-iterations",
    type=click.IntRange(min=1),
    metavar="N",
    goes_with=(LOOP,),
    help="Stop after N iterations.",
)
@RUN_THE_LOOP.option(
    "--max-time", metavar="D", goes_with=(LOOP,), help="Stop after this long (4h, 90m)."
)
@RUN_THE_LOOP.option(
    "--max-cost",
    type=click.FloatRange(min=0, min_open=True, max=1e12),
    metavar="USD",
    goes_with=(LOOP,),
    help="Stop once the reported cost reaches this.",
)
@RUN_THE_LOOP.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    metavar="N",
    goes_with=(LOOP,),
    help="Stop once the reported tokens reach this.",
)
@RUN_THE_LOOP.option(
    "--agent-timeout",
    metavar="D",
    default="1h",
    show_default=True,
    goes_with=(LOOP,),
    help="Kill an agent run after this long.",
)
@RUN_THE_LOOP.option(
    "--context-window",
    type=click.IntRange(min=0, max=100),
    default=5,
    show_default=True,
    metavar="N",
    goes_with=(LOOP,),
    help="Past iterations' notes per prompt.",
)
@RUN_THE_LOOP.option(
    "--checkpoint-every",
    type=click.IntRange(min=1),
    metavar="N",
    goes_with=(LOOP,),
    help="Git-commit the iterations' changes every N.",
)
@RUN_THE_LOOP.option(
    "--once", is_flag=True, goes_with=(LOOP,), help="Run one iteration, then exit."
)
@RUN_THE_LOOP.option(
    "--sandbox",
    is_flag=True,
    goes_with=(LOOP,),
    help="Run each agent under bubblewrap (bwrap).",
)
@RUN_THE_LOOP.option(
    "--webhook-port",
    type=click.IntRange(0, 65535),
    metavar="PORT",
    goes_with=(LOOP,),
    help="Serve the loopback webhook here (0: any port).",
)
@RUN_THE_LOOP.action("--pause", is_flag=True, help="Let the running agent finish, then wait.")
@RUN_THE_LOOP.action("--resume", is_flag=True, help="Resume a paused loop.")
@RUN_THE_LOOP.action("--stop", is_flag=True, help="Stop the running loop now (kills its agent).")
# Tasks and input
@TASKS_AND_INPUT.action(
    "--human-input", metavar="TEXT", help="Queue input for the agent in human.md."
)
@TASKS_AND_INPUT.option(
    "--urgent",
    is_flag=True,
    goes_with=("human_input",),
    help="With --human-input: handle it before the rest.",
)
@TASKS_AND_INPUT.action("--add-task", metavar="TEXT", help="Append a task to tasks.md.")
@TASKS_AND_INPUT.option(
    "--priority",
    type=int,
    metavar="N",
    default=2,
    show_default=True,
    goes_with=("add_task",),
    help="With --add-task: 1 is highest.",
)
@TASKS_AND_INPUT.option(
    "--depends-on",
    multiple=True,
    metavar="ID",
    goes_with=("add_task",),
    help="With --add-task: a task it waits for.",
)
@TASKS_AND_INPUT.option(
    "--blocked-by",
    multiple=True,
    metavar="ID",
    goes_with=("add_task",),
    help="With --add-task: a barrier it waits for.",
)
@TASKS_AND_INPUT.action(
    "--update-policy", metavar="MODE", help="Switch the human policy to a mode or preset."
)
# Alerts
@ALERTS.action("--alert", is_flag=True, help="Append an alert (for jobs and scripts).")
@ALERTS.option(
    "--severity",
    type=click.Choice(SEVERITIES),
    metavar="S",
    goes_with=("alert",),
    help=f"With --alert: {', '.join(SEVERITIES)}.",
)
@ALERTS.option(
    "--source",
    metavar="SRC",
    goes_with=("alert",),
    help="With --alert: who raises it, e.g. training-job-3.",
)
@ALERTS.option(
    "--type",
    "alert_type",
    metavar="T",
    goes_with=("alert",),
    help="With --alert: e.g. OOM, divergence.",
)
@ALERTS.option(
    "--description", metavar="D", goes_with=("alert",), help="With --alert: what happened."
)
@ALERTS.option(
    "--context",
    metavar="JSON",
    goes_with=("alert",),
    help="With --alert: a JSON object of details.",
)
@ALERTS.option(
    "--choice",
    multiple=True,
    metavar="C",
    goes_with=("alert",),
    help="With --alert: an option the agent may pick.",
)
@ALERTS.action(
    "--wait-alert", metavar="ID", help="Wait until alert ID is resolved; print the choice."
)
@ALERTS.option(
    "--timeout",
    type=click.FloatRange(min=0),
    metavar="S",
    goes_with=("wait_alert",),
    help="With --wait-alert: give up after S s (exit 124).",
)
# Barriers and approval
@BARRIERS_AND_APPROVAL.action(
    "--satisfy", metavar="BARRIER", help="Mark a barrier satisfied by hand."
)
@BARRIERS_AND_APPROVAL.action(
    "--check-barriers", is_flag=True, help="Check every waiting barrier once now."
)
@BARRIERS_AND_APPROVAL.action(
    "--run-checks", is_flag=True, help="Run checks.md's checks; exit 1 unless they pass."
)
@BARRIERS_AND_APPROVAL.action(
    "--approve",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[ID]",
    help="Approve a command (no ID: list those waiting).",
)
@BARRIERS_AND_APPROVAL.option(
    "--yes",
    is_flag=True,
    goes_with=("approve", "update_policy"),
    help="With --approve or --update-policy: do not ask.",
)
@BARRIERS_AND_APPROVAL.action(
    "--generate-check",
    metavar="BARRIER",
    help="Write scripts/check_barriers/BARRIER.sh.",
)
# Runs and sweeps
@RUNS_AND_SWEEPS.action(
    "--sweep",
    metavar="FILE|ID",
    also=("runs",),  # `--runs --sweep ID` lists one sweep's runs
    help="Start a sweep (JSON, YAML, W&B; -- CMD: Hydra).",
)
@RUNS_AND_SWEEPS.option(
    "--run",
    is_flag=True,
    goes_with=("sweep",),
    help="With --sweep FILE: run it here, with no agent.",
)
@RUNS_AND_SWEEPS.action("--runs", is_flag=True, help="List the runs (--sweep ID: one sweep's).")
@RUNS_AND_SWEEPS.action(
    "--compare", metavar="SWEEP", help="Compare a sweep's runs grouped across seeds."
)
@RUNS_AND_SWEEPS.option(
    "--metric",
    metavar="KEY",
    goes_with=("compare",),
    help="With --compare: the metric (default: objective).",
)
@RUNS_AND_SWEEPS.option(
    "--group-by",
    multiple=True,
    metavar="PARAM",
    goes_with=("compare",),
    help="With --compare: group by this parameter (repeat).",
)
@RUNS_AND_SWEEPS.option(
    "--plot",
    metavar="FILE.png",
    goes_with=("compare",),
    help="With --compare: also draw it (wild[plot]).",
)
@RUNS_AND_SWEEPS.action(
    "--run-sweeps", is_flag=True, help="Run the queued runs to the end here, no agent."
)
@RUNS_AND_SWEEPS.action(
    "--stop-run", metavar="ID", help="Stop a run, a sweep's runs (SWEEP_ID) or all."
)
@RUNS_AND_SWEEPS.action("--rerun", metavar="ID", help="Run an ended run again.")
@RUNS_AND_SWEEPS.option(
    "--run-backend",
    metavar="NAME",
    goes_with=("sweep", LOOP),
    help="Backend for sweeps naming none: local, slurm, …",
)
@RUNS_AND_SWEEPS.option(
    "--run-slots",
    type=click.IntRange(min=1),
    metavar="N",
    goes_with=(LOOP, "sweep", "run_sweeps"),
    help="Runs at once here (a goal, --run, --run-sweeps).",
)
# Reading state
@READING_STATE.action("--status", is_flag=True, help="Show the state at a glance.")
@READING_STATE.option(
    "--watch",
    is_flag=True,
    goes_with=("status", "runs"),
    help="With --status or --runs: redraw on each change.",
)
@READING_STATE.action(
    "--list-work", is_flag=True, help="Show the ordered work queue and what blocks it."
)
@READING_STATE.action("--show-policy", is_flag=True, help="Show the policy in force.")
@READING_STATE.option(
    "--json",
    "as_json",
    is_flag=True,
    goes_with=(
        "status",
        "list_work",
        "show_policy",
        "check_barriers",
        "run_checks",
        "compare",
        "sweep",
        "runs",
    ),
    help="Print one JSON document instead of text.",
)
# The dashboard
@THE_DASHBOARD.action(
    "--serve",
    is_flag=True,
    also=(LOOP,),
    help="Serve the live dashboard (beside a goal's loop).",
)
@THE_DASHBOARD.option(
    "--port",
    type=click.IntRange(0, 65535),
    metavar="PORT",
    default=DEFAULT_PORT,
    show_default=True,
    goes_with=(SERVE, LOOP),
    help="With --serve: the port (0: any).",
)
# Set up
@SET_UP.action("--init", is_flag=True, help="Create .wild/ from the templates.")
@SET_UP.action("--migrate", is_flag=True, help="Turn an open-ralph-wiggum .ralph/ into .wild/.")
@SET_UP.option(
    "--from",
    "from_dir",
    metavar="PATH",
    default=".ralph",
    show_default=True,
    goes_with=("migrate",),
    help="With --migrate: where to read.",
)
@SET_UP.option(
    "--force",
    is_flag=True,
    goes_with=("migrate",),
    help="With --migrate: overwrite an existing .wild/.",
)
# Every command
@EVERYWHERE.option(
    "--dir",
    "wild_dir",
    metavar="PATH",
    goes_with=EVERY,
    help="State folder (default .wild, or $WILD_DIR).",
)
def cli(
    goal: str | None, goal_option: str | None, wild_dir: str | None, as_json: bool, **options: Any
) -> None:
    """Run a coding agent autonomously towards GOAL over the files in .wild/, or manage them.

    GOAL is any text; when it is the name of a command, write `wild -- demo` or
    `wild --goal demo`.
    """
    if goal is not None and goal_option is not None:
        raise UsageError("give the goal once: as an argument or with --goal, not both")
    goal = goal if goal_option is None else goal_option
    paths = WildPaths.resolve(wild_dir)
    chosen = [name for name in ACTIONS if options[name] not in (None, False)]
    if "runs" in chosen and "sweep" in chosen:  # `--runs --sweep ID` filters the listing
        chosen.remove("sweep")
    if len(chosen) > 1:
        raise UsageError(
            f"{_flag(chosen[0])} and {_flag(chosen[1])} cannot be used together; give one action"
        )
    if chosen and goal is not None:
        raise UsageError(f"a goal cannot be combined with {_flag(chosen[0])}")
    serving = options.pop("serve")
    port = options.pop("port")
    action = chosen[0] if chosen else (SERVE if serving and goal is None else LOOP)
    ctx = click.get_current_context()
    _check_options_belong(ctx, action)
    if not serving and ctx.get_parameter_source("port") is ParameterSource.COMMANDLINE:
        raise UsageError("--port belongs to --serve; it does nothing without it")
    call = Call(
        paths=paths,
        opts={
            **options,
            "goal": goal,
            "as_json": as_json,
            "sweep_command": ctx.meta.get(SWEEP_COMMAND),
        },
        clock=clock,
        out=click.echo if as_json else _echo_capped,
        clear=click.clear,
        out_bytes=_echo_bytes,
    )
    if serving:
        from wild.serve.command import serve  # noqa: PLC0415  (only when serving)

        def loop(ready: Callable[[], None]) -> None:
            HANDLERS[LOOP](replace(call, opts={**call.opts, "on_ready": ready}))

        serve(paths, clock, port=port, out=click.echo, beside=None if action == SERVE else loop)
        return
    HANDLERS[action](call)


def _echo_capped(text: str) -> None:
    """Human output: text from the files (alert descriptions, task titles) may be huge."""
    click.echo(capped(text))


def _echo_bytes(data: bytes) -> None:
    """Output kept as UTF-8 bytes (`wild --runs --json`: 9 MB at 10,000 runs) written as it
    is to stdout's buffer, with the line end `click.echo` adds: not decoded and encoded again.
    A reader gone (`| head`) raises BrokenPipeError, which `GuardedCommand` quiets."""
    sys.stdout.flush()  # anything printed before goes first
    stdout = sys.stdout.buffer
    stdout.write(data)
    stdout.write(b"\n")
    stdout.flush()


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
