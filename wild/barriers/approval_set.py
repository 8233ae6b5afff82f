"""What a human approved for one project, as data: the set of command hashes the approval
store (wild/barriers/approvals.py, which reads and writes it) holds. Pure, so the loop's
core and the policy can hold a snapshot of it without the store's files and locks."""

from __future__ import annotations

from wild.digest import sha256_hex
from wild.record import record


def command_hash(command: str) -> str:
    """sha256 of the exact command string (surrogates kept, so odd bytes still hash stably)."""
    return sha256_hex(command.encode("utf-8", "surrogateescape"))


@record
class Approvals:
    """A snapshot of one project's approved command hashes (the void ones left out)."""

    hashes: frozenset[str]
    void: frozenset[str] = frozenset()  # in the file, but not written by wild: not approved

    def allows(self, command: str) -> bool:
        return command_hash(command) in self.hashes


NO_APPROVALS = Approvals(frozenset())
