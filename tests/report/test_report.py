"""The report: what its pages hold equals the store and the replays, it is whole and
self-contained (no external URL anywhere), and a bad replay marks its game, not the site."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
from report_helpers import TESTBOT, make_tournament
from typer.testing import CliRunner

from arena.cli.app import app
from arena.engine.cards import DECK_COUNTS, KINDS, MAKI_SYMBOLS, NIGIRI_VALUE
from arena.game.replay import read_replay
from arena.report.figures import report_data
from arena.report.site import ASSETS, MANIFEST, PAGES, ReportError, replay_page, write_report
from arena.report.viewer import (
    CARD_LOOK,
    GameDataError,
    _luminance,
    card_table,
    game_view,
    round_breakdown,
)
from arena.store.opening import open_store
from arena.tournament.standings import standings

# The one absolute URL the pages may hold: the SVG namespace, which names, never fetches.
SVG_NAMESPACE = "http://www.w3.org/2000/svg"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tournament(tmp_path_factory.mktemp("tournament"))


@pytest.fixture(scope="module")
def site(results: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "report"
    with open_store(results, create=False) as store:
        summary = write_report(store, out=out)
    assert summary.problems == []
    assert summary.index == out / "index.html"
    return out


def script_data(path: Path) -> object:
    """The JSON a data script assigns (``window.X=...;`` or ``(...)[id]=...;``)."""
    text = path.read_text(encoding="utf-8").strip()
    assert text.endswith(";")
    return json.loads(text[text.index("=", text.index("]") if text.startswith("(") else 0) + 1 : -1])


def test_the_card_table_is_the_engines() -> None:
    table = card_table()
    assert [k["name"] for k in table["kinds"]] == list(KINDS)
    assert [k["count"] for k in table["kinds"]] == list(DECK_COUNTS)
    assert [k["maki"] for k in table["kinds"]] == list(MAKI_SYMBOLS)
    assert [k["nigiri"] for k in table["kinds"]] == list(NIGIRI_VALUE)
    assert set(CARD_LOOK) == set(KINDS)
    for kind in table["kinds"]:
        # Every label is readable on its card: WCAG contrast of at least 4.5.
        a, b = _luminance(kind["colour"]), _luminance(kind["ink"])
        assert (max(a, b) + 0.05) / (min(a, b) + 0.05) >= 4.5, kind


def test_round_points_by_kind_use_the_engines_scoring() -> None:
    counts = [0] * len(KINDS)
    counts[KINDS.index("tempura")] = 3  # one pair: 5
    counts[KINDS.index("sashimi")] = 3  # one set: 10
    counts[KINDS.index("dumpling")] = 6  # capped at five: 15
    assert round_breakdown(counts, nigiri=9, maki=3) == {"maki": 3, "tempura": 5, "sashimi": 10, "dumpling": 15, "nigiri": 9}


def test_the_site_has_every_page_and_no_external_url(site: Path) -> None:
    for name in PAGES:
        assert (site / name).is_file(), name
    for name in ASSETS:
        assert (site / "assets" / name).is_file(), name
    assert (site / "cards.js").is_file() and (site / "data.js").is_file()
    assert json.loads((site / MANIFEST).read_text())["games"] == 12
    files = [p for p in site.rglob("*") if p.is_file()]
    assert len(list((site / "games").glob("*.js"))) == 12
    for path in files:
        text = path.read_text(encoding="utf-8")
        urls = set(re.findall(r"(?:https?:|ftp:)?//[\w.-]+\.[a-z]{2,}[^\s\"'<>)]*", text)) - {SVG_NAMESPACE}
        assert not urls, (path, urls)
        assert "@import" not in text and "fetch(" not in text and "XMLHttpRequest" not in text, path
    for page in PAGES:
        html = (site / page).read_text(encoding="utf-8")
        refs = re.findall(r'(?:src|href)="([^"#]+)"', html)
        assert refs, page
        for ref in refs:
            assert (site / ref).is_file(), (page, ref)  # every script and style is in the site


def test_the_data_equals_the_store(results: Path, site: Path) -> None:
    data = script_data(site / "data.js")
    with open_store(results, create=False) as store:
        st = standings(store, h2h=True)
        games = store.games(st.tournament, status=None)
    assert data["tournament"]["id"] == st.tournament
    assert data["leaderboard"]["rows"] == st.rows  # exactly what `arena leaderboard --json` prints
    assert data["leaderboard"]["games"] == st.games == 12
    assert data["h2h"] == st.h2h
    keys = [b["key"] for b in data["bots"]]
    assert [g["id"] for g in data["games"]] == [g.id for g in games]
    for entry, game in zip(data["games"], games, strict=True):
        assert entry["seed"] == str(game.seed)
        assert entry["seats"] == [[keys.index(s.bot.key), s.points, s.rank, s.puddings] for s in game.seats]
        assert entry.get("faults", []) == [[s.seat, k, c] for s in game.seats for k, c in sorted(s.faults.items())]
    # The faulty bot's illegal answer at round 1 turn 2 of each of its games, with the turn to jump to.
    faulty = keys.index(next(r["key"] for r in st.rows if r["bot"] == "faulty"))
    with_faults = [g for g in data["games"] if "faults" in g]
    assert len(with_faults) == 9 and all(g["seats"][g["faults"][0][0]][0] == faulty for g in with_faults)
    assert all(g["fault_turns"] == [[g["faults"][0][0], "illegal", 1, 2]] for g in with_faults)
    # The timeline's last point is the leaderboard's fit; every game is a point (12 <= 100).
    timeline = data["timeline"]
    assert timeline["games"] == list(range(1, 13))
    for row in st.rows:
        assert timeline["elo"][row["key"]][-1] == pytest.approx(row["elo"], abs=0.11)
    # Per bot: the seats add up to its games, its opponents are every other bot.
    for row in st.rows:
        detail = data["details"][row["key"]]
        assert sum(s["games"] for s in detail["seats"]) == row["games"]
        assert sum(s["wins"] for s in detail["seats"]) == pytest.approx(row["wins"])
        assert set(detail["opponents"]) == {r["key"] for r in st.rows} - {row["key"]}
        for other, o in detail["opponents"].items():
            assert [o["wins"], o["draws"], o["losses"]] == st.h2h[row["key"]][other]
    assert "bots_dir" not in data["tournament"]["config"]  # no local paths in the pages


def test_an_anchored_leaderboard_moves_the_whole_timeline(results: Path) -> None:
    with open_store(results, create=False) as store:
        random_key = next(r["key"] for r in standings(store).rows if r["bot"] == "random")
        st = standings(store, anchor=(random_key, 1000.0))
        data = report_data(store, table=st)
    random_row = next(r for r in data["leaderboard"]["rows"] if r["bot"] == "random")
    assert random_row["elo"] == 1000.0
    for row in st.rows:
        assert data["timeline"]["elo"][row["key"]][-1] == pytest.approx(row["elo"], abs=0.11)


def test_each_game_file_equals_its_replay(results: Path, site: Path) -> None:
    with open_store(results, create=False) as store:
        games = store.games()
    for game in games:
        view = script_data(site / "games" / f"{game.id}.js")
        replay = read_replay(results / game.replay)
        assert view["id"] == game.id and [s["bot"] for s in view["seats"]] == [s.bot for s in replay.seats]
        assert [KINDS[k] for k in view["cards"]] == replay.cards
        turns = [s for s in view["steps"] if s["kind"] == "turn"]
        assert [(s["round"], s["turn"], s["hands"]) for s in turns] == [(t.round, t.turn, t.hands) for t in replay.turns]
        ends = [s for s in view["steps"] if s["kind"] == "end"]
        assert [e["points"] for e in ends] == [r.points for r in replay.rounds]
        for end in ends:
            assert [sum(b.values()) for b in end["breakdown"]] == end["points"]
        assert view["steps"][-1]["kind"] == "over"
        assert view["steps"][-1]["scores"] == replay.result.scores == [s.points for s in game.seats]
        assert len(view["steps"]) == len(replay.turns) + 3 + 1
        # Every card that entered a tableau, turn by turn, is what the round summary lists.
        for number, summary in enumerate(replay.rounds, 1):
            entered = [[] for _ in replay.seats]
            for step in view["steps"]:
                if step.get("round") == number:
                    for seat, cards in enumerate(step["plays"]):
                        entered[seat] += [replay.cards[c] for c in cards]
            assert entered == summary.tableaus
        faults = [(f.seat, f.round, f.turn, f.kind) for f in replay.faults]
        assert [(f["seat"], f["round"], f["turn"], f["kind"]) for f in view["faults"]] == faults
        for f in replay.faults:
            step = next(s for s in turns if (s["round"], s["turn"]) == (f.round, f.turn))
            assert step["acts"][f.seat]["status"] == f.kind


def test_a_missing_or_broken_replay_marks_its_game_and_the_rest_builds(results: Path, tmp_path: Path) -> None:
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    with open_store(copy, create=False) as store:
        games = store.games()
    missing, corrupt, tampered = games[0], games[1], games[2]
    (copy / missing.replay).unlink()
    (copy / corrupt.replay).write_bytes(b"\x1f\x8b not really gzip")
    raw = json.loads(gzip.decompress((copy / tampered.replay).read_bytes()))
    end = next(e for e in raw["events"] if e["type"] == "round_end")
    end["points"][0] += 1  # the recorded points no longer match the cards
    (copy / tampered.replay).write_bytes(gzip.compress(json.dumps(raw).encode()))
    result = CliRunner().invoke(app, ["report", str(copy), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["games"] == 12 and len(summary["problems"]) == 3
    problems = "\n".join(summary["problems"])
    assert str(copy / missing.replay) in problems and str(copy / corrupt.replay) in problems
    assert f"round 1: seat 0 scored {end['points'][0]}" in problems
    out = Path(summary["out"])
    data = script_data(out / "data.js")
    marked = {g["id"]: g.get("problem") for g in data["games"]}
    for bad in (missing, corrupt, tampered):
        assert marked[bad.id] and not (out / "games" / f"{bad.id}.js").exists()
    assert sum(1 for p in marked.values() if p is None) == 9
    assert len(list((out / "games").glob("*.js"))) == 9


def test_a_report_replaces_only_an_earlier_report(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "somewhere"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with open_store(results, create=False) as store:
        with pytest.raises(ReportError, match="not an arena report"):
            write_report(store, out=out)
        assert (out / "notes.txt").read_text() == "mine"
        fresh = tmp_path / "report"
        first = write_report(store, out=fresh)
        (fresh / "games" / "stale.js").write_text("left over")
        second = write_report(store, out=fresh)  # a rebuild replaces the whole folder
    assert first.files == second.files and not (fresh / "games" / "stale.js").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no building or old folders left


def test_the_default_folder_is_under_the_tournament(results: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(results), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert Path(summary["index"]) == results / summary["tournament"] / "report" / "index.html"
    assert Path(summary["index"]).is_file()


def test_run_writes_the_report_unless_told_not_to(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    for name in ("random", "minimal"):
        shutil.copytree(Path(__file__).parents[2] / "example_bots" / name, bots / name)
    args = ["run", "--bots", str(bots), "--players", "2", "--json"]
    skipped = CliRunner().invoke(app, [*args, "--results", str(tmp_path / "a"), "--no-report"])
    assert skipped.exit_code == 0, skipped.output
    assert json.loads(skipped.stdout)["run"]["report"] is None
    assert not list((tmp_path / "a").glob("*/report"))
    done = CliRunner().invoke(app, [*args, "--results", str(tmp_path / "b")])
    assert done.exit_code == 0, done.output
    index = Path(json.loads(done.stdout)["run"]["report"])
    assert index.is_file() and index.parent.parent.parent == tmp_path / "b"
    assert len(list((index.parent / "games").glob("*.js"))) == 2


def test_replay_html_is_one_self_contained_page(results: Path, tmp_path: Path) -> None:
    with open_store(results, create=False) as store:
        game = store.games()[0]
    out = tmp_path / "game.html"
    result = CliRunner().invoke(app, ["replay", str(results / game.replay), "--html", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert f'data-game="{game.id}"' in html and "window.ARENA_GAMES" in html
    assert "<script src" not in html and "<link" not in html  # nothing to load beside it
    urls = set(re.findall(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}[^\s\"'<>)]*", html)) - {SVG_NAMESPACE}
    assert not urls
    folder = tmp_path / "pages"
    folder.mkdir()
    result = CliRunner().invoke(app, ["replay", str(results / game.replay), "--html", str(folder)])
    assert result.exit_code == 0 and (folder / f"{game.id}.html").is_file()


def test_bot_words_cannot_close_the_inlined_script(results: Path) -> None:
    with open_store(results, create=False) as store:
        game = store.games()[0]
    replay = read_replay(results / game.replay)
    replay.stderr[0] = "</script><script>alert(1)</script><!--"
    page = replay_page(replay)
    assert page.count("</script>") == 3  # the data, common.js and viewer.js: nothing from the bot
    assert "\\u003c/script>\\u003cscript>alert(1)" in page


def test_the_dummy_variant_shows_the_controller_and_the_dummys_cards(tmp_path: Path) -> None:
    out = tmp_path / "dummy.json.gz"
    result = CliRunner().invoke(
        app, ["play", f"{TESTBOT}", f"{TESTBOT}", "--variant", "dummy", "--seed", "4", "--replay", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    replay = read_replay(out)
    view = game_view(replay)
    turns = [s for s in view["steps"] if s["kind"] == "turn"]
    assert len(turns) == len(replay.turns) and all(s["controller"] in (0, 1) for s in turns)
    assert all(len(s["plays"][2]) == 1 for s in turns)  # the dummy gets a card every turn
    assert all(s["ms"][2] is None for s in turns)  # and never answers
    ends = [s for s in view["steps"] if s["kind"] == "end"]
    assert len(ends) == 3 and all(e["plays"] == [[], [], []] for e in ends)  # no last card (R15)
    assert view["steps"][-1]["scores"] == replay.result.scores


def test_a_void_game_shows_the_turns_it_had(results: Path) -> None:
    with open_store(results, create=False) as store:
        game = store.games()[0]
    replay = read_replay(results / game.replay)
    # Cut the game off in round 2, as a failure of the machine would.
    cut = next(i for i, e in enumerate(replay.event_dicts()) if e["type"] == "reveal" and e["round"] == 2 and e["turn"] == 3)
    replay.events = replay.events[:cut]
    replay.turns = [t for t in replay.turns if (t.round, t.turn) < (2, 3)]
    replay.status, replay.void_reason, replay.result = "void", "OSError: disk full", None
    view = game_view(replay)
    assert view["status"] == "void" and view["result"] is None
    assert [s["kind"] for s in view["steps"]].count("end") == 1 and view["steps"][-1]["kind"] == "turn"
    assert (view["steps"][-1]["round"], view["steps"][-1]["turn"]) == (2, 2)


def test_a_replay_whose_events_and_turns_disagree_is_refused_naming_the_turn(results: Path) -> None:
    with open_store(results, create=False) as store:
        game = store.games()[0]
    replay = read_replay(results / game.replay)
    del replay.turns[4]
    with pytest.raises(GameDataError, match=r"round 1 turn 5: cards were revealed but there is no turn record"):
        game_view(replay)
