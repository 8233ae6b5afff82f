"""Barriers: checking external conditions, approving their commands, and the loopback webhook."""
