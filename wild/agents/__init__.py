"""The agent layer: `registry` builds command lines, `runner` runs one supervised iteration,
`stream_json` reads Claude-style output and usage limits, `signals` reads promises and tags.
The tests' scripted agent is `tests/fake_agent.py`, outside the package.
"""
