"""A game written on the kit plays in a web room: its examples offered, its dice drawn by the
labels and tones it declares."""

from __future__ import annotations

from typing import Any

import pytest

from tests.kit.examples import game as example

from .conftest import WEB_EXTRA, Room

pytest.importorskip("fastapi", reason=WEB_EXTRA)


def test_a_kit_game_in_a_web_room_draws_its_labels_and_tones(client: Any) -> None:
    example("onering")
    room = Room(client, system="tor", name="Bree")
    systems = {s["name"]: s for s in client.get("/api/systems").json()}
    assert systems["tor"]["examples"] == ["2 vs 14", "3 vs 16 weary"]
    marked = 0
    for _ in range(6):  # 78 dice (under the burst cap): no symbol nor 6 has a chance of 7e-7
        r = room.roll(room.gm, "12 vs 14")
        assert r.status_code == 201, r.text
        feat, *success = r.json()["roll"]["dice"]
        want = {11: ("Eye", "bad"), 12: ("Rune", "good")}.get(feat["face"], (None, None))
        assert (feat.get("label"), feat.get("tone")) == want
        for die in success:
            assert die.get("tone") == ("good" if die["face"] == 6 else None)
        marked += (want[0] is not None) + sum(d["face"] == 6 for d in success)
    assert marked


