"""Parse and edit `.wild/human-policy.md`: the current policy's fields, instructions and history.

The format is seed 001's, read tolerantly:

    # Human Policy

    ## Current Policy: Autonomous Mode (6 hours)

    **Active From:** 2026-02-08T10:00:00Z
    **Duration:** 6 hours
    **Expires At:** 2026-02-08T16:00:00Z

    ### Settings
    - **Mode:** autonomous
    ### Escalation Rules
    - **Repeated Failures:** Escalate after 5 failed attempts
    ### Instructions
    Free text for the agent.

    ---

    ## Policy History
    ### 2026-02-08 09:00 - Interactive Mode
    - Mode: interactive

* The current policy runs from the first `## Current Policy` heading to the next heading of
  level 1 or 2; a closing `---` (and the blank lines before that heading) is not part of it.
  The history runs from `## Policy History` to the next level 1 or 2 heading; each `###`
  heading in it starts one entry. Code blocks and HTML comments (`wild.parsers.masking`) hold
  no headings and no fields; under ### Instructions they are kept as text.
* Field lines are `- **Key:** value`, also `**Key**: value`, `*`/`+` bullets and `- Key: value`;
  keys are matched case-insensitively. Values are read tolerantly ("Every 30 minutes", "30m",
  "none", "Always escalate", "Escalate after 5 failed attempts") by the `read_*` functions
  of `values`, which `wild.policy.model` uses too, so a value this package accepts is the
  value the policy gets.
* Problems, never exceptions: an unknown key, a value no reader accepts, a line in Settings or
  Escalation Rules that is not a field, an unknown `###` section, a duplicate key (the first
  applies) and a file with no current policy are reported with their line.

The package: `values` (the choices and the `read_*` readers), `fields` (the known keys and
field lines), `document` (the records), `structure` (headings and sections), `parser` (parse)
and `edits` (apply_policy, the one edit). Callers use the names re-exported here.
"""

from wild.parsers.policy.document import DEFAULT_FILE, HistoryEntry, PolicyDocument, render
from wild.parsers.policy.edits import apply_policy
from wild.parsers.policy.parser import parse
from wild.parsers.policy.values import (
    APPROVALS,
    AUTONOMY_LEVELS,
    INTERRUPTION_MODES,
    MODES,
    THRESHOLDS,
    AutonomyLevel,
    CommandApproval,
    EscalationThreshold,
    Mode,
    duration_seconds,
    read_approval,
    read_command,
    read_count,
    read_duration,
    read_flag,
    read_level,
    read_minutes,
    read_mode,
    read_preset,
    read_threshold,
)

__all__ = [
    "APPROVALS",
    "AUTONOMY_LEVELS",
    "DEFAULT_FILE",
    "INTERRUPTION_MODES",
    "MODES",
    "THRESHOLDS",
    "AutonomyLevel",
    "CommandApproval",
    "EscalationThreshold",
    "HistoryEntry",
    "Mode",
    "PolicyDocument",
    "apply_policy",
    "duration_seconds",
    "parse",
    "read_approval",
    "read_command",
    "read_count",
    "read_duration",
    "read_flag",
    "read_level",
    "read_minutes",
    "read_mode",
    "read_preset",
    "read_threshold",
    "render",
]
