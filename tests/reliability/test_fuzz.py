"""Fuzz every system's notation: each input works within the limits or gets astragal's own error.

For every installed system (``astragal.system_names()``; one that does not import is skipped with
the reason) Hypothesis generates random text, random bytes, token soups of the system's words,
mutations of valid rolls (numbers made huge, zero or negative, tokens inserted, removed, repeated)
and deep nesting; a fixed list adds what public rollers have fallen to (``100000000d20``, ``d1!``,
``d6!>0``, re-roll storms, ten-thousand-deep parentheses, huge odds). Each input is parsed, its
canonical form parsed back, rolled (seeded) and its exact odds taken, each operation under a
timer and tracemalloc (``harness.exercise``). The tally, with the worst input for time and memory,
is printed at the end of the run and written to ``fuzz-summary.json`` in pytest's temporary folder.

The run is deterministic (``derandomize``) and bounded: each test stops exercising inputs once its
share of ``ASTRAGAL_FUZZ_SECONDS`` (default 45 s for the whole file) is spent. Set
``ASTRAGAL_FUZZ_SCALE`` to multiply the number of examples, ``ASTRAGAL_FUZZ_RANDOM=1`` to explore
new inputs each run.
"""

from __future__ import annotations

import os
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import astragal
from astragal import Limits

from . import corpus, harness

SYSTEMS, BROKEN = harness.installed_systems()
ALL = list(astragal.system_names())
SCALE = float(os.environ.get("ASTRAGAL_FUZZ_SCALE", "1"))
TOTAL_SECONDS = float(os.environ.get("ASTRAGAL_FUZZ_SECONDS", "45")) * SCALE
KINDS = 7  # Hypothesis tests per system below
HANG = 5.0  # one operation of one input: a web request's worth (the tools use 10 s)
_SHARE = TOTAL_SECONDS / (KINDS * max(1, len(ALL)))


def _fuzz_settings(n: int) -> settings:
    return settings(max_examples=max(1, int(n * SCALE)), deadline=None, database=None,
                    derandomize=os.environ.get("ASTRAGAL_FUZZ_RANDOM") != "1",
                    suppress_health_check=list(HealthCheck), print_blob=True)


class Budget:
    """A test's share of the time: once spent, new examples are not exercised (failing ones are,
    so that Hypothesis can replay and shrink them)."""

    def __init__(self) -> None:
        harness.warm_up()
        self.until = time.monotonic() + _SHARE
        self.failing: set[str] = set()

    def check(self, text: str, system: str, default_system: str | None = None) -> None:
        if time.monotonic() > self.until and text not in self.failing:
            return
        findings = harness.exercise(text, system, default_system=default_system, hang=HANG)
        if findings:
            self.failing.add(text)
        assert not findings, "\n".join(f.describe() for f in findings)


def _check(text: str, system: str, default_system: str | None = None) -> None:
    findings = harness.exercise(text, system, default_system=default_system, hang=HANG)
    assert not findings, "\n".join(f.describe() for f in findings)


def _system(name: str) -> tuple[str, ...]:
    if name in BROKEN:
        pytest.skip(f"{name} does not import yet: {BROKEN[name]}")
    return SYSTEMS[name]


def _prefix(prefixes: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.sampled_from([f"{p}:" for p in prefixes] + [f"{p.upper()}: " for p in prefixes])


# ------------------------------------------------------------------------------------------------
# Strategies


_NUMBER = re.compile(r"\d+")
_NUMBERS = st.one_of(st.integers(-3, 30), st.integers(0, 10**6), st.integers(-(10**30), 10**30),
                     st.sampled_from([2**31, 2**63, 2**64 + 1, 10**400]))


@st.composite
def mutated(draw: st.DrawFn, name: str) -> str:
    """A valid roll of the system, changed a few times in ways a fuzzer or a prankster would."""
    text = draw(st.sampled_from(corpus.SEEDS.get(name, [f"{name}: 1"])))
    words = corpus.WORDS.get(name, []) + corpus.GENERIC
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.integers(0, 6))
        if how == 0:  # a number made huge, zero or negative
            spots = list(_NUMBER.finditer(text))
            if spots:
                m = draw(st.sampled_from(spots))
                text = text[:m.start()] + str(draw(_NUMBERS)) + text[m.end():]
        elif how == 1:  # a word put in
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.sampled_from([" ", ""])) + draw(st.sampled_from(words)) + \
                draw(st.sampled_from([" ", ""])) + text[at:]
        elif how == 2:  # a slice taken out
            a = draw(st.integers(0, len(text)))
            b = draw(st.integers(a, min(len(text), a + 6)))
            text = text[:a] + text[b:]
        elif how == 3:  # a slice repeated
            a = draw(st.integers(0, len(text)))
            b = draw(st.integers(a, min(len(text), a + 8)))
            text = text[:b] + text[a:b] * draw(st.integers(2, 60)) + text[b:]
        elif how == 4:  # one character changed
            if text:
                at = draw(st.integers(0, len(text) - 1))
                text = text[:at] + draw(st.characters(max_codepoint=0x2FF)) + text[at + 1:]
        elif how == 5:  # two valid rolls run together
            text += " " + draw(st.sampled_from(corpus.SEEDS.get(name, [""]))).split(":", 1)[-1]
        else:  # a house-rule switch with a strange value
            key = draw(st.sampled_from(sorted(_defaults(name)) or ["x"]))
            value = draw(st.one_of(st.sampled_from(["", "0", "-1", "true", "maybe", "9" * 25]),
                                   st.text(max_size=6)))
            text += f" {key}={value}"
    return text


def _defaults(name: str) -> dict[str, object]:
    from astragal.systems import get_system

    return dict(get_system(name).defaults)


@st.composite
def renumbered(draw: st.DrawFn, name: str) -> str:
    """A valid roll with every number redrawn: mostly small, sometimes zero, huge or negative."""
    text = draw(st.sampled_from(corpus.SEEDS.get(name, [f"{name}: 1"])))
    small = st.one_of(*[st.integers(0, 12)] * 6, _NUMBERS)
    # Die sizes (the number after a d) stay: each game has only a few, and a wrong one is refused
    # at once; the counts, bonuses, Levels, targets and switches are what reach the engine.
    return _DIE_SIZE_OR_NUMBER.sub(lambda m: m.group() if m.group(1) else str(draw(small)), text)


_DIE_SIZE_OR_NUMBER = re.compile(r"(?<=[dD])(\d+)|\d+")
_INT = st.one_of(*[st.integers(0, 12)] * 8, st.integers(13, 10**3),
                 st.sampled_from([0, 1, 10**4, 10**6, 10**15, 10**16, 10**40]))
_CMP = st.sampled_from(["", ">", "<", ">=", "<=", "="])


@st.composite
def _die(draw: st.DrawFn) -> str:
    count = draw(st.one_of(st.just(""), _INT.map(str)))
    sides = draw(st.one_of(_INT.map(str), st.sampled_from(["%", "F"])))
    mods = "".join(draw(st.lists(st.builds(
        lambda m, c, n: m + (c + str(n) if c or m in ("kh", "kl", "k", "dh", "dl") else ""),
        st.sampled_from(["kh", "kl", "k", "dh", "dl", "r", "rr", "ro", "!", "!!", "!p", "x",
                         "xo", "f", "dbl", "s", "sa", "sd", ">=", "<"]), _CMP, _INT),
        max_size=3)))
    return f"{count}d{sides}{mods}"


def dice_expression() -> st.SearchStrategy[str]:
    """Grammar-shaped general notation: numbers, dice with modifiers, groups, calls, operators."""
    atom = st.one_of(_INT.map(str), _die())

    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.builds(lambda a, op, b: f"{a}{op}{b}", inner,
                      st.sampled_from(["+", "-", "*", "/", "%", " + ", " >= "]), inner),
            inner.map(lambda a: f"({a})"), inner.map(lambda a: f"-{a}"),
            st.builds(lambda xs, m: "{" + ",".join(xs) + "}" + m, st.lists(inner, min_size=1,
                      max_size=3), st.sampled_from(["", "kh1", "kl1", ">=3", "dl1"])),
            st.builds(lambda f, xs: f"{f}({', '.join(xs)})",
                      st.sampled_from(["max", "min", "abs", "floor", "ceil", "round"]),
                      st.lists(inner, min_size=1, max_size=3)),
            inner.map(lambda a: f"{a} [label]"))

    expr = st.recursive(atom, grow, max_leaves=8)
    return st.builds(lambda rep, e, c: f"dice: {rep}{e}{c}",
                     st.sampled_from(["", "", "", "", "", "3x ", "0x ", "1000x "]), expr,
                     st.sampled_from(["", "", " # note"]))


def token_soup(name: str) -> st.SearchStrategy[str]:
    words = corpus.WORDS.get(name, []) + corpus.GENERIC
    return st.builds(lambda parts, sep: sep.join(parts),
                     st.lists(st.one_of(st.sampled_from(words), _NUMBERS.map(str)), max_size=14),
                     st.sampled_from([" ", "", "+", " vs ", ","]))


@st.composite
def nested(draw: st.DrawFn, name: str) -> str:
    """Deep nesting and long repetition, up to and past the notation length limit."""
    depth = draw(st.integers(1, 600))
    inner = draw(st.sampled_from(corpus.WORDS.get(name, ["1"]) + ["1", "d6"]))
    shape = draw(st.integers(0, 3))
    if shape == 0:
        body = "(" * depth + inner + ")" * depth
    elif shape == 1:
        body = "(" * depth + inner
    elif shape == 2:
        body = " ".join([inner] * depth)
    else:
        body = draw(st.sampled_from(["-", "+", "{", "[", "!", "vs "])) * depth + inner
    return body


# ------------------------------------------------------------------------------------------------
# The tests: six kinds of input for every system


@pytest.mark.parametrize("name", ALL)
def test_random_text_gets_a_result_or_our_error(name: str) -> None:
    prefixes = _system(name)
    budget = Budget()

    @_fuzz_settings(160)
    @given(prefix=_prefix(prefixes), body=st.text(max_size=40))
    def run(prefix: str, body: str) -> None:
        budget.check(prefix + body, name)

    run()


@pytest.mark.parametrize("name", ALL)
def test_random_bytes_get_a_result_or_our_error(name: str) -> None:
    prefixes = _system(name)
    budget = Budget()

    @_fuzz_settings(120)
    @given(prefix=_prefix(prefixes), raw=st.binary(max_size=48),
           codec=st.sampled_from(["utf-8", "latin-1"]))
    def run(prefix: str, raw: bytes, codec: str) -> None:
        budget.check(prefix + raw.decode(codec, errors="replace"), name)

    run()


@pytest.mark.parametrize("name", ALL)
def test_token_soup_gets_a_result_or_our_error(name: str) -> None:
    prefixes = _system(name)
    budget = Budget()

    @_fuzz_settings(250)
    @given(prefix=_prefix(prefixes), body=token_soup(name))
    def run(prefix: str, body: str) -> None:
        budget.check(f"{prefix} {body}", name)

    run()


@pytest.mark.parametrize("name", ALL)
def test_mutated_rolls_get_a_result_or_our_error(name: str) -> None:
    _system(name)
    budget = Budget()

    @_fuzz_settings(400)
    @given(text=mutated(name))
    def run(text: str) -> None:
        budget.check(text, name)

    run()


@pytest.mark.parametrize("name", ALL)
def test_valid_rolls_with_any_numbers_get_a_result_or_our_error(name: str) -> None:
    """Grammar-shaped: every number of a valid roll redrawn (the general notation: generated
    from its grammar), so most inputs get past the parser to the roller and the odds."""
    _system(name)
    budget = Budget()
    strategy = dice_expression() if name == "dice" else renumbered(name)

    @_fuzz_settings(300)
    @given(text=strategy)
    def run(text: str) -> None:
        budget.check(text, name)

    run()


@pytest.mark.parametrize("name", ALL)
def test_rolls_without_a_prefix_in_a_room_of_the_system(name: str) -> None:
    """The web table rolls unprefixed text under the room's system (``default_system``)."""
    _system(name)
    budget = Budget()

    @_fuzz_settings(200)
    @given(text=mutated(name))
    def run(text: str) -> None:
        budget.check(text.split(":", 1)[-1], name, default_system=name)

    run()


@pytest.mark.parametrize("name", ALL)
def test_deep_nesting_and_repetition_get_a_result_or_our_error(name: str) -> None:
    prefixes = _system(name)
    budget = Budget()

    @_fuzz_settings(60)
    @given(prefix=_prefix(prefixes), body=nested(name))
    def run(prefix: str, body: str) -> None:
        budget.check(f"{prefix} {body}", name)

    run()


def _nasty_system(text: str) -> str:
    head = text.split(":", 1)[0].strip().lower() if ":" in text else ""
    for name, prefixes in SYSTEMS.items():
        if head in prefixes:
            return name
    return head or "?"


@pytest.mark.parametrize("text", corpus.NASTY, ids=[t[:40] for t in corpus.NASTY])
def test_what_public_rollers_fell_to_gets_a_result_or_our_error(text: str) -> None:
    """``100000000d20``, ``d1!``, ``d6!>0``, re-roll storms, deep nesting, huge odds, empty input."""
    name = _nasty_system(text)
    if name in BROKEN:
        pytest.skip(f"{name} does not import yet: {BROKEN[name]}")
    _check(text, name)


def test_every_registered_system_is_fuzzed_or_skipped_with_a_reason() -> None:
    assert set(SYSTEMS) | set(BROKEN) == set(ALL)
    assert all(BROKEN.values())


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("shape", ["(", "{", "-", "max("])
def test_ten_thousand_deep_nesting_past_a_raised_length_limit(name: str, shape: str) -> None:
    """With the length limit raised to 100 000 characters, 10 000-deep nesting still gets a clear
    error (a depth limit), never a RecursionError or a hang."""
    prefixes = _system(name)
    closing = {"(": ")", "{": "}", "-": "", "max(": ")"}[shape]
    text = f"{prefixes[0]}: " + shape * 10_000 + "d6" + closing * 10_000
    findings = harness.exercise(text, name, limits=Limits(max_notation_length=100_000), hang=HANG,
                                odds=True)
    assert not findings, "\n".join(f.describe() for f in findings)
