"""The general notation's lexicon: its bounds and the patterns the parser reads with."""

from __future__ import annotations

import re

MAX_DEPTH = 40  # parentheses, unary signs, groups and calls nested inside each other
MAX_SIDES = 1_000_000
MAX_COUNT = 999_999  # dice in one term: rolling is bounded by Limits.max_dice, odds by their work
MAX_DIGITS = 15
MAX_CUSTOM = 1000  # faces on a custom die
TAIL = 1e-15  # the probability below which an endless tail may be cut (explosions, re-rolls)

# Characters a keyboard or a word processor puts where ASCII was meant (same length, so spans
# stay right): the minus sign, en and em dashes, the multiplication sign.
_NORMALISE = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-", "\u00d7": "*"})

_NUMBER = re.compile(r"\d+(?:\.\d+)?", re.ASCII)
_DICE = re.compile(r"(\d*)[dD](\d+|%|[fF])", re.ASCII)
_COMPUTED_SIDES = re.compile(r"(\d*)[dD](?:\d|%|[fF]|\(|\{)", re.ASCII)
_WORD = re.compile(r"[A-Za-z_]+", re.ASCII)
_CMP = re.compile(r">=|<=|==|=|>|<", re.ASCII)
_TOTAL_CMP = re.compile(r"!=|<>|>=|<=|==|=|>|<", re.ASCII)
# each way of writing a comparison of totals, and the operator it means (the parser and
# the plain reader both read them through this)
_TOTAL_OPS = {"!=": "!=", "<>": "!=", ">=": ">=", "<=": "<=", "==": "=", "=": "=",
              ">": ">", "<": "<"}
_REPEAT = re.compile(r"\s*(\d+)\s*[xX](?=[\s(]|\d*[dD])", re.ASCII)
_ENDS_DICE = re.compile(r"(?:\d*[dD](?:\d+|%|[fF])\S*|\}\S*)$", re.ASCII)
_ENDS_NUMBER = re.compile(r"(?<![\w.)\]}])\d+$", re.ASCII)
# a chat command in front of a roll, which says where the player comes from (COMMANDS in
# rules.py), and AnyDice's ``output``
_COMMAND = re.compile(r"\s*(/(?:roll|r|gmroll|gmr|gr|selfroll|sr|blindroll|broll|br|publicroll|pr)"
                      r"|!(?:roll|r)|output)(?=\s|$)", re.ASCII | re.IGNORECASE)
_ADVANTAGE = re.compile(r"(?:(?:with|at)\s+)?(adv|dis|advantage|disadvantage)\b",
                        re.ASCII | re.IGNORECASE)
# Dice Maiden's modifiers, written after the dice with a space (``4d10 t8``, ``10d6 e6 k8 +4``),
# and the same in words (``4d6 drop lowest``); they end where a word would
_SPACED = re.compile(r"(?:(ie|ir|kl|e|d|k|r|t|f|b)(\d*)|(drop|keep)\s+(?:the\s+)?(lowest|highest)"
                     r"(?:\s+(\d+))?)(?=[\s+\-*/;#)\]},]|$)", re.ASCII | re.IGNORECASE)
# words that mean dice in some tool: in a trailing description they would be silently ignored
_DICE_WORDS = {"adv": "adv", "advantage": "adv", "dis": "dis", "disadvantage": "dis",
               "drop": "drop", "keep": "keep", "lowest": "drop", "highest": "keep",
               "reroll": "reroll", "re-roll": "reroll", "rerolls": "reroll",
               "explode": "explode", "explodes": "explode", "exploding": "explode"}
_DESCRIPTION = re.compile(r"[A-Za-z][A-Za-z'-]*", re.ASCII)
_COMPARE_WORDS = {"vs", "versus", "dc", "ac", "tn", "target", "against"}
_DIE_WORD = re.compile(r"[dD](?:\d+|%|[fF])", re.ASCII)
_DIGITS = re.compile(r"\d+", re.ASCII)
_SIGNED = re.compile(r"-?\d+", re.ASCII)
_ALNUM = re.compile(r"\w+", re.ASCII)
_LOOSE_WORD = re.compile(r"[A-Za-z!]+\d*", re.ASCII)
_MODIFIER_WORD = re.compile(r"(kh|kl|dh|dl|k|d|r|ro|rr|f|dbl|s|sa|sd|x|xo|!|!!|!p)\d*", re.ASCII)
_COUNT_ON = {"success": "counts a success", "failure": "counts a failure",
             "crit": "is marked critical", "fumble": "is marked a fumble",
             "double": "counts twice", "explode": "explodes", "reroll": "is re-rolled"}
_ANYDICE = re.compile(r"\[\s*(highest|lowest)\s+(\d+)\s+of\s+(\d*d\d+)\s*\]",
                      re.ASCII | re.IGNORECASE)  # AnyDice's [highest 3 of 4d6]
