"""Core of each CLI command: functions that take plain values, do the work and return data.

The click layer in `wild/cli.py` only parses, picks a handler from `actions.HANDLERS`, and maps
errors; each handler calls one of these and prints the result.
"""
