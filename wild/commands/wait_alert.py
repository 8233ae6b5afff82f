"""`wild --wait-alert ID [--timeout S]`: a job blocks until the agent or a human answers.

It reads alerts.jsonl incrementally and sleeps on the folder watcher between reads, so a
waiting job costs no CPU and learns of the answer within an inotify event, not a poll
interval. The exit code tells a script what happened: 0 resolved (the choice on stdout),
124 timed out (as `timeout(1)`), 6 no such alert.
"""

from __future__ import annotations

import time

from wild.errors import WildError
from wild.parsers.alert_answer import Answer, answer_of
from wild.paths import WildPaths
from wild.store.alerts_log import AlertLog
from wild.store.self_writes import SelfWrites
from wild.wake import FolderWatcher, Waker
from wild.workspace import require_initialised

RESCAN_S = 30.0  # the watcher's safety net, for folders whose events get lost (NFS)


class AlertWaitTimedOut(WildError):
    exit_code = 124


class UnknownAlert(WildError):
    exit_code = 6


def wait_alert(paths: WildPaths, alert_id: str, timeout_s: float | None) -> Answer:
    """Block until `alert_id` is resolved; its answer. Raises UnknownAlert or the timeout."""
    require_initialised(paths)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    log = AlertLog(paths.alerts)
    watcher = FolderWatcher(paths.root, Waker(), SelfWrites(), safety_rescan_s=RESCAN_S)
    with watcher:  # watching before the first read: an answer in between is an event
        log.refresh()
        if log.index.get(alert_id) is None:
            raise UnknownAlert(
                f"{paths.alerts}: no alert with id {alert_id!r}; use the id `wild --alert` printed"
            )
        while True:
            alert = log.index.get(alert_id)
            answer = answer_of(alert) if alert is not None else None
            if answer is not None:
                return answer
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise AlertWaitTimedOut(
                    f"alert {alert_id} is still {alert.status if alert else 'open'} "
                    f"after {timeout_s:g} s; wait again or answer it"
                )
            watcher.wait_for_work(left)
            log.refresh()
