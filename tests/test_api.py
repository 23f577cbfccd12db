"""The public surface: what `astragal/__init__.py` exports, and the engine's generic records."""

from __future__ import annotations

import pytest

import astragal
from astragal import Distribution
from astragal._rng import parse_faces


def test_public_api_is_pinned() -> None:
    assert sorted(astragal.__all__) == [
        "AstragalError", "Die", "Distribution", "FacesError", "InputError", "LimitError",
        "Limits", "NotationError", "Odds", "OptionError", "Parsed", "Roll", "Rule",
        "ScriptedSource", "SeededSource", "Source", "SystemSource", "odds", "parse", "roll",
        "rulebook", "system_names",
    ]


def test_every_input_error_is_a_value_error_under_one_root() -> None:
    for cls in (astragal.NotationError, astragal.FacesError, astragal.OptionError,
                astragal.LimitError):
        assert issubclass(cls, astragal.InputError)
        assert issubclass(cls, ValueError)
        assert issubclass(cls, astragal.AstragalError)


def test_seeded_rolls_repeat_and_os_rolls_vary() -> None:
    a = astragal.roll("jc: 5d12", seed=3)
    b = astragal.roll("jc: 5d12", seed=3)
    assert [d.face for d in a.dice] == [d.face for d in b.dice]
    faces = {tuple(d.face for d in astragal.roll("jc: 5d12").dice) for _ in range(20)}
    assert len(faces) > 1


def test_roll_record_is_immutable_and_keeps_rolling_order() -> None:
    r = astragal.roll("jc: d12 d10 d8 fav vs d6", faces="4,6,1,7 / 2")
    assert [(d.size, d.faces) for d in r.dice] == [(12, (4,)), (10, (6,)), (8, (1, 7)), (6, (2,))]
    with pytest.raises(AttributeError):
        r.outcome = "failure"  # type: ignore[misc]


def test_faces_text_forms() -> None:
    assert parse_faces("7,2 / 3,4") == [[7, 2], [3, 4]]
    assert parse_faces("7 2/3") == [[7, 2], [3]]
    assert astragal.roll("jc: d12 vs d12", faces=[[5], [3]]).outcome == "success"
    assert astragal.roll("jc: d12", faces=[5]).result["actor_score"] == 5
    with pytest.raises(astragal.OptionError, match="either a seed or faces"):
        astragal.roll("jc: d12", faces="5", seed=1)


def test_distribution_numbers_and_categories() -> None:
    d = Distribution.from_mapping({3: 0.5, 1: 0.25, 2: 0.25})
    assert d.outcomes() == (1, 2, 3)
    assert d.mean() == pytest.approx(2.25)
    assert d.at_least(2) == pytest.approx(0.75) and d.at_most(1) == pytest.approx(0.25)
    assert d.std() == pytest.approx((0.5 * 0.75**2 + 0.25 * 1.25**2 + 0.25 * 0.25**2) ** 0.5)
    assert d.map(lambda x: x % 2).as_dict() == {0: 0.25, 1: 0.75}
    c = Distribution.from_mapping({"tie": 0.5, "win": 0.5}, order=["win", "tie"])
    assert c.outcomes() == ("win", "tie") and c["tie"] == 0.5 and c["lose"] == 0.0
    with pytest.raises(TypeError):
        c.mean()


def test_not_text_and_empty_text() -> None:
    with pytest.raises(astragal.NotationError, match="must be text"):
        astragal.roll(12)  # type: ignore[arg-type]
    with pytest.raises(astragal.NotationError, match="empty"):
        astragal.roll("   ")


def test_dice_notation_in_another_games_room_says_how_to_roll_it() -> None:
    # a Jadeclaw room (the default system) given the general notation: the error says the
    # prefix that rolls it, and that prefix does; text no system reads gets no such hint
    with pytest.raises(astragal.NotationError, match=r"put 'dice:' before it\)$") as exc:
        astragal.roll("4d6kh3", default_system="jadeclaw")
    assert exc.value.span == (0, 6)
    assert astragal.roll("dice: 4d6kh3", default_system="jadeclaw", seed=1).outcome == "total"
    # no hint where it would mislead: text the dice notation does not read whole, a number
    # (a Level, a die code), a mistake inside the game's own notation
    for text, system in (("4d6kh3 vs", "jadeclaw"), ("7", "jadeclaw"), ("3", "d6system"),
                         ("2+2", "d6system"), ("d12 + 1", "jadeclaw")):
        with pytest.raises(astragal.NotationError) as other:
            astragal.roll(text, default_system=system)
        assert "dice:" not in other.value.message, text
    with pytest.raises(astragal.NotationError) as same:  # the dice system's own errors: no hint
        astragal.roll("4d6+")
    assert "dice:" not in same.value.message


def test_unknown_option_name_via_api() -> None:
    with pytest.raises(astragal.OptionError, match="not a Jadeclaw option"):
        astragal.roll("jc: d12", options={"colour": "red"})
    with pytest.raises(astragal.OptionError, match="true or false"):
        astragal.roll("jc: d12", options={"favored_auto": "perhaps"})


def test_docstring_examples() -> None:
    import doctest
    import importlib

    for name in ("astragal", "astragal.odds", "astragal.systems.jadeclaw.notation"):
        module = importlib.import_module(name)
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0


def test_tails_equal_at_least_and_at_most_to_the_last_bit() -> None:
    dist = astragal.odds("jc: dmg 3d12 d8 vs soak 2d10").distribution
    for k, p, ge, le in dist.tails():
        assert p == dist[k] and ge == dist.at_least(k) and le == dist.at_most(k)


@pytest.mark.parametrize("size", [2, 6, 20, 100, 1000])
def test_os_source_is_uniform(size: int) -> None:
    """The default source (OS randomness, buffered, rejection-sampled) gives every face evenly."""
    from tests.stats import assert_matches

    source = astragal.SystemSource()
    n = max(20_000, 30 * size)
    assert_matches((source.face(size) for _ in range(n)), {f: 1 / size for f in range(1, size + 1)})
