"""The games' tokenizer (``astragal.notation.tokenize``): words and the symbols ``& , ; ( )``,
each with its span in the whole text. Notation of words only is split with ``str.split``; any
symbol takes the regex. Both must cut the same words at the same places."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from astragal.notation import tokenize

# letters, digits, every kind of space the two readers could disagree on (ASCII controls that
# Python counts as spaces, Unicode spaces, and the zero-width ones it does not), symbols
PIECES = list("ab d12 :+-") + ["\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1f", "\x85", "\xa0",
                                "\u1680", "\u2003", "\u2028", "\u3000", "\u200b", "\ufeff"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=24).map("".join), st.integers(0, 4))
def test_words_only_split_as_the_regex_splits_them(text: str, start: int) -> None:
    # a trailing symbol sends the same words through the regex
    start = min(start, len(text))
    plain = tokenize(text, start).items
    with_symbol = tokenize(text + " &", start).items
    assert with_symbol[-1].text == "&"
    assert plain == with_symbol[:-1]


def test_spans_point_into_the_whole_text() -> None:
    text = "jc:  dmg\td12  vs soak 2d12 "
    got = [(t.text, t.start, t.end) for t in tokenize(text, 3).items]
    assert got == [("dmg", 5, 8), ("d12", 9, 12), ("vs", 14, 16), ("soak", 17, 21),
                   ("2d12", 22, 26)]
    assert all(text[s:e] == w for w, s, e in got)
