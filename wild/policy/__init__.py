"""The human policy: `model` (what a policy is), `presets`, `escalation` (decisions), `notify`."""
