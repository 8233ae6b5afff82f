"""The click shell: parse flags, call one core function, print, map errors to exit codes.

Exit codes: 0 ok, 1 user error (`Error: …` with what to do), 2 usage, 3 unexpected crash
(details in a crash log), 130 interrupted.
"""

from __future__ import annotations

import os
import sys
import traceback
from datetime import UTC, datetime, timedelta
from pathlib import Path
from tempfile import gettempdir
from typing import Any

import click

from wild import control
from wild.clock import Clock, SystemClock
from wild.commands import barrier_cmds, edits
from wild.commands import demo as demo_cmd
from wild.commands.init import init_wild
from wild.commands.policy_show import format_policy, policy_json
from wild.commands.run_loop import EXIT_CODES, run_loop
from wild.commands.status import format_status, format_work, list_work_data, status_data
from wild.commands.watch import watch_status
from wild.errors import UsageError, WildError
from wild.loop import LoopOptions
from wild.migrate import migrate_ralph
from wild.output import to_json
from wild.parsers.severity import SEVERITIES
from wild.paths import WildPaths
from wild.policy.model import parse_duration
from wild.workspace import Workspace, load_workspace

# Flags that each select one action; at most one may be given.
ACTIONS = (
    "init",
    "status",
    "list_work",
    "human_input",
    "update_policy",
    "show_policy",
    "add_task",
    "alert",
    "satisfy",
    "migrate",
    "check_barriers",
    "approve",
    "generate_check",
    "pause",
    "resume",
    "stop",
)

clock: Clock = SystemClock()


class WildCommand(click.Command):
    """Maps wild's errors to one `Error: …` line and an exit code, also under CliRunner."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except WildError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            # The reader went away (`wild demo | head`): stop quietly, as other CLIs do.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(1)
        except Exception as exc:  # a bug: keep the user's terminal free of tracebacks
            log = _crash_log(exc)
            click.echo(
                f"Error: wild crashed ({type(exc).__name__}: {exc}); details are in {log}; "
                "please report it with that file",
                err=True,
            )
            ctx.exit(3)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


@click.command(cls=WildCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("goal", required=False)
@click.option(
    "--dir", "wild_dir", metavar="PATH", help="State folder (default .wild, or $WILD_DIR)."
)
@click.option("--init", is_flag=True, help="Create .wild/ from the templates (never overwrites).")
@click.option("--status", is_flag=True, help="Show the state at a glance.")
@click.option("--watch", is_flag=True, help="With --status: redraw whenever a file changes.")
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
    "--approve",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[BARRIER]",
    help="Approve a barrier's command (no id: list commands awaiting approval).",
)
@click.option(
    "--generate-check",
    metavar="BARRIER",
    help="Write scripts/check_barriers/BARRIER.sh for a barrier.",
)
@click.option("--pause", is_flag=True, help="Let the running agent finish, then wait.")
@click.option("--resume", is_flag=True, help="Resume a paused loop.")
@click.option("--stop", is_flag=True, help="Stop the running loop now (kills its agent).")
@click.option(
    "--agent",
    default="claude",
    show_default=True,
    metavar="NAME",
    help="claude, opencode, codex, gemini, copilot, cursor-agent, aider or custom.",
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
def cli(goal: str | None, wild_dir: str | None, as_json: bool, **options: Any) -> None:
    """Run a coding agent autonomously over the files in .wild/, or manage them."""
    paths = WildPaths.resolve(wild_dir)
    chosen = [name for name in ACTIONS if options[name] not in (None, False)]
    if len(chosen) > 1:
        raise UsageError(
            f"{_flag(chosen[0])} and {_flag(chosen[1])} cannot be used together; give one action"
        )
    if not chosen and goal == "demo":
        sys.exit(demo_cmd.run_demo())
    if not chosen:
        if goal is None:
            raise UsageError(
                'give a goal (wild "GOAL") or an action such as --status; see wild --help'
            )
        _loop(goal, paths, options)
        return
    if goal is not None:
        raise UsageError(f"a goal cannot be combined with {_flag(chosen[0])}")
    _dispatch(chosen[0], paths, as_json, options)


def _dispatch(action: str, paths: WildPaths, as_json: bool, opts: dict[str, Any]) -> None:
    now = clock.now()
    if action == "init":
        created, kept = init_wild(paths)
        click.echo(
            f"Initialised {paths.root}: created {', '.join(created) or 'nothing'}"
            + (f"; kept existing {', '.join(kept)}" if kept else "")
        )
    elif action == "status" and opts["watch"]:
        watch_status(paths, clock, _redraw)
    elif action == "status":
        data = status_data(load_workspace(paths, now))
        click.echo(to_json(data) if as_json else format_status(data))
    elif action == "list_work":
        items = list_work_data(load_workspace(paths, now))
        click.echo(to_json(items) if as_json else format_work(items))
    elif action == "show_policy":
        ws = load_workspace(paths, now)
        click.echo(to_json(policy_json(ws)) if as_json else format_policy(ws))
    elif action == "human_input":
        key = edits.add_human_input(paths, opts["human_input"], urgent=opts["urgent"], now=now)
        kind = "urgent human input" if opts["urgent"] else "human input"
        click.echo(f"Queued {kind} {key} in {paths.human}")
    elif action == "update_policy":
        duration = _duration("--duration", opts["duration"])
        edits.update_policy(paths, opts["update_policy"], duration=duration, now=now)
        suffix = f" for {opts['duration']}" if opts["duration"] else ""
        click.echo(f"Policy is now {opts['update_policy']}{suffix} ({paths.policy})")
    elif action == "add_task":
        task_id = edits.add_task(
            paths,
            opts["add_task"],
            priority=opts["priority"],
            depends_on=opts["depends_on"],
            blocked_by=opts["blocked_by"],
        )
        click.echo(f"Added {task_id}: {opts['add_task']}")
    elif action == "alert":
        _alert(paths, opts, now)
    elif action == "satisfy":
        changed = edits.satisfy_barrier(paths, opts["satisfy"], now=now)
        state = "is now satisfied" if changed else "was already satisfied"
        click.echo(f"Barrier {opts['satisfy']} {state}")
    elif action == "check_barriers":
        rows = barrier_cmds.check_barriers(paths, clock)
        click.echo(to_json(rows) if as_json else barrier_cmds.format_checks(rows))
    elif action == "approve":
        _approve(paths, opts["approve"])
    elif action == "generate_check":
        script = barrier_cmds.generate_check(paths, opts["generate_check"])
        click.echo(f"Wrote {script}")
    elif action in ("pause", "resume", "stop"):
        control.request(paths, action, clock)
        click.echo(f"Asked the loop in {paths.root} to {action}")
    elif action == "migrate":
        report = migrate_ralph(Path(opts["from_dir"]), paths, force=opts["force"], clock=clock)
        click.echo(
            f"Migrated {report.source} into {report.target}: {report.tasks} tasks"
            f" ({report.subtasks} subtasks), {report.pending_inputs} pending inputs"
        )
        for note in report.notes:
            click.echo(f"  note: {note}")


def _redraw(ws: Workspace) -> None:
    click.clear()
    click.echo(format_status(status_data(ws)))


def _approve(paths: WildPaths, barrier_id: str) -> None:
    if barrier_id:
        command, digest = barrier_cmds.approve_barrier(paths, barrier_id)
        click.echo(f"Approved {barrier_id}: {command} (sha256 {digest[:12]})")
        return
    waiting = barrier_cmds.unapproved(paths)
    if not waiting:
        click.echo("No barrier commands await approval.")
        return
    click.echo("Commands awaiting approval (run wild --approve BARRIER for each you trust):")
    for name, command in waiting:
        click.echo(f"  {name}: {command}")


def _duration(flag: str, value: str | None) -> timedelta | None:
    """A duration flag's value; a bad one is a usage error (exit 2) naming the flag."""
    if value is None:
        return None
    try:
        return parse_duration(value)
    except WildError as exc:
        raise UsageError(f"{flag} {value}: {exc}") from None


def _seconds(flag: str, value: str | None) -> float | None:
    duration = _duration(flag, value)
    return duration.total_seconds() if duration is not None else None


def _loop(goal: str, paths: WildPaths, opts: dict[str, Any]) -> None:
    agent = "custom" if opts["agent_cmd"] and opts["agent"] == "claude" else opts["agent"]
    options = LoopOptions(
        goal=goal,
        agent=agent,
        model=opts["model"],
        agent_cmd=opts["agent_cmd"],
        max_iterations=opts["max_iterations"],
        max_time_s=_seconds("--max-time", opts["max_time"]),
        once=opts["once"],
        agent_timeout_s=_seconds("--agent-timeout", opts["agent_timeout"]),
    )
    result = run_loop(
        paths,
        options,
        clock,
        policy=opts["policy"],
        duration=_duration("--duration", opts["duration"]),
        policy_file=opts["policy_file"],
        webhook_port=opts["webhook_port"],
        out=click.echo,
    )
    click.echo(f"wild stopped: {result.message} ({result.iterations} iterations)")
    code = EXIT_CODES[result.reason]
    if code:
        sys.exit(code)


def _alert(paths: WildPaths, opts: dict[str, Any], now: datetime) -> None:
    missing = [f for f in ("severity", "source", "alert_type", "description") if not opts[f]]
    if missing:
        names = ", ".join("--type" if m == "alert_type" else _flag(m) for m in missing)
        raise UsageError(f"--alert also needs {names}")
    alert_id = edits.raise_alert(
        paths,
        severity=opts["severity"],
        source=opts["source"],
        alert_type=opts["alert_type"],
        description=opts["description"],
        context=edits.parse_context(opts["context"]),
        choices=opts["choice"],
        now=now,
    )
    click.echo(alert_id)


def _crash_log(exc: BaseException) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    path = Path(gettempdir()) / f"wild-crash-{stamp}.log"
    path.write_text("".join(traceback.format_exception(exc)))
    return path


def main() -> None:
    cli(prog_name="wild")
