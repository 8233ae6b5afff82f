"""Hypothesis fuzzing of the signal parser: garbage (any text, any bytes an agent prints, tag
soup) never raises, and only well-formed promise lines count: a known word in a promise tag,
alone on its line (a `<reason>`/`<urgency>` may follow), outside code, comments and quotes.
Text made inert (`wild.agents.signal_tags.inert`, what prompts quote with) never signals."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from wild.agents.signal_tags import inert
from wild.agents.signals import PROMISE_WORDS, parse_signals

SOUP = [
    "<promise>",
    "</promise>",
    "<PROMISE>",
    "<resolve_alert>",
    "</resolve_alert>",
    "<event_output>",
    "</event_output>",
    "<reason>",
    "</reason>",
    "<urgency>",
    "</urgency>",
    *PROMISE_WORDS,
    '{"status": "ok"}',
    '{"id": "a"}',
    "```",
    "~~~",
    "`",
    "<!--",
    "-->",
    "> ",
    "\n",
    "\r\n",
    "\r",
    "\u2028",
    " ",
    "\t",
    "\x00",
    "\ufffd",
]
soup = st.lists(st.one_of(st.sampled_from(SOUP), st.text(max_size=5)), max_size=40).map("".join)
# What an agent prints, decoded as the runner decodes its log: invalid UTF-8 included.
printed_bytes = st.binary(max_size=300).map(lambda data: data.decode("utf-8", "replace"))


@settings(max_examples=200, deadline=None)
@given(st.one_of(soup, printed_bytes, st.text()))
def test_garbage_never_raises(text: str) -> None:
    signals = parse_signals(text)
    assert set(signals.promises) <= set(PROMISE_WORDS)
    assert len(set(signals.promises)) == len(signals.promises)


# Prose that opens nothing and holds no tag: no `<`, `>`, backtick, tilde or dash.
prose = st.text(
    alphabet=st.characters(
        codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp"), exclude_characters="<>`~-"
    ),
    min_size=1,
    max_size=20,
).filter(lambda text: text.strip() != "")
words = st.sampled_from(PROMISE_WORDS)
blank = st.sampled_from(["", " ", "  ", "\t"])
cased = st.sampled_from([str.upper, str.lower, str.title])


@st.composite
def promise_tag(draw: st.DrawFn, word: str) -> str:
    return f"<promise>{draw(blank)}{draw(cased)(word)}{draw(blank)}</promise>"


@st.composite
def segment(draw: st.DrawFn) -> tuple[str, str | None]:
    """One or more lines and the promise they signal (None: they signal nothing)."""
    kind = draw(
        st.sampled_from(
            [
                "signal",
                "signal with reason",
                "mention",
                "fenced",
                "tilde fenced",
                "quoted",
                "comment",
                "inline code",
                "unknown word",
                "prose",
                "blank",
            ]
        )
    )
    word = draw(words)
    tag = draw(promise_tag(word))
    pad = draw(blank)
    lines = {
        "signal": f"{pad}{tag}{draw(blank)}",
        "signal with reason": f"{pad}{tag}<reason>{draw(prose)}</reason><urgency>high</urgency>",
        "mention": f"{draw(prose)} {tag}",
        "fenced": f"```\n{tag}\n```",
        "tilde fenced": f"{pad}~~~~ text\n{tag}\n~~~~",
        "quoted": f"{pad}> {tag}",
        "comment": f"<!--\n{tag}\n-->",
        "inline code": f"`{tag}`",
        "unknown word": f"<promise>{word}_NOT</promise>",
        "prose": draw(prose),
        "blank": pad,
    }
    signals = kind.startswith("signal")
    return lines[kind], word if signals else None


@settings(max_examples=200, deadline=None)
@given(st.lists(segment(), max_size=12), st.sampled_from(["\n", "\r\n"]))
def test_only_well_formed_promise_lines_count(
    segments: list[tuple[str, str | None]], eol: str
) -> None:
    text = eol.join(lines.replace("\n", eol) for lines, _ in segments)
    expected: list[str] = []
    for _, word in segments:
        if word is not None and word not in expected:
            expected.append(word)
    assert list(parse_signals(text).promises) == expected


@settings(max_examples=200, deadline=None)
@given(st.one_of(soup, printed_bytes))
def test_inert_text_never_signals(text: str) -> None:
    signals = parse_signals(inert(text))
    assert (signals.promises, signals.resolutions, signals.event_output) == ((), (), None)
    assert inert(text).replace("&lt;", "<") == text.replace("&lt;", "<")  # only `<` changes
