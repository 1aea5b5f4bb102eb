"""Teams and their tokens: made, listed, revoked, authenticated (the token shown once, only its hash stored)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from arena.cli.app import app
from arena.competition import CompetitionError, Forbidden, NotFound, Teams, load_competition


def test_a_token_authenticates_its_team_only(tmp_path):
    teams = Teams(tmp_path)
    a, token_a = teams.add("alpha")
    b, token_b = teams.add("beta", admin=True)
    assert teams.authenticate(token_a) == a
    assert teams.authenticate(token_b) == b and b.is_admin
    assert teams.authenticate(token_a[:-1] + ("x" if token_a[-1] != "x" else "y")) is None
    assert teams.authenticate(token_a[:8] + "A" * 35) is None  # the right prefix, the wrong rest
    assert teams.authenticate("") is None
    assert teams.authenticate("z" * 10_000) is None


def test_only_the_hash_is_stored(tmp_path):
    _, token = Teams(tmp_path).add("alpha")
    conn = sqlite3.connect(tmp_path / "arena.db")
    dumped = "\n".join(conn.iterdump())
    assert token not in dumped
    assert token[:8] in dumped  # the lookup prefix
    assert "$argon2id$" in dumped


def test_a_revoked_team_no_longer_authenticates(tmp_path):
    teams = Teams(tmp_path)
    _, token = teams.add("alpha")
    assert teams.revoke("alpha").revoked
    assert teams.authenticate(token) is None
    with pytest.raises(NotFound, match="no team named 'gamma'"):
        teams.revoke("gamma")


@pytest.mark.parametrize("name", ["", "../x", "a/b", "x" * 33, ".hidden", "a b", "é"])
def test_bad_team_names_are_refused(tmp_path, name):
    with pytest.raises(CompetitionError, match="team name"):
        Teams(tmp_path).add(name)


def test_a_name_taken_in_another_case_is_refused(tmp_path):
    Teams(tmp_path).add("alpha")
    with pytest.raises(CompetitionError, match="taken"):
        Teams(tmp_path).add("ALPHA")


def test_self_registration_needs_the_invite_code(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('invite_code = "sesame"\n')
    teams = Teams(tmp_path, load_competition(config))
    with pytest.raises(Forbidden, match="wrong invite code"):
        teams.register("alpha", "open")
    team, token = teams.register("alpha", "sesame")
    assert not team.is_admin and teams.authenticate(token) == team
    with pytest.raises(Forbidden, match="no self-registration"):
        Teams(tmp_path, load_competition(None)).register("beta", "sesame")


def test_team_commands(tmp_path):
    runner = CliRunner()
    res = str(tmp_path / "r")
    added = runner.invoke(app, ["team", "add", "alpha", "--results", res, "--json"])
    assert added.exit_code == 0, added.output
    doc = json.loads(added.stdout)
    assert doc["team"] == "alpha" and len(doc["token"]) >= 40
    assert Teams(tmp_path / "r").authenticate(doc["token"]).name == "alpha"
    plain = runner.invoke(app, ["team", "add", "boss", "--admin", "--results", res])
    assert plain.exit_code == 0 and "admin team boss added" in plain.stdout
    listed = runner.invoke(app, ["team", "list", "--results", res, "--json"])
    names = [(t["name"], t["is_admin"]) for t in json.loads(listed.stdout)["teams"]]
    assert names == [("alpha", False), ("boss", True)]
    assert doc["token"] not in listed.stdout
    revoked = runner.invoke(app, ["team", "revoke", "alpha", "--results", res])
    assert revoked.exit_code == 0 and "revoked" in revoked.stdout
    again = runner.invoke(app, ["team", "add", "alpha", "--results", res])
    assert again.exit_code == 1 and "taken" in str(again.exception or again.output)
