"""A store of one file per project, kept outside every project (under `$XDG_CONFIG_HOME/wild/`):
the approvals (`wild.barriers.approvals`) and the totals ledger (`wild.store.totals_ledger`).

A project's file is named by a digest of the project's real path, so any path makes a safe
file name; the file also holds that path, so its reader can refuse a file moved or copied to
another project's name.
"""

from __future__ import annotations

from pathlib import Path

from wild.store.self_writes import content_hash


def project_file(folder: Path, project: str) -> Path:
    """The file of the project whose real path is `project` in the store `folder`."""
    digest = content_hash(project.encode("utf-8", "surrogateescape"))[:32]
    return folder / f"{digest}.json"
