"""Core of each CLI command: functions that take plain values, do the work and return data.

The click layer in `wild/cli.py` only parses, calls one of these, prints and maps errors.
"""
