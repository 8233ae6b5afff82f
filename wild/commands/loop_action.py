"""`wild "GOAL" …`: the loop's options from the command line, the run, and its exit code.

Imported by the action table only when a goal is given: the loop is not on the path of
the read commands (`wild --status` stays fast).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

from wild.clock import Clock
from wild.commands.durations import flag_duration, flag_seconds
from wild.commands.loop_defaults import choose, recorded_state
from wild.commands.run_loop import EXIT_CODES, run_loop
from wild.loop import LoopOptions
from wild.loop.runs_effect import poll_cycle_s
from wild.output import Console, plural
from wild.paths import WildPaths


def run_goal(
    paths: WildPaths, opts: Mapping[str, Any], clock: Clock, out: Callable[[str], None]
) -> None:
    """Run the loop on `opts["goal"]` (or the last run's); exit with the result's code."""
    choice = choose(
        goal=opts["goal"],
        agent=opts["agent"],
        model=opts["model"],
        agent_cmd=opts["agent_cmd"],
        recorded=recorded_state(paths),
        source=str(paths.state),
    )
    options = LoopOptions(
        goal=choice.goal,
        agent=choice.agent,
        model=choice.model,
        agent_cmd=opts["agent_cmd"],
        max_iterations=opts["max_iterations"],
        max_time_s=flag_seconds("--max-time", opts["max_time"]),
        max_cost_usd=opts["max_cost"],
        max_tokens=opts["max_tokens"],
        context_window=opts["context_window"],
        checkpoint_every=opts["checkpoint_every"],
        once=opts["once"],
        agent_timeout_s=flag_seconds("--agent-timeout", opts["agent_timeout"]),
        run_backend=opts["run_backend"],
        run_slots=opts["run_slots"],
        runs_poll_s=poll_cycle_s(os.environ),
        sandbox=opts["sandbox"],
    )
    # A sweep's progress line is redrawn in place on a terminal, printed as lines elsewhere.
    console = Console(out, sys.stdout, tty=sys.stdout.isatty())
    result = run_loop(
        paths,
        options,
        clock,
        policy=opts["policy"],
        duration=flag_duration("--duration", opts["duration"]),
        policy_file=opts["policy_file"],
        webhook_port=opts["webhook_port"],
        out=console,
        notes=choice.notes,
        on_ready=opts.get("on_ready"),
    )
    console(f"wild stopped: {result.message} ({plural(result.iterations, 'iteration')})")
    code = EXIT_CODES[result.reason]
    if code:
        sys.exit(code)
