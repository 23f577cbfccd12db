"""The step records: written as NamedTuples, made as plain tuples; their JSON form."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from astragal.dice import steps as S


def test_a_step_is_a_tuple_with_named_fields_and_defaults() -> None:
    r = S.Rolled("actor", (0, 1), (((10, 3),), ((2,), (8,))), (1, 1), read="C2")
    assert r.side == "actor" and r.read == "C2" and r.marks == () and r.reroll == ""
    assert r._fields == ("side", "dice", "runs", "values", "marks", "read", "again", "reroll",
                         "dropped", "drop")
    assert tuple(r) == ("actor", (0, 1), (((10, 3),), ((2,), (8,))), (1, 1), (), "C2", "", "",
                        (), "")
    assert repr(S.Round(2)) == "Round(n=2)"
    assert S.Verdict(side="", outcome="win", values=(2, 1), rule="C10") == S.Verdict(
        "", "win", (2, 1), "C10", "")
    for again in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r)):
        assert again == r and type(again) is S.Rolled
    with pytest.raises(TypeError, match="missing"):
        S.Count("actor", "total", 3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        S.Round(1, 2)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        S.Round(1, extra=2)  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        r.side = "opposition"  # type: ignore[misc]


def test_json_leaves_empty_fields_out_and_makes_facts_an_object() -> None:
    steps: list[S.Step] = [S.Begin("cofd: 3 target 4", "extended", (("target", 4), ("contest", False))),
                           S.Side("pool", 3, (("again", None), ("rote", True))),
                           S.Rolled("pool", (0,), (((10, 8),),), (2,), ("dramatic_failure",),
                                    "C2", "C5"),
                           S.Verdict("", "success", (4,), "C11"),
                           S.Tie((3, 3), "again", "C-X7", "contested_tie=reroll"),
                           S.Check("J35", False, (("hits", 0),)),
                           S.Pair("damage", 0, 4, "soak", -1, 1, 1, "J24", "J26")]
    out = json.loads(json.dumps([S.to_json(s) for s in steps]))
    assert out == [
        {"step": "begin", "text": "cofd: 3 target 4", "kind": "extended",
         "facts": {"target": 4, "contest": False}},
        {"step": "side", "side": "pool", "dice": 3, "facts": {"again": None, "rote": True}},
        {"step": "rolled", "side": "pool", "dice": [0], "runs": [[[10, 8]]], "values": [2],
         "marks": ["dramatic_failure"], "read": "C2", "again": "C5"},
        {"step": "verdict", "outcome": "success", "values": [4], "rule": "C11"},
        {"step": "tie", "values": [3, 3], "goes": "again", "rule": "C-X7",
         "setting": "contested_tie=reroll"},
        {"step": "check", "rule": "J35", "holds": False, "facts": {"hits": 0}},  # False is kept
        {"step": "pair", "side": "damage", "die": 0, "face": 4, "against": "soak", "other": -1,
         "other_face": 1, "value": 1, "rule": "J24", "filler": "J26"}]
