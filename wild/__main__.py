"""Entry point of `wild` and `python -m wild`.

A command line that only runs the loop is read without click (wild.cli_options'
`parse_loop_run`, from the same descriptions click's command is built from): importing click
and building its command is ~11 ms of CPU before the first agent starts (issue 22 item 8).
Every other command line, and any that reading leaves, goes to click's command (wild.cli).
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Any


def main() -> None:
    # wild's imports make many objects and free almost none: the collector's passes over them
    # find nothing to free (8 before the loop's action, ~0.8 ms). It is held off while they
    # load (imported here, not at the top, for that); the loop holds it off itself until its
    # first agent runs (wild.commands.actions._loop), and turns it on again whatever happens.
    gc.disable()
    params = loop_run(sys.argv[1:])
    if params is None:
        gc.enable()  # as ever for the other commands
        from wild.cli import main as with_click  # noqa: PLC0415  (all but the loop run)

        with_click()
        return
    from wild.cli_options import (  # noqa: PLC0415
        call_for,
        clear_screen,
        echo_line,
        print_undecodable_bytes_as_they_are,
    )
    from wild.clock import SystemClock  # noqa: PLC0415
    from wild.commands.actions import HANDLERS  # noqa: PLC0415

    print_undecodable_bytes_as_they_are()
    try:
        action, call = call_for(
            params, sweep_command=None, clock=SystemClock(), echo=echo_line, clear=clear_screen
        )
        HANDLERS[action](call)
    except (Exception, KeyboardInterrupt) as exc:
        # Said as click's command says it: click is imported on a failure only.
        from wild.cli import failure_code  # noqa: PLC0415

        sys.exit(failure_code(exc, params["wild_dir"], has_dir=True))
    finally:
        gc.enable()


def loop_run(argv: list[str]) -> dict[str, Any] | None:
    """The loop run's parameters, where click is needed neither to read them nor to print
    (its shell completion, a stdout click would wrap); None: click's command reads `argv`."""
    from wild.cli_options import (  # noqa: PLC0415  (see main: with the collector held off)
        COMPLETION_VARIABLE,
        parse_loop_run,
        writes_as_click_does,
    )

    if COMPLETION_VARIABLE in os.environ or not writes_as_click_does():
        return None
    return parse_loop_run(argv)


if __name__ == "__main__":
    main()
