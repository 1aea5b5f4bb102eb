"""A competition's TOML file: defaults, every table, and a bad key or value refused naming the file and the key."""

from __future__ import annotations

import pytest

from arena.competition import CompetitionError, load_competition
from arena.bots.sandbox import Level


def test_defaults():
    c = load_competition(None)
    assert (c.players, c.variant, c.invite_code) == (4, "standard", None)
    assert c.upload_max_bytes > 0 and c.uploads_per_hour > 0 and c.challenge_max_games > 0
    assert c.run_settings(__import__("pathlib").Path("b"), __import__("pathlib").Path("r"), "ladder").players == 4


def test_a_full_file(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(
        'name = "Class of 2027"\ninvite_code = "sesame"\n'
        '[game]\nplayers = 3\nvariant = "standard"\nturn_ms = 300\nsandbox = "limits"\n'
        "[uploads]\nmax_bytes = 5000\nmax_files = 10\nmax_unpacked_bytes = 9000\nper_hour = 2\n"
        "[challenges]\nper_hour = 3\nmax_games = 4\nmax_queued = 5\n"
        "[ladder]\nseed = 7\ndeals = 2\njobs = 1\n"
    )
    c = load_competition(path)
    assert (c.name, c.invite_code, c.players, c.seed, c.deals, c.jobs) == ("Class of 2027", "sesame", 3, 7, 2, 1)
    assert (c.upload_max_bytes, c.upload_max_files, c.upload_max_unpacked_bytes, c.uploads_per_hour) == (5000, 10, 9000, 2)
    assert (c.challenges_per_hour, c.challenge_max_games, c.challenge_max_queued) == (3, 4, 5)
    assert c.time().turn_ms == 300
    assert c.sandbox().level is Level.LIMITS


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("colour = 1\n", "unknown key 'colour'"),
        ("[game]\nplayers = 9\n", "game.players"),
        ("[game]\nbots = 'x'\n", "unknown key game.bots"),
        ("[game]\nvariant = 'chess'\n", "game.variant"),
        ("[game]\nturn_ms = 'fast'\n", "turn_ms"),
        ("[game]\nsandbox = 'cage'\n", "game.sandbox"),
        ("[uploads]\nmax_bytes = 0\n", "uploads.max_bytes"),
        ("[uploads]\nmax_bytes = true\n", "uploads.max_bytes"),
        ("[uploads]\nsize = 1\n", "unknown key uploads.size"),
        ("[challenges]\nmax_games = -1\n", "challenges.max_games"),
        ("[ladder]\ndeals = 1000\n", "ladder.deals"),
        ("uploads = 3\n", "uploads must be a table"),
        ("invite_code = ''\n", "invite_code"),
        ("name = = \n", "not valid TOML"),
    ],
)
def test_a_bad_file_names_the_key(tmp_path, text, named):
    path = tmp_path / "competition.toml"
    path.write_text(text)
    with pytest.raises(CompetitionError) as caught:
        load_competition(path)
    assert named in str(caught.value) and "competition.toml" in str(caught.value)


def test_a_missing_file(tmp_path):
    with pytest.raises(CompetitionError, match="cannot read"):
        load_competition(tmp_path / "nope.toml")
