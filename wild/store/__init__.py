"""Every read and write of `.wild/` files: the parsers only turn text into data and back.

- `files`: crash-safe whole-file writes (atomic replace, compare-and-swap) and settled reads;
- `self_writes`: what wild itself last wrote, so its own writes are not taken for a human's;
- `jsonl`: the one appender of JSON lines, and reads by byte offset;
- `offset_read`: the one reader of an append-only log from a byte offset (alerts, runs);
- `alerts_log`, `alerts_compaction`: alerts.jsonl read incrementally, appended, compacted;
- `events_log`: `.wild/events.log`;
- `state_file`: `.wild/state.json`.
"""
