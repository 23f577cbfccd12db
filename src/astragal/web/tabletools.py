"""The table's own tools, apart from HTTP: examples per game, the headline of a roll, sheets checked
in the room's game, revealing a hidden roll, the fight tracker and the turn order.

The fight tracker runs the attack table's own fight commands (``systems/attack/fight.py``) on a
state kept in the room's log: every change is a log entry (kind ``fight``) holding the new state,
so it is stored, chained and sent live like a roll. The turn order (kind ``turns``) works the
same way for any game.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import astragal
from astragal import InputError
from astragal.dice import steps as S
from astragal.notation import split_prefix
from astragal.render import outcome_words
from astragal.systems import get_system

from .powers import commands
from .sheet import _DICE_VALUE, Sheet, SheetError, expand

__all__ = ["KINDS", "Command", "check_sheet_rolls", "dice_text", "fight_command", "headline",
           "outcome_kind", "parse_command", "turn_owner", "turns_command"]

# The colour of a verdict: good, bad, neutral, or critical (an exceptional success).
KINDS: dict[str, str] = {
    **dict.fromkeys(("success", "hit", "win", "minimal", "solid", "good", "superior"), "good"),
    **dict.fromkeys(("overwhelming_success", "exceptional_success", "critical", "spectacular",
                     "incredible"), "critical"),
    **dict.fromkeys(("failure", "overwhelming_failure", "botch", "dramatic_failure", "miss",
                     "whiff", "blocked", "lose", "complication"), "bad"),
}


def outcome_kind(outcome: str | None, system: str = "") -> str:
    """good, bad, critical or neutral (a tie, a total, no Botch): as the game declares it (a kit
    game's ``tones``), else as the built-in games' outcomes read."""
    if system:
        declared = getattr(get_system(system), "outcome_tones", None)
        if declared:
            return str(declared.get(outcome or "", "neutral"))
    return KINDS.get(outcome or "", "neutral")


# A rule's ID in a transcript line, "(D10)" or "(S2: higher than #)": the table shows the words
_RULE_ID = re.compile(r"\s*\((?:[A-Z]+-)?[A-Z]+\d+[a-z]?(?::\s*([^)]*))?\)")


def headline(outcome: str, transcript: Sequence[str], steps: Sequence[object] = ()) -> str:
    """The verdict in the game's words: the last transcript line that names the outcome (the D6
    System's success level, not the bonus line after it), else the last line; a roll that only
    counts successes says how many ("3 successes", not "Total: 3"). Rule IDs are left to the
    transcript: "(S2: higher than #)" reads "(higher than #)"."""
    counts = [s for s in steps if isinstance(s, S.Count)]
    line = (transcript[-1] if transcript else outcome_words(outcome)).strip()
    if (outcome == "total" and len(counts) == 1 and counts[0].what == "successes"
            and line == f"Total: {counts[0].value}"):
        n = counts[0].value
        return f"{n} success" if n == 1 else f"{n} successes"
    words = outcome_words(outcome).lower()
    for at in reversed(transcript):
        if words and words in at.lower():
            line = at.strip()
            break
    return _RULE_ID.sub(lambda m: f" ({m.group(1)})" if m.group(1) else "", line)


def dice_text(dice: Sequence[Mapping[str, Any]]) -> str:
    """A roll's dice from their record, each as it counts: ``d6:6+1=7`` (a compounding die),
    ``d6:1→4`` (re-rolled: the last face stands), ``d10:8=1`` (a success), ``d6:5=4 added``
    (a penetrating explosion's die), ``d20:3 dropped``; a die's worth after ``=`` wherever the
    rules scored it, so the counted values add up to the total."""
    out = []
    for d in dice:
        faces = [str(f) for f in d.get("faces") or ([d["face"]] if d.get("face") else [])]
        joined = "+" if d.get("joined") in ("compounded", "exploded", "penetrated") else "→"
        shown = d.get("label") or joined.join(faces) or "–"
        worth = f"={d['scored']}" if d.get("scored") is not None else ""
        marks = [w for w, on in (("added", bool(d.get("added"))),
                                 ("dropped", d.get("kept", True) is False),
                                 ("critical", bool(d.get("crit"))),
                                 ("fumble", bool(d.get("fumble")))) if on]
        out.append(f"d{d['size']}:{shown}{worth}" + "".join(f" {m}" for m in marks))
    return ", ".join(out)


# ------------------------------------------------------------------------------------------------
# Sheets: checked in the room's game when saved, not first at roll time


def _line_error(exc: InputError, name: str, value: str, where: str) -> SheetError:
    """The error of a value, with its span moved onto the line ``name = value``."""
    line = f"{name} = {value}"
    shift = len(name) + 3
    span = (exc.span[0] + shift, exc.span[1] + shift) if exc.span else (shift, len(line))
    err = SheetError(f"{where} {name}: {exc.message}", line, span)
    return err


def check_sheet_rolls(sheet: Sheet, system: str | None, aliases: Mapping[str, str]) -> None:
    """Raise ``SheetError`` (with the line and a span) for a stat whose dice the room's game
    cannot roll (``Speed = d7`` in Jadeclaw) or a macro that does not read (a macro calling a
    macro, an unknown word, a bad die)."""
    macros = {k.lower() for k, _ in sheet.macros}
    for name, value in sheet.stats:
        if _DICE_VALUE.match(value):
            # a stat is dice of the room's game: read with its prefix, so that an error names
            # that game's dice (no hint to roll it in another notation)
            # (a game whose name is no prefix word: read in its room, as a roll would be)
            head = f"{system}: " if system and split_prefix(f"{system}: ")[0] else ""
            try:
                astragal.parse(head + value, default_system=system)
            except InputError as exc:
                span = (exc.span[0] - len(head), exc.span[1] - len(head)) \
                    if exc.span and exc.span[0] >= len(head) else None
                raise _line_error(InputError(exc.message, value, span), name, value,
                                  "character:") from None
    for name, text in sheet.macros:
        body = text.split(":", 1)[1] if re.match(r"\s*[A-Za-z][\w-]*\s*:", text) else text
        if body.strip().lower() in macros:
            start = text.lower().index(body.strip().lower())
            raise SheetError(f"macros: {name}: a macro cannot roll another macro "
                             f"('{body.strip()}'): write out its roll instead",
                             f"{name} = {text}", (len(name) + 3 + start,
                                                 len(name) + 3 + start + len(body.strip())))
        exp = expand(text, Sheet(sheet.stats, ()), system, aliases)
        try:
            astragal.parse(exp.text, default_system=system)
        except InputError as exc:
            span = exp.typed_span(exc.span)
            raise _line_error(InputError(exc.message, text, span), name, text,
                              "macros:") from None


# ------------------------------------------------------------------------------------------------
# Fight tracker (attack table) and turn order (any game)

_USAGE = {"fight": "new, add, set, remove, option, attack, pass, heal, spend, undo",
          "turns": "add NAME [initiative], remove NAME, next, clear"}


@dataclass(frozen=True, slots=True)
class Command:
    """A fight or turn-order command as read: its command word (one of the tool's, in lower
    case) and the words after it. Powers are decided on this, never on the text."""

    tool: str
    name: str
    args: tuple[str, ...]
    text: str


def parse_command(tool: str, text: str) -> Command:
    """Read a command of ``tool`` (``fight``, ``turns``): the first word, quoted or not, in any
    case, must be one of the tool's commands (``powers.commands``), else an ``InputError``."""
    words = _words(text)
    if not words:
        raise InputError(f"an empty command: {_USAGE[tool]}", text, (0, max(1, len(text))))
    name = words[0].lower()
    if name not in commands(tool):
        raise InputError(f"unknown {'fight' if tool == 'fight' else 'turn'} command "
                         f"'{words[0]}': commands are {_USAGE[tool]}", text,
                         (0, max(1, len(words[0]))))
    return Command(tool, name, tuple(words[1:]), text)


def new_fight() -> dict[str, Any]:
    from astragal.systems.attack import fight

    return fight.new_fight()[0]


def fight_command(state: Mapping[str, Any] | None, command: Command,
                  source: astragal.Source) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """Run one fight command (``attack Wu Orc berserk``) on a copy of ``state`` with the attack
    table's own rules; returns the message, the new state and the roll's JSON (for an attack)."""
    from astragal.systems.attack import fight

    text = command.text
    if command.name == "new":
        if command.args:
            raise fight.FightError("'new' here takes nothing: it clears the fight", text,
                                   (0, len(text)))
        return "A new fight: add the fighters", new_fight(), None
    work = copy.deepcopy(dict(state)) if state else new_fight()
    if command.name == "undo":
        return _undo(work, command), work, None
    args = fight.Args(list(command.args))
    if args.faces is not None or args.seed is not None:
        raise fight.FightError("the table rolls its own dice: no faces or seeds here", text,
                               (0, len(text)))
    before = {k: copy.deepcopy(work[k]) for k in UNDONE}
    work.pop("undo", None)  # any change ends the last attack's undo: it would undo this too
    work["log"] = []  # the room's log is the fight's log
    args.source = lambda: source  # type: ignore[method-assign]
    message, as_json = fight.apply(work, command.name, args)
    if as_json is not None:  # logged as a roll is, without its steps (see room.py)
        as_json.pop("steps", None)
    if command.name == "attack":
        work["undo"] = {"attack": text, **before}
    work["log"] = []
    return message, work, as_json


UNDONE = ("combatants", "turn")  # what an attack changes, and its undo puts back


def _undo(work: dict[str, Any], command: Command) -> str:
    """``undo``: the fight as it was before the last attack, while no other fight command came
    after it. The attack's entry, its dice and the undo stay in the log for everyone to see."""
    from astragal.systems.attack.combatants import check_combatant
    from astragal.systems.attack.fight import FightError

    text = command.text
    if command.args:
        raise FightError("'undo' takes nothing: it undoes the last attack", text, (0, len(text)))
    last = work.pop("undo", None)
    if not isinstance(last, dict) or not all(k in last for k in UNDONE):
        raise FightError("nothing to undo: undo takes back the last attack, until the next "
                         "fight command", text, (0, len(text)))
    work["combatants"] = [check_combatant(c, i) for i, c in enumerate(last["combatants"])]
    work["turn"] = last["turn"]
    return f"Undone: {last.get('attack', 'the last attack')} (its dice stay in the log)"


MAX_TURNS = 60


_INITIATIVE = re.compile(r"[+-]?[0-9]{1,4}")
_WORD = re.compile(r'"([^"]*)"|([^\s"]+)|(")')


def _words(text: str) -> list[str]:
    """A fight or turn-order command's words; a name with spaces is written in double quotes
    (``"Big Troll"``), as the page writes it; an apostrophe is a letter (``O'Brien``)."""
    words = []
    for m in _WORD.finditer(text):
        if m.group(3):
            raise InputError("a quote is not closed: write a name with spaces in double quotes, "
                             'such as "Big Troll"', text, (m.start(), len(text)))
        words.append(" ".join(m.group(1).split()) if m.group(1) is not None else m.group(2))
    return words


def turn_owner(state: Mapping[str, Any] | None, command: Command) -> str | None:
    """Who owns what a turn-order command acts on (the member who added the name removed, or
    the current name for ``next``); None for nobody's (older entries kept no owner)."""
    order = (state or {}).get("order", [])
    if command.name == "remove" and len(command.args) == 1:
        named = [x for x in order if x["name"].lower() == command.args[0].lower()]
        return named[0].get("by") if named else None
    if command.name == "next" and order:
        current = int((state or {}).get("current", 0))
        return order[min(current, len(order) - 1)].get("by")  # type: ignore[no-any-return]
    return None


def _ends_this_turn(named: Sequence[str], name: str | None, round_no: int, text: str) -> None:
    """``next ROUND NAME`` ends NAME's turn of that round, ``next start`` starts round 1 (a
    page's press names the turn it ends, so two presses at once advance one turn); a plain
    ``next`` ends whichever turn it is."""
    if not named:
        return
    now = f"Round {round_no}: {name}'s turn" if name else "the first round has not started"
    if named[0].lower() == "start" and len(named) == 1:
        if name is None:
            return
        raise InputError(f"the turn order has already started ({now})", text, (0, len(text)))
    if len(named) != 2 or not named[0].isdigit():
        raise InputError("next, next start, or next ROUND NAME (the turn it ends)", text,
                         (0, len(text)))
    if name is None or int(named[0]) != round_no or named[1].lower() != name.lower():
        raise InputError(f"Round {named[0]}: {named[1]}'s turn has already ended ({now})", text,
                         (0, len(text)))


def turns_command(state: Mapping[str, Any] | None, command: Command,
                  by: str = "") -> tuple[str, dict[str, Any]]:
    """The turn order: ``add NAME [initiative]``, ``remove NAME``, ``next`` (``next ROUND NAME``:
    only if it is that turn), ``clear``; a name
    with spaces in double quotes (``add "Big Troll" 12``); a name added keeps ``by`` (the
    member who added it: ``powers.OWNER``)."""
    order: list[dict[str, Any]] = [dict(x) for x in (state or {}).get("order", [])]
    current = int((state or {}).get("current", 0))
    round_no = int((state or {}).get("round", 1))
    started = bool((state or {}).get("started", False))  # the first 'next' starts round 1
    text, words = command.text, [command.name, *command.args]
    if command.name == "add":
        if len(words) not in (2, 3) or not words[1] or re.fullmatch(r"[+-]?\d+", words[1]):
            raise InputError('add NAME [initiative], such as \'add Wu 14\' (a name with spaces '
                             'in double quotes: add "Big Troll" 12)', text, (0, len(text)))
        name = words[1][:40]
        init = 0
        if len(words) == 3:
            if not _INITIATIVE.fullmatch(words[2]):
                raise InputError(f"the initiative is a whole number from -9999 to 9999, not "
                                 f"'{words[2]}'", text, (len(text) - len(words[2]), len(text)))
            init = int(words[2])
        if any(x["name"].lower() == name.lower() for x in order):
            raise InputError(f"{name} is already in the turn order", text, (4, 4 + len(name)))
        if len(order) >= MAX_TURNS:
            raise InputError(f"the turn order holds at most {MAX_TURNS}", text, (0, len(text)))
        who = order[current]["name"] if order else None
        order.append({"name": name, "init": init, **({"by": by} if by else {})})
        order.sort(key=lambda x: -x["init"])  # stable: ties keep the order they were added in
        current = next(i for i, x in enumerate(order) if x["name"] == who) \
            if who and started else 0
        message = f"{name} joins the turn order ({init})"
    elif command.name == "remove":
        if len(words) != 2:
            raise InputError('remove NAME (a name with spaces in double quotes)', text,
                             (0, len(text)))
        at = next((i for i, x in enumerate(order) if x["name"].lower() == words[1].lower()),
                  None)
        if at is None:
            raise InputError(f"{words[1]} is not in the turn order", text, (7, len(text)))
        gone = order.pop(at)
        if at < current:
            current -= 1
        elif current >= len(order):
            current, round_no = 0, round_no + (1 if started and order else 0)
        message = f"{gone['name']} leaves the turn order"
    elif command.name == "next":
        if not order:
            raise InputError("nobody is in the turn order yet: add NAME [initiative]", text,
                             (0, len(text)))
        _ends_this_turn(words[1:], order[current]["name"] if started else None, round_no, text)
        if not started:
            started, current = True, 0
        else:
            current += 1
            if current >= len(order):
                current, round_no = 0, round_no + 1
        message = f"Round {round_no}: {order[current]['name']}'s turn"
    else:  # clear (parse_command read one of the four)
        order, current, round_no, started = [], 0, 1, False
        message = "The turn order is cleared"
    return message, {"order": order, "current": current, "round": round_no, "started": started}
