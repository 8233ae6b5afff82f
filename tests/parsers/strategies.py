"""Hypothesis strategies shared by the Markdown parsers' property tests."""

from __future__ import annotations

from hypothesis import strategies as st


def plausible_files(line: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Files made of `line`s, with LF or CRLF endings and with or without a final newline."""

    @st.composite
    def build(draw: st.DrawFn) -> str:
        eol = draw(st.sampled_from(["\n", "\r\n"]))
        text = eol.join(draw(st.lists(line, max_size=25)))
        return text + draw(st.sampled_from(["", eol]))

    return build()
