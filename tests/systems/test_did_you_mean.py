"""A mistyped word of any game's notation is asked about, with a caret under it (issue 40,
item 5): the shared helper is ``astragal.notation.unknown``."""

from __future__ import annotations

import pytest

import astragal
from astragal import NotationError
from astragal.notation import did_you_mean

CASES = [
    # text, the word under the caret, what the message asks
    ("cofd: 5 9-agian", "9-agian", "did you mean '9-again'?"),
    ("cofd: 5 rot", "rot", "did you mean 'rote'?"),
    ("cofd: 5 rote willpwer", "willpwer", "did you mean 'willpower'?"),
    ("cofd: 5 vs 4 rot", "rot", "did you mean 'rote'?"),
    ("jc: d12 vs routien", "routien", "did you mean 'routine'?"),
    ("jc: d12 vs heroes olny", "heroes olny", "did you mean 'for heroes only'?"),
    ("od6: 3D vs moderat", "moderat", "did you mean 'moderate'?"),
    ("od6: 3D wlid", "wlid", "did you mean 'wild'?"),
    ("ds: d6+2 vs 6 clam", "clam", "did you mean 'calm'?"),
    ("at: 5d6 berserc", "berserc", "did you mean 'berserk'?"),
    ("flor(d6/2)", "flor", "did you mean 'floor'?"),
    ("d20cirt", "cirt", "did you mean 'crit'?"),
    ("1d20+5 advantge", "advantge", "did you mean 'advantage'?"),
]


@pytest.mark.parametrize("text,word,asks", CASES, ids=[c[0] for c in CASES])
def test_a_slip_is_asked_about_at_its_place(text: str, word: str, asks: str) -> None:
    with pytest.raises(NotationError) as caught:
        astragal.roll(text, seed=1)
    err = caught.value
    assert asks in err.message
    assert err.span is not None and text[err.span[0]:err.span[1]] == word
    carets = err.pretty().splitlines()[1]
    assert carets.index("^") == err.span[0] and carets.count("^") == len(word)


def test_no_name_is_guessed_for_a_word_far_from_every_one() -> None:
    with pytest.raises(NotationError) as caught:
        astragal.roll("jc: d12 vs zzz", seed=1)
    assert "did you mean" not in caught.value.message
    for name in ("trivial", "routine", "for-experts-only", "for-heroes-only", "for-legends-only"):
        assert name in caught.value.message  # the Difficulty names are listed
    assert did_you_mean("zzz", ("rote", "willpower")) is None
    with pytest.raises(NotationError, match="put \\+ or - between the numbers"):
        astragal.roll("cofd: 5 6", seed=1)


def test_the_forms_it_suggests_are_read() -> None:
    for _, _, asks in CASES:
        meant = asks.split("'")[1]
        assert did_you_mean(meant, [meant]) == meant
    assert astragal.roll("jc: d12 +1b vs for heroes only", seed=1).outcome
    assert astragal.roll("cofd: 5 9-again rote", seed=1).outcome


def test_advantage_then_a_target_reads_the_target() -> None:
    """1d20+5 adv >= 15 was refused asking for '>= 15', which is what was typed."""
    odds = astragal.odds("1d20+5 adv >= 15")
    assert odds.outcomes["success"] == pytest.approx(1 - (9 / 20) ** 2)
    assert str(astragal.parse("1d20+5 adv >= 15")) == "dice: 2d20kh1+5 >= 15"
