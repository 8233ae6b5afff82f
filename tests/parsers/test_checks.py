"""checks.md: the SPEC §8 example, problems named by line, minimal result edits, and
property tests (round trip byte for byte, garbage never raises, edits touch one block)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from tests.parsers.strategies import plausible_files
from wild.parsers import checks
from wild.parsers.checks import Check, CheckStatus
from wild.parsers.lines import Span, split_lines

SPEC_EXAMPLE = """# Completion Checks

- Strategy: all
- Mode: verify

## [PASSING] tests
- Type: tests-pass
- Command: pytest -q
- Timeout: 600s
- Last run: 2026-02-08T10:15:00Z
- Result: "212 passed"

## [FAILING] report-written
- Type: file-contains
- File: results/report.md
- Pattern: clip strategy

## [PENDING] report-exists
- Type: file-exists
- File: results/report.md
"""


def messages(doc: checks.CheckList) -> list[str]:
    return [str(p) for p in doc.problems]


def test_the_spec_example_reads_as_written() -> None:
    doc = checks.parse(SPEC_EXAMPLE)
    assert messages(doc) == []
    assert (doc.strategy, doc.mode) == ("all", "verify")
    assert [(c.id, c.status, c.type) for c in doc.checks] == [
        ("tests", "passing", "tests-pass"),
        ("report-written", "failing", "file-contains"),
        ("report-exists", "pending", "file-exists"),
    ]
    tests = doc.checks[0]
    assert (tests.command, tests.timeout_s, tests.result) == ("pytest -q", 600.0, "212 passed")
    assert tests.last_run == "2026-02-08T10:15:00Z"
    assert (doc.checks[1].file, doc.checks[1].pattern) == ("results/report.md", "clip strategy")
    assert checks.render(doc) == SPEC_EXAMPLE


def test_no_file_or_no_checks_means_defaults_and_nothing_to_check() -> None:
    for text in ("", "# Completion Checks\n\nNothing yet.\n"):
        doc = checks.parse(text)
        assert (doc.strategy, doc.mode, doc.checks, doc.problems) == ("all", "verify", (), ())


def test_commented_out_examples_are_not_checks() -> None:
    text = "# Completion Checks\n<!--\n## [PENDING] tests\n- Type: tests-pass\n-->\n"
    assert checks.parse(text).checks == ()
    fenced = "```\n## [PENDING] tests\n- Type: tests-pass\n```\n"
    assert checks.parse(fenced).checks == ()


def test_settings_are_read_in_any_case_and_bad_ones_are_reported() -> None:
    doc = checks.parse("- strategy: ANY\n- Mode: Override\n")
    assert (doc.strategy, doc.mode) == ("any", "override")
    doc = checks.parse("- Strategy: most\n- Mode: assist\n")
    assert (doc.strategy, doc.mode) == ("all", "assist")
    assert messages(doc) == [
        'checks.md:1: Strategy "most" is not one of all, any (using all)',
    ]


def test_what_a_human_got_wrong_is_named_by_line() -> None:
    text = (
        "## [PENDING] build\n"
        "- Type: build-succeeds\n"
        "## [DONE] lint\n"
        "- Type: lint-passes\n"
        "- Command: ruff check .\n"
        "## [PENDING] report\n"
        "- Type: file-contains\n"
        "- File: r.md\n"
        "- Pattern: (unclosed\n"
        "## [PENDING] odd\n"
        "- Type: smoke-test\n"
        "- Timeout: soon\n"
    )
    doc = checks.parse(text)
    assert messages(doc) == [
        'checks.md:1: check "build" (build-succeeds) has no Command; add a "- Command: ..." line',
        'checks.md:3: check "lint" has unknown status "DONE"; use PENDING, PASSING or FAILING'
        " (read as PENDING)",
        'checks.md:9: check "report" Pattern "(unclosed" is not a regular expression'
        " (missing ), unterminated subpattern at position 0); fix it",
        'checks.md:11: check "odd" Type "smoke-test" is not a check type; use tests-pass,'
        " build-succeeds, lint-passes, type-checks, command-succeeds, file-exists or"
        " file-contains",
        'checks.md:12: check "odd" Timeout "soon" is not a duration; write e.g. 600s, 10m or 1h',
    ]
    assert [c.status for c in doc.checks] == ["pending", "pending", "pending", "pending"]
    assert doc.checks[3].timeout_s == checks.DEFAULT_TIMEOUT_S
    assert checks.render(doc) == text


def test_record_result_changes_only_the_result_lines_and_the_status_word() -> None:
    after = checks.record_result(
        SPEC_EXAMPLE,
        "report-written",
        ran_at="2026-02-08T11:00:00Z",
        result='found "clip strategy"\nin results/report.md',
        status="passing",
    )
    old, new = split_lines(SPEC_EXAMPLE), split_lines(after)
    assert new[:12] == old[:12]
    assert new[12] == "## [PASSING] report-written\n"
    assert new[13:16] == old[13:16]
    assert new[18:] == old[16:]  # two lines added after the block's last field
    assert new[16:18] == [
        "- Last run: 2026-02-08T11:00:00Z\n",
        "- Result: \"found 'clip strategy' in results/report.md\"\n",
    ]
    again = checks.record_result(
        after, "tests", ran_at="2026-02-08T11:01:00Z", result="3 failed", status="failing"
    )
    assert split_lines(again)[5:11] == [
        "## [FAILING] tests\n",
        "- Type: tests-pass\n",
        "- Command: pytest -q\n",
        "- Timeout: 600s\n",
        "- Last run: 2026-02-08T11:01:00Z\n",
        '- Result: "3 failed"\n',
    ]


STATUS_WORD = st.sampled_from(["PENDING", "passing", "FAILING", "x", ""])
ID = st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,8}", fullmatch=True)
VALUE = st.text(alphabet=st.characters(blacklist_characters="\r\n"), max_size=20)
KEY = st.sampled_from(["Type", "Command", "Timeout", "File", "Pattern", "Last run", "Result"])
LINE = st.one_of(
    st.builds(lambda s, i: f"## [{s}] {i}", STATUS_WORD, ID),
    st.builds(lambda k, v: f"- {k}: {v}", KEY, VALUE),
    st.builds(lambda v: f"- Strategy: {v}", st.sampled_from(["all", "any", "x"])),
    st.builds(lambda t: f"- Type: {t}", st.sampled_from([*checks.CHECK_TYPES, "x"])),
    st.sampled_from(["", "# Completion Checks", "<!--", "-->", "```", "prose ✓"]),
    VALUE,
)
STRUCTURED = st.text(alphabet="#[]-*: \n\r`~<!>abPENDIGFAS", max_size=80)


@given(st.one_of(st.text(), STRUCTURED, plausible_files(LINE)))
def test_round_trip_is_byte_for_byte_and_parse_never_raises(text: str) -> None:
    doc = checks.parse(text)
    assert checks.render(doc) == text
    for item in doc.checks:
        assert 0 <= item.span.start < item.span.end <= len(doc.lines)


@given(st.one_of(st.text(), STRUCTURED), ID, VALUE)
def test_edits_on_garbage_never_raise(text: str, cid: str, value: str) -> None:
    checks.record_result(text, cid, ran_at=value, result=value, status="failing")


def without_span(items: tuple[Check, ...]) -> list[Check]:
    return [replace(c, span=Span(0, 0)) for c in items]


@given(plausible_files(LINE), st.data())
def test_record_result_changes_only_its_own_block(text: str, data: st.DataObject) -> None:
    doc = checks.parse(text)
    if not doc.checks:
        return
    target = data.draw(st.sampled_from(doc.checks))
    status: CheckStatus = data.draw(st.sampled_from(checks.STATUSES))
    result = data.draw(st.text(max_size=300))
    after = checks.record_result(
        text, target.id, ran_at="2026-02-08T11:00:00Z", result=result, status=status
    )
    old, new = split_lines(text), split_lines(after)
    start, tail = target.span.start, len(old) - target.span.end
    assert new[:start] == old[:start]
    assert new[len(new) - tail :] == old[len(old) - tail :]
    redone = checks.parse(after)
    got = checks.find(redone, target.id)
    assert got is not None
    assert (got.last_run, got.status) == ("2026-02-08T11:00:00Z", status)
    others = tuple(c for c in doc.checks if c.id != target.id)
    assert without_span(tuple(c for c in redone.checks if c.id != target.id)) == without_span(
        others
    )
    assert (redone.strategy, redone.mode) == (doc.strategy, doc.mode)
