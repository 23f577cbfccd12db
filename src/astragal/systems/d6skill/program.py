"""d6 + skill as a program of the dice algebra, rolled and computed exactly.

One d6 of a kind is ``Marked(Chain(6, explodes), mark, check=botch_checked)``: a 6 explodes while
6s keep coming (S9, capped by max_explosions), a first 1 calls a check die (S7) that adds nothing
and whose 1 marks the die a Botch (S8); a first 6 marks it a Critical. The roller samples the
program and maps the verdicts (S1, S2, S3, S5, S6) over the values; the odds take the program's
exact law and map the same verdicts over it. Re-rolled ties (S3) condition the round's law.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..._errors import LimitError
from ..._limits import Limits
from ..._records import Record
from ..._rng import Source
from ...dice import Roll, Tray, TrayHands
from ...dice import steps as S
from ...dice.algebra import Chain, Marked, Reading
from ...dice.sampler import sample
from ...render import d6skill as words
from . import rules as R
from .notation import Check, Side
from .rules import SIDES, DieRules, Rules

__all__ = ["D6Roll", "die_program", "read_d6", "roll"]

_DIE_EPS = 1e-18  # where one die's Critical tail is cut: three dice lose far less than 1e-15


class D6Roll(Record):
    """One d6 as the rules read it: the faces it used, what it adds, Botch and Critical."""

    faces: tuple[int, ...]
    total: int
    botch: bool = False
    critical: bool = False

    @property
    def explosions(self) -> int:
        """How many times a 6 was rolled again (S9)."""
        return len(self.faces) - 1 if self.critical else 0


# --------------------------------------------------------------------------------------------
# The program: the rules read at each face


def _face(position: int, face: int) -> int:
    """S9: every roll of a Critical chain is added; S8: a checked 1 counts 1."""
    return face


class _Explodes(Reading):
    """S9 at each face of the chain (settings: does this kind explode)."""

    def __call__(self, position: int, face: int) -> bool:
        return R.explodes(face, *self.settings)


class _Checks(Reading):
    """S7 on the first face (settings: is this kind checked)."""

    def __call__(self, first: int) -> bool:
        return R.botch_checked(first, *self.settings)


class _Mark(Reading):
    """``botch`` (S7, S8), ``critical`` (a first 6 that explodes, S9) or None."""

    def __call__(self, first: int, checked: int | None) -> str | None:
        if R.botched(checked):
            return "botch"
        return "critical" if R.explodes(first, *self.settings) else None


@lru_cache(maxsize=64)
def die_program(dr: DieRules) -> Marked:
    """One d6 read by ``dr``, as a program of the dice algebra."""
    chain = Chain(SIDES, _Explodes(dr.explodes), _face, "Critical re-roll", dr.max_explosions)
    return Marked(chain, _Mark(dr.explodes and dr.max_explosions != 0), _Checks(dr.botches),
                  "botch check")


def _read(record: Any) -> D6Roll:
    faces = record.runs[0] + ((record.checked,) if record.checked is not None else ())
    return D6Roll(faces, record.value, record.mark == "botch", record.mark == "critical")


# --------------------------------------------------------------------------------------------
# Rolling


_PLAIN = DieRules()  # the seed's reading: 6s explode, a first 1 is checked, no cap


class _Faces:
    def __init__(self, faces: tuple[int, ...]) -> None:
        self.faces, self.used = faces, 0

    def _next(self) -> int:
        if self.used >= len(self.faces):
            raise IndexError
        self.used += 1
        return self.faces[self.used - 1]

    def new(self, size: int) -> int:
        self._next()
        return 0

    def again(self, die: int, note: str) -> int:
        return self._next()

    def face(self, die: int) -> int:
        return self.faces[0]


def read_d6(faces: tuple[int, ...] | list[int], rules: DieRules = _PLAIN) -> D6Roll | None:
    """Read one d6 from its faces in rolling order (S7–S11); None while a face is still needed.

    >>> read_d6([6, 6, 3])
    D6Roll(faces=(6, 6, 3), total=15, botch=False, critical=True)
    >>> read_d6([1, 6])
    D6Roll(faces=(1, 6), total=1, botch=False, critical=False)
    """
    hands = _Faces(tuple(faces))
    try:
        record = sample(die_program(rules), hands, Limits(max_explosions=10**6)).dice[0]
    except IndexError:
        return None
    return _read(record) if hands.used == len(faces) else None


def roll_die(tray: Tray, dr: DieRules, name: str, group: str, stream: int, limits: Limits,
             text: str, steps: list[S.Step]) -> D6Roll:
    """Roll one d6 by its program; the botch check's die is kept on the tray, not added (S8).
    Each face is a die of the tray (a Critical chain shown die by die); the step names them."""
    first = len(tray)
    hands = TrayHands(tray, group, stream, each_face_a_die=True)
    try:
        record = sample(die_program(dr), hands, limits).dice[0]
    except LimitError as exc:
        raise LimitError(exc.message, text, (0, len(text))) from None
    d = _read(record)
    chain = record.runs[0]
    marks: list[str] = []
    if d.critical:
        capped = (dr.max_explosions is not None and d.explosions == dr.max_explosions
                  and chain[-1] == R.CRITICAL_FACE)
        marks = ["critical"] + ["explosion"] * (len(chain) - 1)
        if capped:
            marks[-1] = "capped"
    for k, index in enumerate(range(first, first + len(chain))):  # S9: a Critical's chain
        tray.facts(index, added="exploded" if k else "",
                   tone="crit" if d.critical and not k else "")
    dropped: tuple[int, ...] = ()
    if record.checked is not None:
        tray.facts(hands.last, added="check", scored=0, tone="fumble" if d.botch else "")
        tray.drop(hands.last, "botch check: Botch" if d.botch else "botch check (ignored, S8)")
        marks = [""] * len(chain) + ["botch" if d.botch else "botch_check"]
        dropped = (hands.last,)
    faces = chain + ((record.checked,) if record.checked is not None else ())
    steps.append(S.Rolled(name, tuple(range(first, len(tray))), tuple(((f,),) for f in faces),
                          (*chain, *((0,) if dropped else ())), tuple(marks), "S1",
                          "S9" if len(chain) > 1 else "", "S7" if dropped else "", dropped,
                          "S8" if dropped else ""))
    return d


def _side_step(name: str, side: Side, dr: DieRules) -> S.Side:
    return S.Side(name, 1, (("kind", side.kind), ("title", R.KIND_TITLES[side.kind]),
                            ("bonus", side.bonus), ("explodes", dr.explodes),
                            ("botches", dr.botches), ("max_explosions", dr.max_explosions)))


def _side_json(d: D6Roll, side: Side) -> dict[str, Any]:
    return {"kind": side.kind, "faces": list(d.faces), "die": d.total, "bonus": side.bonus,
            "result": R.result(d.total, side.bonus), "botch": d.botch, "critical": d.critical}


def effective_rules(spec: Check, options: Mapping[str, Any]) -> Rules:
    """The switches for a spec: defaults, then the caller's options, then the notation's."""
    return R.make_rules({**options, **dict(spec.options)})


def _stressful(spec: Check, rules: Rules) -> bool:
    return rules.stressful if spec.situation is None else spec.situation == "stressful"


def _done(text: str, outcome: str, result: dict[str, Any], tray: Tray, spec: Check,
          steps: list[S.Step]) -> Roll:
    return Roll("d6skill", text, outcome, result, tray.freeze(), words.transcript(steps), spec,
                tuple(steps))


def roll(spec: Check, source: Source, options: Mapping[str, Any], limits: Limits,
         text: str) -> Roll:
    """Roll a d6 + skill spec with faces from ``source``; the verdict comes from the rules, the
    steps are put into words by ``render.d6skill``."""
    rules = effective_rules(spec, options)
    tray = Tray(source, limits)
    dmg = "rolled" if isinstance(spec.dmg, Side) else spec.dmg
    steps: list[S.Step] = [S.Begin(str(spec), "", (("attack", spec.is_attack), ("dmg", dmg)))]
    actor = spec.actor
    if spec.difficulty is not None and spec.may_skip_roll:
        if R.automatic_success(actor.bonus, spec.difficulty, _stressful(spec, rules)):
            steps.append(S.Verdict("", "success", (actor.bonus, spec.difficulty), "S6"))
            return _done(text, "success",
                         {"kind": actor.kind, "bonus": actor.bonus, "difficulty": spec.difficulty,
                          "auto_success": True, "success": True, "botch": False,
                          "critical": False, "result": None}, tray, spec, steps)
        if actor.bonus > spec.difficulty:
            steps.append(S.Verdict("", "roll", (actor.bonus, spec.difficulty), "S6",
                                   "stressful"))
    if spec.opposition is not None:
        return _roll_opposed(spec, tray, rules, limits, text, steps)
    dr = rules.die(actor.kind)
    steps.append(_side_step("actor", actor, dr))
    d = roll_die(tray, dr, "actor", "actor", 0, limits, text, steps)
    result = _side_json(d, actor)
    res = result["result"]
    steps.append(S.Count("actor", "result", res, "S1"))
    if spec.difficulty is None:
        outcome = "botch" if d.botch else "no_botch"
        steps.append(S.Verdict("actor", outcome, (res,), "S8"))
        return _done(text, outcome, result, tray, spec, steps)
    verdict = R.check_outcome(res, d.botch, spec.difficulty)
    if spec.is_attack:  # ATK against a fixed DEF: S2 (higher than DEF) and S5
        hit = verdict == "success"
        margin = res - spec.difficulty
        result.update({"atk_result": res, "def_result": spec.difficulty, "hit": hit,
                       "margin": margin})
        outcome = {"botch": "botch", "failure": "miss", "success": "hit"}[verdict]
        steps.append(S.Verdict("", outcome, (res, spec.difficulty, margin), "S2"))
        _roll_damage(spec, tray, rules, limits, text, steps, result, hit, margin)
        return _done(text, outcome, result, tray, spec, steps)
    result.update({"difficulty": spec.difficulty, "auto_success": False,
                   "success": verdict == "success"})
    steps.append(S.Verdict("", verdict, (res, spec.difficulty), "S2"))
    return _done(text, verdict, result, tray, spec, steps)


def _roll_damage(spec: Check, tray: Tray, rules: Rules, limits: Limits, text: str,
                 steps: list[S.Step], result: dict[str, Any], hit: bool, margin: int) -> None:
    weapon: int | None = None
    if hit and isinstance(spec.dmg, Side):  # S9, S-A3: a rolled DMG, rolled by the attacker
        dr = rules.die("dmg")
        steps.append(_side_step("dmg", spec.dmg, dr))
        d = roll_die(tray, dr, "dmg", "dmg", 0, limits, text, steps)
        result["dmg_roll"] = _side_json(d, spec.dmg)
        weapon = result["dmg_roll"]["result"]
        steps.append(S.Count("dmg", "result", weapon or 0, "S1"))
    elif isinstance(spec.dmg, int):
        weapon = spec.dmg
    dmg = R.damage((weapon or 0) + margin) if hit else 0
    result.update({"dmg_bonus": margin if hit else 0, "weapon_dmg": weapon, "dmg": dmg})
    if hit:
        steps.append(S.Count("", "dmg", dmg, "S5"))


def _roll_opposed(spec: Check, tray: Tray, rules: Rules, limits: Limits, text: str,
                  steps: list[S.Step]) -> Roll:
    actor, opp = spec.actor, spec.opposition
    assert opp is not None
    ra, rb = rules.die(actor.kind), rules.die(opp.kind)
    steps += [_side_step("actor", actor, ra), _side_step("opposition", opp, rb)]
    setting = f"opposed_tie={rules.opposed_tie}"
    rounds: list[dict[str, Any]] = []
    while True:
        if len(rounds) >= limits.max_rolls:  # §6: a safety cap on re-rolled ties
            raise LimitError(f"{limits.max_rolls} tied rounds in a row: the re-roll limit is "
                             f"{limits.max_rolls}", text, (0, len(text)))
        group = "" if not rounds else f" round {len(rounds) + 1}"
        steps.append(S.Round(len(rounds) + 1))
        a = roll_die(tray, ra, "actor", f"actor{group}", 0, limits, text, steps)
        res_a = R.result(a.total, actor.bonus)
        steps.append(S.Count("actor", "result", res_a, "S1"))
        b = roll_die(tray, rb, "opposition", f"opposition{group}", 1, limits, text, steps)
        res_b = R.result(b.total, opp.bonus)
        steps.append(S.Count("opposition", "result", res_b, "S1"))
        verdict, margin = R.opposed_verdict(res_a - res_b, a.botch, b.botch, rules)
        rounds.append({"actor": _side_json(a, actor), "opposition": _side_json(b, opp),
                       "margin": res_a - res_b, "outcome": verdict})
        if verdict != "reroll":
            break
        steps.append(S.Tie((res_a, res_b), "again", "S3", setting))
    result: dict[str, Any] = {"rounds": rounds, "actor_result": res_a, "opposition_result": res_b,
                              "margin": margin, "botch": a.botch, "opposition_botch": b.botch,
                              "critical": a.critical, "success": verdict == "success"}
    tied = res_a == res_b and verdict in ("tie", "success", "failure")
    if spec.is_attack:
        outcome = {"botch": "botch", "failure": "miss", "success": "hit", "tie": "tie"}[verdict]
        result.update({"atk_result": res_a, "def_result": res_b, "hit": outcome == "hit"})
        steps.append(S.Verdict("", outcome, (res_a, res_b, margin), "S3",
                               setting if tied else ""))
        _roll_damage(spec, tray, rules, limits, text, steps, result, outcome == "hit", margin)
    else:
        outcome = verdict
        steps.append(S.Verdict("", outcome, (res_a, res_b, margin), "S3",
                               setting if tied else ""))
    return _done(text, outcome, result, tray, spec, steps)
