"""The public pages and their JSON twins, from a real `arena serve` over a filled store: the
leaderboard is `arena leaderboard --json`'s object, games link to replays that open, bots have
pages, every response carries the security headers, and hostile URLs are refused."""

from __future__ import annotations

import json

import pytest
from conftest import Server, arena, fill_store

from arena.tournament.settings import RunSettings


def test_leaderboard_api_is_the_clis_object(public_server: tuple[Server, RunSettings]) -> None:
    server, settings = public_server
    with server.client() as c:
        got = c.get("/api/leaderboard")
    assert got.status_code == 200 and got.headers["content-type"].startswith("application/json")
    board = got.json()
    cli = json.loads(arena("leaderboard", str(server.results), "--tournament", board["tournament"], "--json").stdout)
    assert board == cli
    assert board["games"] == 40 and {r["bot"] for r in board["rows"]} == {f"instant{i}" for i in range(6)}
    assert all({"bot", "elo", "games"} <= set(r) for r in board["rows"])


def test_leaderboard_page_shows_every_bot_without_javascript(public_server: tuple[Server, RunSettings]) -> None:
    server, _ = public_server
    with server.client() as c:
        page = c.get("/")
        rows = c.get("/api/leaderboard").json()["rows"]
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for r in rows:
        assert f">{r['label']}</a>" in page.text
    assert 'name="viewport"' in page.text  # readable at phone width


def test_games_list_links_replays_that_open(public_server: tuple[Server, RunSettings]) -> None:
    server, _ = public_server
    with server.client() as c:
        games = c.get("/api/games", params={"limit": 5}).json()["games"]
        assert len(games) == 5 and all(g["status"] == "complete" for g in games)
        first = games[0]
        assert first["replay"] == f"/games/{first['id']}"
        view = c.get(first["replay_data"]).json()
        assert view["id"] == first["id"] and view["steps"][-1]["kind"] == "over"
        assert [s["bot"] for s in view["seats"]] == [s["bot"] for s in first["seats"]]
        page = c.get(first["replay"])
        assert page.status_code == 200 and f'data-game="{first["id"]}"' in page.text
        script = c.get(first["replay"] + "/data.js")
        assert script.status_code == 200 and script.text.startswith("window.ARENA_GAMES=")
        assert c.get("/games").status_code == 200


def test_bot_page_has_rating_head_to_head_and_games(public_server: tuple[Server, RunSettings]) -> None:
    server, _ = public_server
    with server.client() as c:
        row = c.get("/api/leaderboard").json()["rows"][0]
        bot = c.get(f"/api/bots/{row['key']}").json()
        assert bot["row"] == row
        assert bot["rating"] and bot["rating"][-1]["elo"] == pytest.approx(row["elo"], abs=0.2)
        assert {h["opponent"] for h in bot["head_to_head"]} <= {r["label"] for r in c.get("/api/leaderboard").json()["rows"]}
        assert bot["recent_games"] and all(any(s["key"] == row["key"] for s in g["seats"]) for g in bot["recent_games"])
        assert c.get(f"/api/bots/{row['bot']}").json()["key"] == row["key"]  # by name too
        page = c.get(f"/bots/{row['key']}")
        assert page.status_code == 200 and "<polyline" in page.text
        assert c.get("/api/bots/nobody").status_code == 404


def test_every_response_carries_the_security_headers(public_server: tuple[Server, RunSettings]) -> None:
    server, _ = public_server
    with server.client() as c:
        for path in ("/", "/api/leaderboard", "/static/site.css", "/nope", "/api/games?limit=0"):
            r = c.get(path)
            csp = r.headers.get("content-security-policy", "")
            assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp, path
            assert r.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "path",
    [
        "/static/..%2F..%2Fweb%2Fapp.py",
        "/static/../../etc/passwd",
        "/static/%2e%2e/%2e%2e/arena.db",
        "/games/..%2F..%2Farena.db",
        "/games/..%2Farena.db/data.js",
        "/api/games/..%2F..%2Farena.db/replay",
        "/games/%00",
        "/api/bots/%2e%2e",
    ],
)
def test_path_traversal_is_refused(public_server: tuple[Server, RunSettings], path: str) -> None:
    server, _ = public_server
    with server.client() as c:
        r = c.get(path)
    assert r.status_code == 404, (path, r.status_code, r.text[:200])
    assert "SQLite" not in r.text and "import" not in r.text


def test_bad_queries_are_400_naming_the_parameter(public_server: tuple[Server, RunSettings]) -> None:
    server, _ = public_server
    with server.client() as c:
        r = c.get("/api/games", params={"limit": "lots"})
        assert r.status_code == 400 and "limit" in r.json()["error"]
        r = c.get("/api/leaderboard", params={"tournament": "x" * 500})
        assert r.status_code == 400 and "tournament" in r.json()["error"]
        r = c.get("/api/leaderboard", params={"tournament": "no-such"})
        assert r.status_code == 404 and "no-such" in r.json()["error"]


def test_openapi_documents_the_api(public_server: tuple[Server, RunSettings]) -> None:
    server, _ = public_server
    with server.client() as c:
        doc = c.get("/api/schema/openapi.json").json()
    for path in ("/api/leaderboard", "/api/games", "/api/submissions", "/api/submissions/{submission_id}"):
        assert path in doc["paths"], path


def test_leaderboard_follows_new_games(tmp_path, public_server: tuple[Server, RunSettings]) -> None:  # noqa: ANN001
    """A game recorded while the server runs is in the next leaderboard (kept per change)."""
    server, settings = public_server
    with server.client() as c:
        before = c.get("/api/leaderboard").json()["games"]
        fill_store(settings, before, before + 4)
        import time

        give_up = time.monotonic() + 20
        while (now := c.get("/api/leaderboard").json()["games"]) == before and time.monotonic() < give_up:
            time.sleep(0.3)
    assert now == before + 4
