"""Tests for the human.md parser: the input queue, processed marks and wild's questions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.parsers.strategies import plausible_files
from wild.parsers import human, masking
from wild.parsers.human import HumanInput
from wild.parsers.lines import Span, append_lines, split_lines

GOLDEN = Path(__file__).parent / "golden"
SEED = (GOLDEN / "human_seed.md").read_text(encoding="utf-8")
TOLERANT = (GOLDEN / "human_tolerant.md").read_text(encoding="utf-8")


def entry(key: str, span: Span, content: str, **values: object) -> HumanInput:
    """A record with the parser's defaults, so each test names only what it cares about."""
    base: dict[str, object] = {
        "timestamp": key,
        "status": "pending",
        "urgent": False,
        "type": None,
        "priority": "normal",
        "related_alert": None,
    }
    base.update(values)
    return HumanInput(key=key, span=span, content=content, **base)  # type: ignore[arg-type]


SEED_INPUTS = (
    entry(
        "2026-02-08T12:30:00Z",
        Span(2, 19),
        "The OOM is because batch size is too large for this GPU. \n\nTry these in order:\n"
        "1. Reduce batch size from 64 to 32\n"
        "2. If that fails, try gradient accumulation: batch=16, accum_steps=4\n"
        "3. If both fail, switch to smaller model variant",
        urgent=True,
        type="alert-resolution-guidance",
        priority="urgent",
        related_alert="alert-005",
    ),
    entry(
        "2026-02-08T11:15:00Z",
        Span(20, 32),
        "Add a new task to visualize training curves after analysis completes.\n"
        "Use matplotlib, save plots to results/plots/",
        status="processed",
        type="task-addition",
    ),
    entry(
        "2026-02-08T10:30:00Z",
        Span(33, 42),
        "Switch to autonomous mode for the next 6 hours",
        status="processed",
        type="policy-change",
    ),
)


# --- golden files -------------------------------------------------------------------------


def test_seed_example_parses_to_exactly_the_seed_records() -> None:
    doc = human.parse(SEED)
    assert doc.inputs == SEED_INPUTS
    assert doc.problems == ()
    assert human.pending(doc) == SEED_INPUTS[:1]
    assert human.render(doc) == SEED


def test_tolerant_file_reads_what_humans_type_and_reports_the_rest() -> None:
    doc = human.parse(TOLERANT, file=".wild/human.md")
    first = entry(
        "2026-02-08 14:00",
        Span(4, 7),
        "Please pause the sweep after job 4.\n"
        "# not a heading for wild: a shell comment stays in the input",
        timestamp="2026-02-08T14:00:00Z",
    )
    urgent = entry(
        "2026-02-08T13:00:00Z",
        Span(8, 19),
        "Stop everything.\nThen report.\n#### Details stay in the input",
        urgent=True,
        priority="urgent",
        related_alert="alert-007",
    )
    vague = entry("yesterday-ish", Span(37, 39), "")
    blank = entry("", Span(40, 42), "")
    assert doc.inputs == (
        first,
        urgent,
        entry(
            "2026-02-08T12:00:00Z",
            Span(20, 28),
            "Retry or skip?",
            status="question",
            type="question",
            related_alert="alert-003",
        ),
        entry("2026-02-08T11:00:00Z", Span(29, 32), "Old question", status="answered"),
        vague,
        blank,
    )
    assert [str(p) for p in doc.problems] == [
        '.wild/human.md:19: text after "---" belongs to no section; move it above the "---" '
        'line or under a new "## [PENDING] <time>" header',
        '.wild/human.md:34: unknown status "DONE"; use PENDING, PROCESSED, QUESTION, '
        "ANSWERED or REPORT (this section is ignored)",
        '.wild/human.md:38: "yesterday-ish" is not a time; write an ISO time such as '
        "2026-02-08T12:30:00Z",
        '.wild/human.md:38: unknown priority "high"; use urgent, normal or low (read as normal)',
        '.wild/human.md:38: pending input "yesterday-ish" has no text; write it under "### Input:"',
        ".wild/human.md:41: section has no timestamp; write it as "
        '"## [PENDING] 2026-02-08T12:30:00Z"',
        '.wild/human.md:41: pending input "" has no text; write it under "### Input:"',
        '.wild/human.md:44: "## Notes" is not a section header; write it as "## [PENDING] <time>"',
    ]
    assert human.pending(doc) == (urgent, first, vague, blank)
    assert human.render(doc) == TOLERANT


def test_pending_order_is_urgent_then_oldest_then_file_order() -> None:
    text = (
        "## [PENDING] 2026-02-08T12:00:00Z\nlate\n"
        "## [PENDING] 2026-02-08T11:00:00Z\nearly\n"
        "## [PENDING] 2026-02-08T13:00:00Z - URGENT\nurgent late\n"
        "## [PENDING] 2026-02-08T11:00:00+00:00\nsame time, later in file\n"
        "## [PROCESSED] 2026-02-08T09:00:00Z\ndone\n"
        "## [QUESTION] 2026-02-08T08:00:00Z\n### Question:\nasked\n"
        "## [PENDING] 2026-02-08T12:30:00Z\n**Priority:** urgent\nurgent by field\n"
    )
    got = [i.content for i in human.pending(human.parse(text))]
    assert got == ["urgent by field", "urgent late", "early", "same time, later in file", "late"]


# --- edits --------------------------------------------------------------------------------


def test_mark_processed_changes_the_header_and_adds_a_processed_note_before_the_rule() -> None:
    text = SEED + "\n---\n"
    after = human.mark_processed(
        text,
        "2026-02-08T12:30:00Z",
        processed_at="2026-02-08T12:31:00Z",
        note="Reduced\nbatch size",
    )
    assert after == text.replace(
        "## [PENDING] 2026-02-08T12:30:00Z - URGENT", "## [PROCESSED] 2026-02-08T12:30:00Z - URGENT"
    ).replace(
        "None - continue with current autonomous policy\n\n---",
        "None - continue with current autonomous policy\n\n### Processed:\n"
        "2026-02-08T12:31:00Z - Reduced batch size\n\n---",
    )
    doc = human.parse(after)
    assert doc.inputs[0] == replace(SEED_INPUTS[0], status="processed", span=Span(2, 22))
    assert doc.inputs[1:] == tuple(
        replace(i, span=Span(i.span.start + 3, i.span.end + 3))
        for i in human.parse(text).inputs[1:]
    )
    assert human.pending(doc) == ()


def test_mark_processed_without_a_rule_at_the_end_of_a_crlf_file() -> None:
    text = "## [pending] T1\r\n### Input:\r\nhi\r\n\r\n"
    after = human.mark_processed(text, "T1", processed_at="T2", note="done")
    assert after == (
        "## [PROCESSED] T1\r\n### Input:\r\nhi\r\n\r\n### Processed:\r\nT2 - done\r\n\r\n"
    )
    no_newline = human.mark_processed("## [PENDING] T1\nhi", "T1", processed_at="T2", note="ok")
    assert (
        no_newline
        == "## [PENDING] T1\nhi".replace("PENDING", "PROCESSED") + "\n\n### Processed:\nT2 - ok\n"
    )


def test_mark_processed_applies_to_the_first_section_of_a_key_still_pending() -> None:
    text = "## [PROCESSED] T\nold\n---\n## [PENDING] T\nfirst\n---\n## [PENDING] T\nsecond\n---\n"
    once = human.mark_processed(text, "T", processed_at="A", note="n1")
    assert once == (
        "## [PROCESSED] T\nold\n---\n## [PROCESSED] T\nfirst\n\n### Processed:\nA - n1\n---\n"
        "## [PENDING] T\nsecond\n---\n"
    )
    twice = human.mark_processed(once, "T", processed_at="B", note="n2")
    assert [i.status for i in human.parse(twice).inputs] == ["processed"] * 3
    assert human.mark_processed(twice, "T", processed_at="C", note="n3") == twice
    assert human.mark_processed(text, "nope", processed_at="C", note="n") == text


def test_append_input_writes_a_pending_section_that_reads_back() -> None:
    after = human.append_input(
        SEED,
        "Use\nbf16",
        timestamp="2026-02-08T13:00:00Z",
        urgent=True,
        type="task-modification",
        related_alert="alert-009",
    )
    assert after == SEED + (
        "\n## [PENDING] 2026-02-08T13:00:00Z - URGENT\n**Type:** task-modification  \n"
        "**Alert:** alert-009  \n**Priority:** urgent\n\n### Input:\nUse\nbf16\n\n---\n"
    )
    doc = human.parse(after)
    assert doc.problems == ()
    assert doc.inputs[-1] == entry(
        "2026-02-08T13:00:00Z",
        Span(43, 53),
        "Use\nbf16",
        urgent=True,
        priority="urgent",
        type="task-modification",
        related_alert="alert-009",
    )
    assert human.append_input("", "x", timestamp="T") == (
        "## [PENDING] T\n**Type:** general-instruction  \n**Priority:** normal\n\n"
        "### Input:\nx\n\n---\n"
    )


def test_append_input_of_hostile_content_cannot_forge_a_section() -> None:
    hostile = "## [PENDING] fake\n---\n### Input:\n##[PENDING] x\n# kept as is\n--- x\nend"
    after = human.append_input("# Human Input Queue\n", hostile, timestamp="T\n## [PENDING] y")
    doc = human.parse(after)
    assert doc.inputs == (
        entry(
            "T ## [PENDING] y",
            Span(2, 16),
            " ## [PENDING] fake\n ---\n ### Input:\n ##[PENDING] x\n# kept as is\n --- x\nend",
            type="general-instruction",
        ),
    )
    assert [str(p) for p in doc.problems] == [
        'human.md:3: "T ## [PENDING] y" is not a time; write an ISO time such as '
        "2026-02-08T12:30:00Z"
    ]


def test_append_question_and_mark_answered() -> None:
    asked = human.append_question(
        SEED,
        timestamp="2026-02-08T13:10:00Z",
        related="alert-005",
        title="Retry\nor skip?",
        body="Job 3 OOMed twice.\n## Why",
    )
    assert asked == SEED + (
        "\n## [QUESTION] 2026-02-08T13:10:00Z\n**Type:** question  \n**Related:** alert-005\n\n"
        "### Question:\nRetry or skip?\n\nJob 3 OOMed twice.\n ## Why\n\n---\n"
    )
    question = entry(
        "2026-02-08T13:10:00Z",
        Span(43, 54),
        "Retry or skip?\n\nJob 3 OOMed twice.\n ## Why",
        status="question",
        type="question",
        related_alert="alert-005",
    )
    doc = human.parse(asked)
    assert doc.inputs[-1] == question
    assert human.pending(doc) == SEED_INPUTS[:1]
    answered = human.mark_answered(asked, "2026-02-08T13:10:00Z")
    assert answered == asked.replace("## [QUESTION]", "## [ANSWERED]")
    assert human.parse(answered).inputs[-1] == replace(question, status="answered")
    assert human.mark_answered(answered, "2026-02-08T13:10:00Z") == answered
    assert human.mark_answered(SEED, "2026-02-08T12:30:00Z") == SEED
    plain = human.append_question("", timestamp="T", related=None, title="Go?", body=" ")
    assert plain == "## [QUESTION] T\n**Type:** question\n\n### Question:\nGo?\n\n---\n"


# --- properties ---------------------------------------------------------------------------

VALUE = st.text(st.characters(blacklist_characters="\r\n"), max_size=20)
LINE = st.one_of(
    st.builds(
        lambda s, t, u: f"## [{s}] {t}{u}",
        st.sampled_from(["PENDING", "pending", "PROCESSED", "QUESTION", "ANSWERED", "X"]),
        st.sampled_from(["T1", "T2", "2026-02-08T12:30:00Z", ""]),
        st.sampled_from(["", " - URGENT"]),
    ),
    st.builds(
        lambda k, v: f"**{k}:** {v}", st.sampled_from(["Type", "Alert", "Priority", "Foo"]), VALUE
    ),
    st.sampled_from(
        [
            "",
            "  ",
            "# Human Input Queue",
            "## Notes",
            "### Input:",
            "### Question:",
            "### Processed:",
            "---",
            "**Priority:** urgent",
            "ünïcode ✓",
            "```",
            "~~~~",
            "<!--",
            "-->",
            "<!-- ## [PENDING] T9 -->",
        ]
    ),
    VALUE,
)


def plausible() -> st.SearchStrategy[str]:
    return plausible_files(LINE)


STRUCTURED = st.text(alphabet="#[]-*: \n\rPENDIGURabc", max_size=80)


@given(st.one_of(st.text(), STRUCTURED, plausible()))
def test_round_trip_is_byte_for_byte_and_parse_never_raises(text: str) -> None:
    doc = human.parse(text)
    assert human.render(doc) == text
    for item in doc.inputs:
        assert 0 <= item.span.start < item.span.end <= len(doc.lines)


def test_undecodable_bytes_survive() -> None:
    text = b"## [PENDING] T\n\xff\n".decode("utf-8", "surrogateescape")
    doc = human.parse(text)
    assert human.render(doc) == text
    assert doc.inputs[0].content == "\udcff"


@given(st.one_of(st.text(), STRUCTURED), VALUE)
def test_edits_on_garbage_never_raise(text: str, value: str) -> None:
    human.mark_processed(text, value, processed_at=value, note=value)
    human.mark_answered(text, value)


def closed(text: str, item: HumanInput, *, before_blank_tail: bool = False) -> HumanInput:
    """`item` once an edit closed the code block or comment it leaves open at the end of the
    file (edits close one, or what they add would hide in it). `mark_processed` writes its
    note after the section's last non-blank line, so it closes the block there
    (`before_blank_tail`); appending edits close it at the very end."""
    block = masking.left_open(masking.scan(text))
    if block is None or block.closer is None or block.start >= item.span.end:
        return item
    # The block runs to the end of the file, so `item` is the last input.
    lines = split_lines(text)
    kept = len(lines)
    while before_blank_tail and kept > item.span.start + 1 and not lines[kept - 1].strip():
        kept -= 1
    edited = append_lines("".join(lines[:kept]), [block.closer])
    return replace(item, content=human.parse(edited).inputs[-1].content)


def moved(items: tuple[HumanInput, ...]) -> list[HumanInput]:
    return [replace(i, span=Span(0, 0)) for i in items]


@given(plausible(), st.data())
def test_mark_processed_changes_only_its_own_section(text: str, data: st.DataObject) -> None:
    doc = human.parse(text)
    waiting = [i for i in doc.inputs if i.status == "pending"]
    if not waiting:
        return
    chosen = data.draw(st.sampled_from(waiting))
    # Keys may repeat; the edit goes to the first pending section with the key.
    target = next(i for i in waiting if i.key == chosen.key)
    after = human.mark_processed(text, target.key, processed_at="P", note="n")
    old, new = split_lines(text), split_lines(after)
    start, tail = target.span.start, len(old) - target.span.end
    assert new[:start] == old[:start]
    assert new[len(new) - tail :] == old[len(old) - tail :]
    redone = human.parse(after)
    index = doc.inputs.index(target)
    expected = replace(closed(text, target, before_blank_tail=True), status="processed")
    assert replace(redone.inputs[index], span=target.span) == expected
    others = doc.inputs[:index] + doc.inputs[index + 1 :]
    assert moved(redone.inputs[:index] + redone.inputs[index + 1 :]) == moved(others)


@given(plausible(), st.text(), st.booleans())
def test_append_input_adds_exactly_one_pending_section(
    text: str, content: str, urgent: bool
) -> None:
    before = human.parse(text)
    after = human.append_input(text, content, timestamp="2026-02-08T15:00:00Z", urgent=urgent)
    assert after.startswith(text)
    doc = human.parse(after)
    assert moved(doc.inputs[:-1]) == moved(tuple(closed(text, i) for i in before.inputs))
    last = doc.inputs[-1]
    assert (last.key, last.status, last.urgent) == ("2026-02-08T15:00:00Z", "pending", urgent)


# Without `#`, `-`, backticks and tildes, no line opens a section, a code block or a comment.
SAFE_LINE = st.text(st.characters(blacklist_characters="\r\n#-`~"), max_size=15)


@given(plausible(), st.lists(SAFE_LINE, max_size=6), st.sampled_from(["\n", "\r\n"]))
def test_append_input_keeps_ordinary_content_exactly(
    text: str, content_lines: list[str], eol: str
) -> None:
    content = eol.join(content_lines)
    doc = human.parse(human.append_input(text, content, timestamp="T"))
    kept = [i for i, line in enumerate(content_lines) if line.strip()]
    expected = "\n".join(content_lines[kept[0] : kept[-1] + 1]) if kept else ""
    assert doc.inputs[-1].content == expected


def test_append_report_adds_a_report_section_that_is_never_input() -> None:
    text = human.append_report(
        "# Human Input Queue\n",
        timestamp="2026-02-08T10:30:00Z",
        report="Tasks: 1/3 complete\nAlerts: 0 open",
    )
    assert text == (
        "# Human Input Queue\n\n## [REPORT] 2026-02-08T10:30:00Z\n**Type:** progress\n\n"
        "### Report:\nTasks: 1/3 complete\nAlerts: 0 open\n\n---\n"
    )
    doc = human.parse(text)
    assert doc.problems == ()
    assert [(h.status, h.content) for h in doc.inputs] == [
        ("report", "Tasks: 1/3 complete\nAlerts: 0 open")
    ]
    assert human.pending(doc) == ()


def test_mark_processed_closes_a_fence_left_open_before_the_blank_tail() -> None:
    text = "## [PENDING] T1\n```\n\n"
    after = human.mark_processed(text, "T1", processed_at="P", note="n")
    assert after == "## [PENDING] T1\n```\n```\n\n### Processed:\nP - n\n\n".replace(
        "[PENDING]", "[PROCESSED]"
    )
