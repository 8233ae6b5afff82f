"""The options of `wild`, described once as plain data, and the loop run read without click.

`wild.cli` builds the click command from `OPTIONS` (its help, its checks, every action). A
command line that only runs the loop (`wild "GOAL" --agent-cmd … --max-iterations 1`) is read
here by `parse_loop_run` instead, from the same descriptions: importing click and building its
command cost ~11 ms of CPU before the first agent's start, which the Python floor of the launch
goal (`import click, orjson`) pays but the loop does not have to (issue 22 item 8). Anything
else (another flag, `--help`, `--`, a value click would refuse) is left to click, so that its
errors and its help stay click's own; tests/test_cli_fast.py holds the two readings equal.

No click here, nor anything heavy: `python -m wild` imports this module first.
"""

from __future__ import annotations

import codecs
import io
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wild.commands.actions import ACTIONS, EVERY, LOOP, SERVE, Call, action_words
from wild.errors import UsageError
from wild.output import capped
from wild.parsers.severity import SEVERITIES
from wild.paths import WildPaths
from wild.record import record
from wild.serve import DEFAULT_PORT

if TYPE_CHECKING:
    from wild.clock import Clock

# Each option's kind: how its value is read (click's type for it: see wild.cli).
TEXT = "text"  # a string, as given
FLAG = "flag"  # no value: True when given
OPTIONAL = "optional"  # a string that may be left out (`--approve` alone lists those waiting)
INT = "int"  # an integer, within `low`..`high` when they are given
FLOAT = "float"  # a float, within `low`..`high` (`low_open`: above `low`)
PATH = "path"  # a file's path (pathlib.Path)
CHOICE = "choice"  # one of `choices`


@record
class Option:
    """One option of `wild`: its flags, how its value is read, its help and the actions it goes
    with (by their parameter names; LOOP for `wild "GOAL"`, SERVE for `--serve` alone). An
    action's flag (`acts`) chooses what wild does and goes with its own action; its
    `goes_with` names the other actions it modifies (`--runs --sweep ID`)."""

    decls: tuple[str, ...]  # click's declaration: the flags, and the name when it is not theirs
    section: str  # the title of the section of `wild --help` that lists it
    help: str
    goes_with: tuple[str, ...] = ()
    acts: bool = False
    kind: str = TEXT
    metavar: str | None = None
    default: Any = None  # None: none (a flag's is False, a repeated option's ())
    multiple: bool = False
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    choices: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The parameter's name, as click derives it: the declared one, else the flag's."""
        named = [d for d in self.decls if not d.startswith("-")]
        return named[0] if named else self.decls[0][2:].replace("-", "_")

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(d for d in self.decls if d.startswith("-"))


# The sections of `wild --help`, in the order a person scans them.
RUN_THE_LOOP = "Run the loop"
TASKS_AND_INPUT = "Tasks and input"
ALERTS = "Alerts"
BARRIERS_AND_APPROVAL = "Barriers and approval"
RUNS_AND_SWEEPS = "Runs and sweeps"
READING_STATE = "Reading state"
THE_DASHBOARD = "The dashboard"
SET_UP = "Set up"
EVERYWHERE = "With any command"  # --dir, and click's own --version and --help
SECTIONS = (
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

# Every option, in the order `wild --help` lists them (the goal and click's --version and
# --help are the command's own).
OPTIONS = (
    # Run the loop
    Option(
        ("--goal", "goal_option"),
        RUN_THE_LOOP,
        "The goal as an option (any text: --goal demo).",
        (LOOP,),
        metavar="TEXT",
    ),
    Option(
        ("--agent",),
        RUN_THE_LOOP,
        "claude (default), codex, opencode, gemini, copilot, cursor-agent, aider, custom.",
        (LOOP,),
        metavar="NAME",
    ),
    Option(("--model",), RUN_THE_LOOP, "Model name passed to the agent.", (LOOP,), metavar="M"),
    Option(
        ("--agent-cmd",),
        RUN_THE_LOOP,
        "Any command; the prompt comes on stdin.",
        (LOOP,),
        metavar="CMD",
    ),
    Option(
        ("--policy",),
        RUN_THE_LOOP,
        "Start under this policy mode or preset.",
        (LOOP,),
        metavar="MODE",
    ),
    Option(
        ("--duration",),
        RUN_THE_LOOP,
        "How long --policy or --update-policy lasts (6h).",
        ("update_policy", LOOP),
        metavar="D",
    ),
    Option(
        ("--policy-file",),
        RUN_THE_LOOP,
        "Start with this human-policy.md.",
        (LOOP,),
        kind=PATH,
        metavar="F",
    ),
    Option(
        ("--max-iterations",),
        RUN_THE_LOOP,
        "Stop after N iterations.",
        (LOOP,),
        kind=INT,
        metavar="N",
        low=1,
    ),
    Option(("--max-time",), RUN_THE_LOOP, "Stop after this long (4h, 90m).", (LOOP,), metavar="D"),
    Option(
        ("--max-cost",),
        RUN_THE_LOOP,
        "Stop once the reported cost reaches this.",
        (LOOP,),
        kind=FLOAT,
        metavar="USD",
        low=0,
        low_open=True,
        high=1e12,
    ),
    Option(
        ("--max-tokens",),
        RUN_THE_LOOP,
        "Stop once the reported tokens reach this.",
        (LOOP,),
        kind=INT,
        metavar="N",
        low=1,
    ),
    Option(
        ("--agent-timeout",),
        RUN_THE_LOOP,
        "Kill an agent run after this long.",
        (LOOP,),
        metavar="D",
        default="1h",
    ),
    Option(
        ("--context-window",),
        RUN_THE_LOOP,
        "Past iterations' notes per prompt.",
        (LOOP,),
        kind=INT,
        metavar="N",
        default=5,
        low=0,
        high=100,
    ),
    Option(
        ("--checkpoint-every",),
        RUN_THE_LOOP,
        "Git-commit the iterations' changes every N.",
        (LOOP,),
        kind=INT,
        metavar="N",
        low=1,
    ),
    Option(("--once",), RUN_THE_LOOP, "Run one iteration, then exit.", (LOOP,), kind=FLAG),
    Option(
        ("--sandbox",),
        RUN_THE_LOOP,
        "Run each agent under bubblewrap (bwrap).",
        (LOOP,),
        kind=FLAG,
    ),
    Option(
        ("--webhook-port",),
        RUN_THE_LOOP,
        "Serve the loopback webhook here (0: any port).",
        (LOOP,),
        kind=INT,
        metavar="PORT",
        low=0,
        high=65535,
    ),
    Option(
        ("--pause",),
        RUN_THE_LOOP,
        "Let the running agent finish, then wait.",
        acts=True,
        kind=FLAG,
    ),
    Option(("--resume",), RUN_THE_LOOP, "Resume a paused loop.", acts=True, kind=FLAG),
    Option(
        ("--stop",),
        RUN_THE_LOOP,
        "Stop the running loop now (kills its agent).",
        acts=True,
        kind=FLAG,
    ),
    # Tasks and input
    Option(
        ("--human-input",),
        TASKS_AND_INPUT,
        "Queue input for the agent in human.md.",
        acts=True,
        metavar="TEXT",
    ),
    Option(
        ("--urgent",),
        TASKS_AND_INPUT,
        "With --human-input: handle it before the rest.",
        ("human_input",),
        kind=FLAG,
    ),
    Option(
        ("--add-task",),
        TASKS_AND_INPUT,
        "Append a task to tasks.md.",
        acts=True,
        metavar="TEXT",
    ),
    Option(
        ("--priority",),
        TASKS_AND_INPUT,
        "With --add-task: 1 is highest.",
        ("add_task",),
        kind=INT,
        metavar="N",
        default=2,
    ),
    Option(
        ("--depends-on",),
        TASKS_AND_INPUT,
        "With --add-task: a task it waits for.",
        ("add_task",),
        metavar="ID",
        multiple=True,
    ),
    Option(
        ("--blocked-by",),
        TASKS_AND_INPUT,
        "With --add-task: a barrier it waits for.",
        ("add_task",),
        metavar="ID",
        multiple=True,
    ),
    Option(
        ("--update-policy",),
        TASKS_AND_INPUT,
        "Switch the human policy to a mode or preset.",
        acts=True,
        metavar="MODE",
    ),
    # Alerts
    Option(
        ("--alert",),
        ALERTS,
        "Append an alert (for jobs and scripts).",
        acts=True,
        kind=FLAG,
    ),
    Option(
        ("--severity",),
        ALERTS,
        f"With --alert: {', '.join(SEVERITIES)}.",
        ("alert",),
        kind=CHOICE,
        metavar="S",
        choices=SEVERITIES,
    ),
    Option(
        ("--source",),
        ALERTS,
        "With --alert: who raises it, e.g. training-job-3.",
        ("alert",),
        metavar="SRC",
    ),
    Option(
        ("--type", "alert_type"),
        ALERTS,
        "With --alert: e.g. OOM, divergence.",
        ("alert",),
        metavar="T",
    ),
    Option(("--description",), ALERTS, "With --alert: what happened.", ("alert",), metavar="D"),
    Option(
        ("--context",),
        ALERTS,
        "With --alert: a JSON object of details.",
        ("alert",),
        metavar="JSON",
    ),
    Option(
        ("--choice",),
        ALERTS,
        "With --alert: an option the agent may pick.",
        ("alert",),
        metavar="C",
        multiple=True,
    ),
    Option(
        ("--wait-alert",),
        ALERTS,
        "Wait until alert ID is resolved; print the choice.",
        acts=True,
        metavar="ID",
    ),
    Option(
        ("--timeout",),
        ALERTS,
        "With --wait-alert: give up after S s (exit 124).",
        ("wait_alert",),
        kind=FLOAT,
        metavar="S",
        low=0,
    ),
    # Barriers and approval
    Option(
        ("--satisfy",),
        BARRIERS_AND_APPROVAL,
        "Mark a barrier satisfied by hand.",
        acts=True,
        metavar="BARRIER",
    ),
    Option(
        ("--check-barriers",),
        BARRIERS_AND_APPROVAL,
        "Check every waiting barrier once now.",
        acts=True,
        kind=FLAG,
    ),
    Option(
        ("--run-checks",),
        BARRIERS_AND_APPROVAL,
        "Run checks.md's checks; exit 1 unless they pass.",
        acts=True,
        kind=FLAG,
    ),
    Option(
        ("--approve",),
        BARRIERS_AND_APPROVAL,
        "Approve a command (no ID: list those waiting).",
        acts=True,
        kind=OPTIONAL,
        metavar="[ID]",
    ),
    Option(
        ("--yes",),
        BARRIERS_AND_APPROVAL,
        "With --approve or --update-policy: do not ask.",
        ("approve", "update_policy"),
        kind=FLAG,
    ),
    Option(
        ("--generate-check",),
        BARRIERS_AND_APPROVAL,
        "Write scripts/check_barriers/BARRIER.sh.",
        acts=True,
        metavar="BARRIER",
    ),
    # Runs and sweeps
    Option(
        ("--sweep",),
        RUNS_AND_SWEEPS,
        "Start a sweep (JSON, YAML, W&B; -- CMD: Hydra).",
        ("runs",),  # `--runs --sweep ID` lists one sweep's runs
        acts=True,
        metavar="FILE|ID",
    ),
    Option(
        ("--run",),
        RUNS_AND_SWEEPS,
        "With --sweep FILE: run it here, with no agent.",
        ("sweep",),
        kind=FLAG,
    ),
    Option(
        ("--runs",),
        RUNS_AND_SWEEPS,
        "List the runs (--sweep ID: one sweep's).",
        acts=True,
        kind=FLAG,
    ),
    Option(
        ("--compare",),
        RUNS_AND_SWEEPS,
        "Compare a sweep's runs grouped across seeds.",
        acts=True,
        metavar="SWEEP",
    ),
    Option(
        ("--metric",),
        RUNS_AND_SWEEPS,
        "With --compare: the metric (default: objective).",
        ("compare",),
        metavar="KEY",
    ),
    Option(
        ("--group-by",),
        RUNS_AND_SWEEPS,
        "With --compare: group by this parameter (repeat).",
        ("compare",),
        metavar="PARAM",
        multiple=True,
    ),
    Option(
        ("--plot",),
        RUNS_AND_SWEEPS,
        "With --compare: also draw it (wild[plot]).",
        ("compare",),
        metavar="FILE.png",
    ),
    Option(
        ("--run-sweeps",),
        RUNS_AND_SWEEPS,
        "Run the queued runs to the end here, no agent.",
        acts=True,
        kind=FLAG,
    ),
    Option(
        ("--stop-run",),
        RUNS_AND_SWEEPS,
        "Stop a run, a sweep's runs (SWEEP_ID) or all.",
        acts=True,
        metavar="ID",
    ),
    Option(("--rerun",), RUNS_AND_SWEEPS, "Run an ended run again.", acts=True, metavar="ID"),
    Option(
        ("--run-backend",),
        RUNS_AND_SWEEPS,
        "Backend for sweeps naming none: local, slurm, …",
        ("sweep", LOOP),
        metavar="NAME",
    ),
    Option(
        ("--run-slots",),
        RUNS_AND_SWEEPS,
        "Runs at once here (a goal, --run, --run-sweeps).",
        (LOOP, "sweep", "run_sweeps"),
        kind=INT,
        metavar="N",
        low=1,
    ),
    # Reading state
    Option(("--status",), READING_STATE, "Show the state at a glance.", acts=True, kind=FLAG),
    Option(
        ("--watch",),
        READING_STATE,
        "With --status or --runs: redraw on each change.",
        ("status", "runs"),
        kind=FLAG,
    ),
    Option(
        ("--list-work",),
        READING_STATE,
        "Show the ordered work queue and what blocks it.",
        acts=True,
        kind=FLAG,
    ),
    Option(("--show-policy",), READING_STATE, "Show the policy in force.", acts=True, kind=FLAG),
    Option(
        ("--json", "as_json"),
        READING_STATE,
        "Print one JSON document instead of text.",
        (
            "status",
            "list_work",
            "show_policy",
            "check_barriers",
            "run_checks",
            "compare",
            "sweep",
            "runs",
        ),
        kind=FLAG,
    ),
    # The dashboard
    Option(
        ("--serve",),
        THE_DASHBOARD,
        "Serve the live dashboard (beside a goal's loop).",
        (LOOP,),
        acts=True,
        kind=FLAG,
    ),
    Option(
        ("--port",),
        THE_DASHBOARD,
        "With --serve: the port (0: any).",
        (SERVE, LOOP),
        kind=INT,
        metavar="PORT",
        default=DEFAULT_PORT,
        low=0,
        high=65535,
    ),
    # Set up
    Option(("--init",), SET_UP, "Create .wild/ from the templates.", acts=True, kind=FLAG),
    Option(
        ("--migrate",),
        SET_UP,
        "Turn an open-ralph-wiggum .ralph/ into .wild/.",
        acts=True,
        kind=FLAG,
    ),
    Option(
        ("--from", "from_dir"),
        SET_UP,
        "With --migrate: where to read.",
        ("migrate",),
        metavar="PATH",
        default=".ralph",
    ),
    Option(
        ("--force",),
        SET_UP,
        "With --migrate: overwrite an existing .wild/.",
        ("migrate",),
        kind=FLAG,
    ),
    # Every command
    Option(
        ("--dir", "wild_dir"),
        EVERYWHERE,
        "State folder (default .wild, or $WILD_DIR).",
        EVERY,
        metavar="PATH",
    ),
)

# The command's first words that are not a goal: its subcommands (wild.cli's).
SUBCOMMANDS = ("demo",)
# Asks click's shell completion for words (`_WILD_COMPLETE=bash_source wild`): click's.
COMPLETION_VARIABLE = "_WILD_COMPLETE"

# The options `parse_loop_run` reads: those of the loop that it can read as click would.
# `--port` goes with the loop only beside `--serve` (alone, click's command refuses it), which
# is click's to read; a path (`--policy-file`) click checks against the file system.
LOOP_RUN_OPTIONS = {
    flag: option
    for option in OPTIONS
    if not option.acts
    and LOOP in option.goes_with
    and (SERVE not in option.goes_with or option.goes_with == EVERY)
    and option.kind in (TEXT, FLAG, INT, FLOAT)
    and not option.multiple
    for flag in option.flags
}


def parse_loop_run(argv: Sequence[str]) -> dict[str, Any] | None:
    """The parameters click would give `wild` for this command line (`ctx.params`), when it
    only runs the loop with options `LOOP_RUN_OPTIONS` holds; None for anything else (another
    flag, `--help`, `--`, two goals, a goal naming a command or an action, a value click would
    refuse), which click then reads itself."""
    given: dict[str, Any] = {}
    goal: str | None = None
    words = iter(argv)
    for word in words:
        if word[:1] != "-" or word == "-":  # click reads `-` as a word, not an option
            if goal is not None:
                return None  # click: "Got unexpected extra argument"
            goal = word
            continue
        flag, equals, value = word.partition("=")
        option = LOOP_RUN_OPTIONS.get(flag)
        if option is None:
            return None
        if option.kind == FLAG:
            if equals:
                return None  # click: "Option '--once' does not take a value"
            given[option.name] = True
            continue
        if not equals:
            following = next(words, None)
            if following is None:
                return None  # click: "Option '--agent' requires an argument"
            value = following
        read = _value(option, value)
        if read is None:
            return None
        given[option.name] = read
    if goal is not None and _names_a_command(goal):
        return None
    params: dict[str, Any] = {"goal": goal}
    for option in OPTIONS:
        params[option.name] = given.get(option.name, _default(option))
    return params


def _value(option: Option, text: str) -> Any:
    """`text` read as click reads it for this option, or None where click would refuse it."""
    if option.kind == TEXT:
        return text
    number: float
    try:
        number = int(text) if option.kind == INT else float(text)
    except ValueError:
        return None
    # click's bounds check, as it makes it: a NaN is within any bounds.
    below = option.low is not None and (
        number <= option.low if option.low_open else number < option.low
    )
    above = option.high is not None and number > option.high
    return None if below or above else number


def _default(option: Option) -> Any:
    if option.kind == FLAG:
        return False
    if option.multiple:
        return ()
    return option.default


def _names_a_command(goal: str) -> bool:
    """A goal that is a subcommand or an option's word (`wild status`) is refused by click
    with a hint (wild.cli's `WildCommand.parse_args`): left to it."""
    params = [(option.name, option.flags, False) for option in OPTIONS]
    words = action_words([*params, *_ALONE])
    return goal in SUBCOMMANDS or goal.strip().lower() in words


# click's own options of `wild`, which act alone and end: `wild help` is refused as `wild status`.
_ALONE = ((None, ("-h", "--help"), True), (None, ("--version",), True))


def call_for(
    params: Mapping[str, Any],
    *,
    sweep_command: list[str] | None,
    clock: Clock,
    echo: Callable[[str], None],
    clear: Callable[[], None],
) -> tuple[str, Call]:
    """The action a command line chose and its `Call`, from the parameters click gives `wild`
    (or `parse_loop_run`, the same); a usage error where they do not make one action."""
    opts = dict(params)
    goal = one_goal(opts.pop("goal"), opts.pop("goal_option"))
    paths = WildPaths.resolve(opts.pop("wild_dir"))
    as_json = opts.pop("as_json")
    action = chosen_action(goal, opts)
    del opts["serve"], opts["port"]  # the dashboard's: wild.cli serves it

    def echo_capped(text: str) -> None:
        """Human output: text from the files (alert descriptions, task titles) may be huge."""
        echo(capped(text))

    call = Call(
        paths=paths,
        opts={**opts, "goal": goal, "as_json": as_json, "sweep_command": sweep_command},
        clock=clock,
        out=echo if as_json else echo_capped,
        clear=clear,
        out_bytes=echo_bytes,
    )
    return action, call


def one_goal(goal: str | None, goal_option: str | None) -> str | None:
    """The goal, given as the argument or with --goal, not both."""
    if goal is not None and goal_option is not None:
        raise UsageError("give the goal once: as an argument or with --goal, not both")
    return goal if goal_option is None else goal_option


def chosen_action(goal: str | None, options: Mapping[str, Any]) -> str:
    """The action the command line chose: one action flag, or the loop on a goal, or `--serve`
    alone. `options` holds every option's parameter (`--serve` and `--port` included)."""
    chosen = [name for name in ACTIONS if options[name] not in (None, False)]
    if "runs" in chosen and "sweep" in chosen:  # `--runs --sweep ID` filters the listing
        chosen.remove("sweep")
    if len(chosen) > 1:
        raise UsageError(
            f"{flag_of(chosen[0])} and {flag_of(chosen[1])} cannot be used together;"
            " give one action"
        )
    if chosen and goal is not None:
        raise UsageError(f"a goal cannot be combined with {flag_of(chosen[0])}")
    if chosen:
        return chosen[0]
    return SERVE if options["serve"] and goal is None else LOOP


def flag_of(name: str) -> str:
    return "--" + name.replace("_", "-")


def echo_bytes(data: bytes) -> None:
    """Output kept as UTF-8 bytes (`wild --runs --json`: 9 MB at 10,000 runs) written as it
    is to stdout's buffer, with the line end `click.echo` adds: not decoded and encoded again.
    A reader gone (`| head`) raises BrokenPipeError, which `GuardedCommand` quiets."""
    sys.stdout.flush()  # anything printed before goes first
    stdout = sys.stdout.buffer
    stdout.write(data)
    stdout.write(b"\n")
    stdout.flush()


# click's pattern of a terminal's escape sequence (click.termui's `strip_ansi`).
_ANSI = re.compile(r"\033\[[0-?]*[ -/]*[@-~]")


def echo_line(text: str) -> None:
    """`click.echo(text)` to stdout, for a stdout that `writes_as_click_does`: the line, its
    terminal escapes taken out where stdout is not a terminal, flushed."""
    stdout = sys.stdout
    if not stdout.isatty():
        text = _ANSI.sub("", text)
    stdout.write(text + "\n")
    stdout.flush()


def clear_screen() -> None:
    """`click.clear()`: on a terminal, clear it and put the cursor at its top left."""
    if sys.stdout.isatty():
        sys.stdout.write("\033[2J\033[1;1H")
        sys.stdout.flush()


def writes_as_click_does() -> bool:
    """Whether `echo_line` and `clear_screen` write what click would: stdout is the
    interpreter's own text stream, in an encoding that is not ASCII (click wraps such a stream
    in one of its own)."""
    stdout = sys.stdout
    if type(stdout) is not io.TextIOWrapper:
        return False
    try:
        return codecs.lookup(stdout.encoding or "ascii").name != "ascii"
    except LookupError:
        return True


def print_undecodable_bytes_as_they_are() -> None:
    """Let stdout write back the bytes of a file that are not UTF-8, as `cat` would.

    wild reads files with surrogateescape, so such a byte is a lone surrogate in the text; a
    strict UTF-8 stdout (a desktop locale) would fail on it. stderr already escapes them.
    """
    stdout = sys.stdout
    if isinstance(stdout, io.TextIOWrapper) and stdout.errors == "strict":
        stdout.reconfigure(errors="surrogateescape")
