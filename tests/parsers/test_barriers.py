"""Tests for the barriers.md parser and its minimal edits."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.parsers.strategies import plausible_files
from wild.parsers import barriers
from wild.parsers.barriers import Barrier, BarrierStatus
from wild.parsers.lines import Span, split_lines

GOLDEN = Path(__file__).parent / "golden"
SEED = (GOLDEN / "barriers_seed.md").read_text(encoding="utf-8")
TOLERANT = (GOLDEN / "barriers_tolerant.md").read_text(encoding="utf-8")


def barrier(bid: str, span: Span, **values: object) -> Barrier:
    """A record with the parser's defaults, so each test names only what it cares about."""
    base: dict[str, object] = {
        "status": "waiting",
        "type": "manual",
        "check": None,
        "expect": None,
        "interval_s": 60.0,
        "file": None,
        "target": None,
        "timeout_s": None,
        "created": None,
        "last_check": None,
        "result": None,
        "satisfied_at": None,
        "blocks": (),
        "fields": {},
    }
    base.update(values)
    return Barrier(id=bid, span=span, **base)  # type: ignore[arg-type]


def messages(text: str) -> list[str]:
    return [str(p) for p in barriers.parse(text).problems]


# --- golden files -------------------------------------------------------------------------


def test_seed_example_parses_to_exactly_the_seed_records() -> None:
    doc = barriers.parse(SEED)
    assert doc.barriers == (
        barrier(
            "barrier-training-complete",
            Span(2, 11),
            type="command-check",
            check="squeue -u $USER --name=sweep-2026-02-08 | wc -l",
            expect="0",
            created="2026-02-08T10:00:00Z",
            last_check="2026-02-08T10:15:00Z",
            result="5 jobs still running",
            blocks=("task-003", "task-004", "task-005"),
            fields={
                "Type": "command-check",
                "Check": "squeue -u $USER --name=sweep-2026-02-08 | wc -l",
                "Expect": "0",
                "Interval": "60s",
                "Created": "2026-02-08T10:00:00Z",
                "Last check": "2026-02-08T10:15:00Z",
                "Result": '"5 jobs still running"',
                "Blocks": "task-003, task-004, task-005",
            },
        ),
        barrier(
            "barrier-data-preprocessed",
            Span(12, 17),
            status="satisfied",
            type="file-exists",
            file="/data/processed/COMPLETE.flag",
            created="2026-02-08T09:00:00Z",
            satisfied_at="2026-02-08T09:45:00Z",
            fields={
                "Type": "file-exists",
                "File": "/data/processed/COMPLETE.flag",
                "Created": "2026-02-08T09:00:00Z",
                "Satisfied": "2026-02-08T09:45:00Z",
            },
        ),
        barrier(
            "barrier-model-validation",
            Span(18, 26),
            type="command-check",
            check="python scripts/validate_sweep.py --sweep-id sweep-001 --min-accuracy 0.85",
            interval_s=120.0,
            created="2026-02-08T10:30:00Z",
            last_check="2026-02-08T10:35:00Z",
            result="3/8 models meet accuracy threshold",
            blocks=("task-006",),
            fields={
                "Type": "command-check",
                "Check": "python scripts/validate_sweep.py --sweep-id sweep-001 "
                "--min-accuracy 0.85",
                "Interval": "120s",
                "Created": "2026-02-08T10:30:00Z",
                "Last check": "2026-02-08T10:35:00Z",
                "Result": '"3/8 models meet accuracy threshold"',
                "Blocks": "task-006",
            },
        ),
    )
    assert doc.problems == ()
    assert barriers.render(doc) == SEED


def test_tolerant_file_reads_what_humans_type_and_reports_the_rest() -> None:
    doc = barriers.parse(TOLERANT)
    assert doc.barriers == (
        barrier(
            "sweep-done",
            Span(14, 22),
            status="satisfied",
            type="command-check",
            check="test -f done.txt",
            expect="ok",
            interval_s=300.0,
            timeout_s=90.0,
            blocks=("task-001", "task-002", "task-003"),
            fields={
                "Type": "Command Check",
                "Command": "test -f done.txt",
                "Expect": '"ok"',
                "Interval": "5m",
                "Timeout": "90",
                "Owner": "alice",
                "Blocks": "task-001 task-002,task-003",
            },
        ),
        barrier(
            "count-jobs",
            Span(23, 31),
            type="count-based",
            check="ls runs | wc -l",
            target=8,
            interval_s=5400.0,
            last_check="2026-02-08T10:15:00Z",
            result="3 of 8",
            fields={
                "type": "count-based",
                "check": "ls runs | wc -l",
                "target": "8",
                "interval": "1.5h",
                "last check": "2026-02-08T10:15:00Z",
                "result": "3 of 8",
            },
        ),
        barrier(
            "odd-status",
            Span(32, 38),
            type="teleport",
            check="first",
            fields={
                "Type": "teleport",
                "Interval": "soon",
                "Target": "many",
                "Check": "first",
                "Command": "second",
            },
        ),
    )
    assert [str(p) for p in doc.problems] == [
        'barriers.md:31: line is not a "- Key: value" field of barrier "count-jobs"; '
        "it is kept and ignored",
        'barriers.md:33: barrier "odd-status" has unknown status "DONE"; use WAITING, '
        "SATISFIED or FAILED (read as WAITING)",
        'barriers.md:34: barrier "odd-status" Type "teleport" is not a barrier type; use '
        "command-check, file-exists, count-based, webhook or manual",
        'barriers.md:35: barrier "odd-status" Interval "soon" is not a duration; write e.g. '
        "60s, 5m or 1h (using 60s)",
        'barriers.md:36: barrier "odd-status" Target "many" is not a whole number; write e.g. 8',
        'barriers.md:38: barrier "odd-status" sets Check twice (first at line 37); the first '
        "one is used",
        'barriers.md:40: duplicate barrier id "count-jobs" (first at line 24); this block is '
        "ignored, rename it",
        'barriers.md:43: "## Notes" is not a barrier header; write it as "## [WAITING] barrier-id"',
    ]
    assert barriers.render(doc) == TOLERANT


# --- reading details ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("60s", 60.0),
        ("5m", 300.0),
        ("1h", 3600.0),
        ("90", 90.0),
        (" 2 min ", 120.0),
        ("1.5h", 5400.0),
        ("1d", 86400.0),
        ("10 Seconds", 10.0),
        (".5m", 30.0),
        ("0s", None),
        ("soon", None),
        ("5 parsecs", None),
        ("", None),
        ("-5s", None),
    ],
)
def test_parse_duration(text: str, seconds: float | None) -> None:
    assert barriers.parse_duration(text) == seconds


def test_missing_type_and_required_fields_are_reported() -> None:
    text = (
        "## [WAITING] a\n- Check: x\n## [WAITING] b\n- Type: count-based\n"
        "## [WAITING] c\n- Type: file-exists\n- File:\n"
    )
    assert messages(text) == [
        'barriers.md:1: barrier "a" has no "- Type:" line; add one (command-check, '
        "file-exists, count-based, webhook or manual)",
        'barriers.md:3: barrier "b" (count-based) has no Check; add a "- Check: ..." line',
        'barriers.md:3: barrier "b" (count-based) has no Target; add a "- Target: ..." line',
        'barriers.md:5: barrier "c" (file-exists) has no File; add a "- File: ..." line',
    ]
    assert barriers.parse(text).barriers[0].type == ""


def test_header_problems_and_bad_times_are_reported_with_the_file_name() -> None:
    text = (
        "## [WAITING]\n## [WAITING] 9lives extra words\n- Type: manual\n"
        "- Created: whenever\n- Timeout: long\n"
    )
    problems = barriers.parse(text, file=".wild/barriers.md").problems
    assert [str(p) for p in problems] == [
        '.wild/barriers.md:1: barrier header has no id; write it as "## [WAITING] barrier-id"',
        '.wild/barriers.md:2: barrier id "9lives" should start with a letter and use only '
        'letters, digits, "_", "." and "-"',
        '.wild/barriers.md:2: text after barrier id "9lives" is ignored: "extra words"',
        '.wild/barriers.md:4: barrier "9lives" Created "whenever" is not a time; write an ISO '
        "time such as 2026-02-08T10:00:00Z",
        '.wild/barriers.md:5: barrier "9lives" Timeout "long" is not a duration; write e.g. '
        "30s, 5m or 1h",
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "~~~~\n## [WAITING] a\n~~~\n",
            "barriers.md:1: code block opened here is never "
            "closed; nothing after it is read as a barrier until a closing ~~~~",
        ),
        (
            "ok\n<!-- start\n## [WAITING] a\n",
            "barriers.md:2: HTML comment opened here is never "
            "closed; nothing after it is read as a barrier until a closing -->",
        ),
    ],
)
def test_unclosed_fence_or_comment_hides_what_follows_and_is_reported(
    text: str, problem: str
) -> None:
    doc = barriers.parse(text)
    assert doc.barriers == ()
    assert [str(p) for p in doc.problems] == [problem]


def test_comment_and_fence_edges() -> None:
    text = (
        "## [WAITING] a\n- Type: manual\n<!-- note --> \n````\n- Check: hidden\n```\n"
        "````\n- File: shown <!-- inline -->\n<!-- a --> <!-- b\n- Expect: hidden\n-->\n"
    )
    doc = barriers.parse(text)
    assert doc.barriers == (
        barrier(
            "a",
            Span(0, 8),
            file="shown <!-- inline -->",
            fields={"Type": "manual", "File": "shown <!-- inline -->"},
        ),
    )
    assert doc.problems == ()


def test_quoted_values_and_empty_values() -> None:
    text = '## [FAILED] a\n- Type: webhook\n- Expect: ""\n- Result: "boom\n- Check:\n'
    assert barriers.parse(text).barriers == (
        barrier(
            "a",
            Span(0, 5),
            status="failed",
            type="webhook",
            expect="",
            result='"boom',
            fields={"Type": "webhook", "Expect": '""', "Result": '"boom', "Check": ""},
        ),
    )


def test_a_repeated_field_keeps_its_first_value_everywhere() -> None:
    text = "## [WAITING] a\n- Type: manual\n- Expect: one\n- Expect: two\n"
    doc = barriers.parse(text)
    assert doc.barriers == (
        barrier("a", Span(0, 4), expect="one", fields={"Type": "manual", "Expect": "one"}),
    )
    assert [str(p) for p in doc.problems] == [
        'barriers.md:4: barrier "a" sets Expect twice (first at line 3); the first one is used'
    ]


def test_find() -> None:
    doc = barriers.parse(SEED)
    found = barriers.find(doc, "barrier-model-validation")
    assert found is not None
    assert found.interval_s == 120.0
    assert barriers.find(doc, "nope") is None


# --- edits --------------------------------------------------------------------------------


def changed(before: str, after: str) -> list[tuple[int, str, str]]:
    """(line, old, new) for each differing line of two texts with the same line count."""
    old, new = split_lines(before), split_lines(after)
    assert len(old) == len(new)
    return [(i, a, b) for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]


def test_record_check_updates_only_its_two_lines() -> None:
    after = barriers.record_check(
        SEED,
        "barrier-training-complete",
        checked_at="2026-02-08T10:16:00Z",
        result='4 jobs\n still   "running"\t',
    )
    assert changed(SEED, after) == [
        (8, "- Last check: 2026-02-08T10:15:00Z\n", "- Last check: 2026-02-08T10:16:00Z\n"),
        (9, '- Result: "5 jobs still running"\n', "- Result: \"4 jobs still 'running'\"\n"),
    ]


def test_record_check_inserts_missing_lines_after_the_last_field_and_sets_status() -> None:
    after = barriers.record_check(
        SEED,
        "barrier-data-preprocessed",
        checked_at="2026-02-08T10:20:00Z",
        result="found",
        status="satisfied",
    )
    expected = SEED.replace(
        "## [SATISFIED] barrier-data-preprocessed\n- Type: file-exists\n"
        "- File: /data/processed/COMPLETE.flag\n- Created: 2026-02-08T09:00:00Z\n"
        "- Satisfied: 2026-02-08T09:45:00Z\n",
        "## [SATISFIED] barrier-data-preprocessed\n- Type: file-exists\n"
        "- File: /data/processed/COMPLETE.flag\n- Created: 2026-02-08T09:00:00Z\n"
        "- Satisfied: 2026-02-08T10:20:00Z\n- Last check: 2026-02-08T10:20:00Z\n"
        '- Result: "found"\n',
    )
    assert after == expected


def test_record_check_status_change_keeps_the_rest_of_the_header_and_crlf() -> None:
    text = "##  [ waiting ]  b-1\r\n- Type: manual\r\n\r\n## [WAITING] b-2\r\n"
    after = barriers.record_check(text, "b-1", checked_at="T", result="no", status="failed")
    assert after == (
        "##  [ FAILED ]  b-1\r\n- Type: manual\r\n- Last check: T\r\n"
        '- Result: "no"\r\n\r\n## [WAITING] b-2\r\n'
    )


def test_record_check_mimics_bold_bullets_and_handles_a_missing_final_newline() -> None:
    text = "## [WAITING] b\n  * **Type:** manual\n  * **Last check:**"
    after = barriers.record_check(text, "b", checked_at="T1", result="r")
    assert after == (
        '## [WAITING] b\n  * **Type:** manual\n  * **Last check:** T1\n  * **Result:** "r"\n'
    )


def test_record_check_without_fields_inserts_after_the_header() -> None:
    after = barriers.record_check("## [WAITING] b\n\nprose\n", "b", checked_at="T", result="")
    assert after == '## [WAITING] b\n- Last check: T\n- Result: ""\n\nprose\n'


def test_result_is_one_line_and_truncated_to_200_characters() -> None:
    assert barriers.clean_result("x" * 200) == "x" * 200
    assert barriers.clean_result("y" * 201) == "y" * 199 + "…"
    assert barriers.clean_result(' a\n\r\tb  "c" ') == "a b 'c'"
    after = barriers.record_check(
        SEED, "barrier-model-validation", checked_at="T", result="z " * 300
    )
    found = barriers.find(barriers.parse(after), "barrier-model-validation")
    assert found is not None
    assert found.result == ("z " * 100)[:199] + "…"


def test_edits_on_unknown_ids_return_the_text_unchanged() -> None:
    assert barriers.record_check(SEED, "nope", checked_at="T", result="r") == SEED
    assert barriers.set_status(SEED, "nope", "satisfied", at="T") == SEED


def test_edits_go_to_the_first_of_duplicate_ids() -> None:
    text = "## [WAITING] d\n- Type: manual\n## [WAITING] d\n- Type: manual\n"
    after = barriers.set_status(text, "d", "failed", at="T")
    assert after == "## [FAILED] d\n- Type: manual\n## [WAITING] d\n- Type: manual\n"


def test_set_status() -> None:
    satisfied = barriers.set_status(
        SEED, "barrier-model-validation", "satisfied", at="2026-02-08T11:00:00Z"
    )
    assert satisfied == SEED.replace(
        "## [WAITING] barrier-model-validation", "## [SATISFIED] barrier-model-validation"
    ).replace("- Blocks: task-006", "- Blocks: task-006\n- Satisfied: 2026-02-08T11:00:00Z")
    failed = barriers.set_status(SEED, "barrier-data-preprocessed", "failed", at="T")
    assert changed(SEED, failed) == [
        (
            12,
            "## [SATISFIED] barrier-data-preprocessed\n",
            "## [FAILED] barrier-data-preprocessed\n",
        ),
    ]
    assert barriers.set_status(SEED, "barrier-training-complete", "waiting", at="T") == SEED


# --- properties ---------------------------------------------------------------------------

VALUE = st.text(st.characters(blacklist_characters="\r\n"), max_size=20)
STATUS_WORD = st.sampled_from(["WAITING", "waiting", " Satisfied ", "FAILED", "DONE", ""])
ID = st.sampled_from(["b-1", "b-2", "B_3.x", "é"])
KEY = st.sampled_from(
    [
        "Type",
        "Check",
        "command",
        "Expect",
        "Interval",
        "File",
        "Target",
        "Timeout",
        "Created",
        "Last check",
        "result",
        "Satisfied",
        "Blocks",
        "Owner",
    ]
)
LINE = st.one_of(
    st.builds(lambda s, i: f"## [{s}] {i}", STATUS_WORD, ID),
    st.builds(lambda k, v: f"- {k}: {v}", KEY, VALUE),
    st.builds(lambda k, v: f"* **{k}:** {v}", KEY, VALUE),
    st.builds(lambda t: f"- Type: {t}", st.sampled_from(["manual", "command-check", "x"])),
    st.sampled_from(
        [
            "",
            "   ",
            "# Title",
            "## Notes",
            "<!--",
            "-->",
            "<!-- c -->",
            "```",
            "~~~",
            "---",
            "prose ✓ ünïcode",
        ]
    ),
    VALUE,
)


def plausible() -> st.SearchStrategy[str]:
    return plausible_files(LINE)


STRUCTURED = st.text(alphabet="#[]-*: \n\r`~<!>abWAITINGSFD", max_size=80)


@given(st.one_of(st.text(), STRUCTURED, plausible()))
def test_round_trip_is_byte_for_byte_and_parse_never_raises(text: str) -> None:
    doc = barriers.parse(text)
    assert barriers.render(doc) == text
    for item in doc.barriers:
        assert 0 <= item.span.start < item.span.end <= len(doc.lines)


def test_undecodable_bytes_survive() -> None:
    text = b"## [WAITING] b\n- Check: \xff\xfe\n".decode("utf-8", "surrogateescape")
    doc = barriers.parse(text)
    assert barriers.render(doc) == text
    assert doc.barriers[0].check == "\udcff\udcfe"


@given(st.one_of(st.text(), STRUCTURED), ID, VALUE)
def test_edits_on_garbage_never_raise(text: str, bid: str, value: str) -> None:
    barriers.record_check(text, bid, checked_at=value, result=value, status="satisfied")
    barriers.set_status(text, bid, "failed", at=value)


def without_span(items: tuple[Barrier, ...]) -> list[Barrier]:
    return [replace(b, span=Span(0, 0)) for b in items]


@given(plausible(), st.data())
def test_record_check_changes_only_its_own_block(text: str, data: st.DataObject) -> None:
    doc = barriers.parse(text)
    if not doc.barriers:
        return
    target = data.draw(st.sampled_from(doc.barriers))
    status: BarrierStatus | None = data.draw(
        st.sampled_from([None, "waiting", "satisfied", "failed"])
    )
    result = data.draw(st.text(max_size=300))
    after = barriers.record_check(
        text, target.id, checked_at="2026-02-08T11:00:00Z", result=result, status=status
    )
    old, new = split_lines(text), split_lines(after)
    start, tail = target.span.start, len(old) - target.span.end
    assert new[:start] == old[:start]
    assert new[len(new) - tail :] == old[len(old) - tail :]
    redone = barriers.parse(after)
    got = barriers.find(redone, target.id)
    assert got is not None
    assert got.last_check == "2026-02-08T11:00:00Z"
    assert got.result == barriers.clean_result(result)
    assert got.status == (status or target.status)
    if status == "satisfied":
        assert got.satisfied_at == "2026-02-08T11:00:00Z"
    others = tuple(b for b in doc.barriers if b.id != target.id)
    assert without_span(tuple(b for b in redone.barriers if b.id != target.id)) == without_span(
        others
    )
