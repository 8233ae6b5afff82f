"""The loop: a pure decision step (`decide`) over one in-memory model, and a thin driver.

The tour of one wake-up: a file event (wild/wake.py) → the driver re-reads that file
(wild/loop/files.py) into the model (wild/loop/model.py) → `decide` (wild/loop/decide.py,
with wild/loop/work.py for each kind of work) returns actions → the driver
(wild/loop/driver.py) performs them: edits, alerts, events.log, the agent, the human.
"""

from wild.loop.driver import Loop
from wild.loop.model import LoopOptions, LoopResult

__all__ = ["Loop", "LoopOptions", "LoopResult"]
