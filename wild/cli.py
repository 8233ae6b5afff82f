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
from typing import Any

import click
from click.core import ParameterSource

from wild import __version__
from wild.clock import Clock, SystemClock
from wild.commands.actions import (
    ACTIONS,
    HANDLERS,
    LOOP,
    SERVE,
    Call,
    action_words,
    misplaced_option,
)
from wild.commands.failures import crash_log, os_error_message
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
            has_dir = "wild_dir" in ctx.params
            folder = WildPaths.resolve(ctx.params["wild_dir"]).root if has_dir else None
            click.echo(f"Error: {capped(os_error_message(exc, folder))}", err=True)
            ctx.exit(1)
        except Exception as exc:  # a bug: keep the user's terminal free of tracebacks
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


class WildCommand(GuardedCommand):
    """`wild`: the loop and the actions; a first word naming a subcommand runs that instead.

    A click group would read a goal as an unknown subcommand, so the subcommands (`demo`) are
    looked up here, before parsing, and listed in `--help` beside the options.
    """

    def __init__(self, *args: Any, subcommands: Mapping[str, click.Command], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.subcommands = dict(subcommands)

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
        super().format_options(ctx, formatter)
        with formatter.section("Commands"):
            formatter.write_dl(
                [(name, sub.get_short_help_str()) for name, sub in self.subcommands.items()]
            )


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
    short_help="The first research story (a 42-run PPO sweep), in a temporary folder.",
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
@click.option(
    "--dir", "wild_dir", metavar="PATH", help="State folder (default .wild, or $WILD_DIR)."
)
@click.option("--init", is_flag=True, help="Create .wild/ from the templates (never overwrites).")
@click.option("--status", is_flag=True, help="Show the state at a glance.")
@click.option(
    "--watch", is_flag=True, help="With --status or --runs: redraw whenever a file changes."
)
@click.option("--list-work", is_flag=True, help="Show the ordered work queue with blocked reasons.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of text.")
@click.option("--human-input", metavar="TEXT", help="Queue input for the agent in human.md.")
@click.option("--urgent", is_flag=True, help="With --human-input: handle it before anything else.")
@click.option(
    "--update-policy", metavar="MODE", help="Switch the human policy to a mode or preset."
)
@click.option(
    "--duration", metavar="D", help="With --update-policy: how long it lasts (6h, 90m, 2d)."
)
@click.option("--show-policy", is_flag=True, help="Show the policy in force.")
@click.option("--add-task", metavar="TEXT", help="Append a task to tasks.md.")
@click.option(
    "--priority", type=int, default=2, show_default=True, help="With --add-task: 1 is highest."
)
@click.option(
    "--depends-on", multiple=True, metavar="ID", help="With --add-task: a task it waits for."
)
@click.option(
    "--blocked-by", multiple=True, metavar="ID", help="With --add-task: a barrier it waits for."
)
@click.option("--alert", is_flag=True, help="Append an alert (for jobs and scripts).")
@click.option("--severity", type=click.Choice(SEVERITIES), help="With --alert.")
@click.option("--source", metavar="SRC", help="With --alert: who raises it, e.g. training-job-3.")
@click.option("--type", "alert_type", metavar="T", help="With --alert: e.g. OOM, divergence.")
@click.option("--description", metavar="D", help="With --alert: what happened.")
@click.option("--context", metavar="JSON", help="With --alert: a JSON object of details.")
@click.option(
    "--choice", multiple=True, metavar="C", help="With --alert: an option the agent may pick."
)
@click.option(
    "--wait-alert",
    metavar="ID",
    help="Block until alert ID is resolved; print the choice (exit 124: timed out, 6: unknown).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    metavar="S",
    help="With --wait-alert: give up after S seconds.",
)
@click.option("--satisfy", metavar="BARRIER", help="Mark a barrier satisfied by hand.")
@click.option(
    "--migrate", is_flag=True, help="Convert an open-ralph-wiggum .ralph/ folder into .wild/."
)
@click.option(
    "--from",
    "from_dir",
    metavar="PATH",
    default=".ralph",
    show_default=True,
    help="With --migrate: the .ralph folder.",
)
@click.option("--force", is_flag=True, help="With --migrate: overwrite an existing .wild/.")
@click.option("--check-barriers", is_flag=True, help="Check every waiting barrier once now.")
@click.option(
    "--run-checks",
    is_flag=True,
    help="Run the completion checks in checks.md now; exit 1 unless they pass.",
)
@click.option(
    "--approve",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[ID]",
    help="Approve a barrier's or check's command (no id: list commands awaiting approval).",
)
@click.option(
    "--yes",
    is_flag=True,
    help="With --approve or --update-policy: skip the question on the terminal (a terminal is "
    "still required).",
)
@click.option(
    "--generate-check",
    metavar="BARRIER",
    help="Write scripts/check_barriers/BARRIER.sh for a barrier.",
)
@click.option(
    "--sweep",
    metavar="FILE|ID",
    help="Start the sweep in a file: wild's JSON or YAML, or a W&B sweep (- for stdin; "
    "-- CMD -m k=a,b: a Hydra multirun); with --runs: list only this sweep's.",
)
@click.option(
    "--run",
    is_flag=True,
    help="With --sweep FILE: run it to the end here, with no agent; then compare its runs.",
)
@click.option("--runs", is_flag=True, help="List the runs: id, status, exit code, metrics.")
@click.option(
    "--compare",
    metavar="SWEEP",
    help="Compare a sweep's runs grouped across seeds: n, mean ± std, min, max of a metric.",
)
@click.option("--metric", metavar="KEY", help="With --compare: the metric (default: objective).")
@click.option(
    "--group-by",
    multiple=True,
    metavar="PARAM",
    help="With --compare: group by this parameter (repeat; default: all but seed-like).",
)
@click.option("--plot", metavar="FILE.png", help="With --compare: also draw it (wild[plot]).")
@click.option(
    "--run-sweeps",
    is_flag=True,
    help="Run the queued runs to the end here, with no agent (adopts running ones).",
)
@click.option(
    "--stop-run",
    metavar="ID",
    help="Stop a queued or running run (its group or job); a sweep id: its runs; all: every one.",
)
@click.option("--rerun", metavar="ID", help="Run an ended run again, as its next attempt.")
@click.option(
    "--run-backend",
    metavar="NAME",
    help="Backend for runs whose sweep names none: local, slurm or a plug-in's name.",
)
@click.option(
    "--run-slots",
    type=click.IntRange(min=1),
    metavar="N",
    help="With a goal or --run/--run-sweeps: how many runs run here at once (default: cores).",
)
@click.option("--pause", is_flag=True, help="Let the running agent finish, then wait.")
@click.option("--resume", is_flag=True, help="Resume a paused loop.")
@click.option("--stop", is_flag=True, help="Stop the running loop now (kills its agent).")
@click.option(
    "--goal",
    "goal_option",
    metavar="TEXT",
    help="The goal, as an option: for any text, even a command's name (wild --goal demo).",
)
@click.option(
    "--agent",
    metavar="NAME",
    help="claude, opencode, codex, gemini, copilot, cursor-agent, aider or custom"
    " (default: the last run's agent, else claude).",
)
@click.option("--model", metavar="M", help="Model name passed to the agent.")
@click.option("--agent-cmd", metavar="CMD", help="Any command; the prompt comes on stdin.")
@click.option("--policy", metavar="MODE", help="Start under this policy mode or preset.")
@click.option(
    "--policy-file",
    type=click.Path(path_type=Path),
    metavar="F",
    help="Start with this human-policy.md.",
)
@click.option(
    "--max-iterations", type=click.IntRange(min=1), metavar="N", help="Stop after N iterations."
)
@click.option("--max-time", metavar="D", help="Stop after this long (4h, 90m).")
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0, min_open=True, max=1e12),
    metavar="USD",
    help="Stop once the agent's reported cost reaches this (kept across restarts).",
)
@click.option(
    "--checkpoint-every",
    type=click.IntRange(min=1),
    metavar="N",
    help="Every N iterations, git-commit what the loop's iterations changed (off by default).",
)
@click.option(
    "--context-window",
    type=click.IntRange(min=0, max=100),
    default=5,
    show_default=True,
    metavar="N",
    help="How many earlier iterations' summaries each prompt carries.",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    metavar="N",
    help="Stop once the agent's reported tokens reach this (kept across restarts).",
)
@click.option(
    "--agent-timeout",
    metavar="D",
    default="1h",
    show_default=True,
    help="Kill an agent run after this long.",
)
@click.option(
    "--webhook-port",
    type=click.IntRange(0, 65535),
    metavar="PORT",
    help="Serve the loopback webhook on this port (0: any free port).",
)
@click.option("--once", is_flag=True, help="Run one iteration, then exit.")
@click.option("--sandbox", is_flag=True, help="Run each agent under bubblewrap (bwrap).")
@click.option(
    "--serve",
    is_flag=True,
    help="Serve the live dashboard on 127.0.0.1 (alone, or beside the loop with a goal).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="With --serve: the dashboard's port (0: any free port).",
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


def _check_options_belong(ctx: click.Context, action: str) -> None:
    """Refuse an option the chosen action would silently ignore (`--status --priority 1`)."""
    options = [p for p in ctx.command.params if isinstance(p, click.Option) and p.name]
    given = [
        p.name
        for p in options
        if p.name and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE
    ]
    problem = misplaced_option(action, given, {p.name: p.opts[0] for p in options if p.name})
    if problem:
        raise UsageError(problem)


def main() -> None:
    cli(prog_name="wild")
