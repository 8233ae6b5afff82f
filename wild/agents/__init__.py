"""The agent layer: `registry` builds command lines, `runner` runs one supervised iteration,
`stream_json` reads Claude-style output and usage limits, `signals` reads promises and tags,
`fake_agent` is a scripted agent for tests.

Nothing is re-exported here: `python -m wild.agents.fake_agent` imports this package first, and
tests start that program dozens of times.
"""
