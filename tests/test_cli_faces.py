"""Typed-in faces on the command line (issue 40, item 5): a Fudge die's faces typed as it
shows them, -1, 0 and +1, which argparse used to take for an option."""

from __future__ import annotations

import json

import pytest

from astragal.cli import main


@pytest.mark.parametrize("faces", ["-1,0,1,1", "-1,0,+1,+1", "-,0,+,+", "1,2,3,3"])
def test_fudge_faces_as_they_show(faces: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roll", "4dF+2", "--faces", faces, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"]["total"] == 3  # -1 + 0 + 1 + 1, and 2


def test_values_and_positions_are_never_mixed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roll", "4dF", "--faces", "0,3,1,1"]) == 2
    assert "'3' is not a Fudge face" in capsys.readouterr().err
    assert main(["roll", "d6+dF", "--faces", "3,-1"]) == 2  # other dice: positions only
    assert "Fudge dice alone" in capsys.readouterr().err


def test_an_option_value_that_starts_with_a_minus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roll", "cofd: 3", "--faces", "-1"]) == 2
    err = capsys.readouterr().err
    assert "'-1' is not a face" in err and "expected one argument" not in err
