"""wild: an event-driven autonomous coding-agent loop whose state is plain files under `.wild/`."""

__version__ = "0.1.0"
