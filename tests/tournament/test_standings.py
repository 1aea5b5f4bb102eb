"""The leaderboard's lean reading of the store gives what reading every full game row gave; its
cache is read while the store has not changed, and only then."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from arena.store.database import NewGame
from arena.store.opening import open_store
from arena.tournament.ratings import leaderboard
from arena.tournament.standings import current_games, results_of, standings


def add(store, number: int, bots, rng: random.Random, *, status="complete", players=4, variant="standard", tid="t1"):
    ranks = list(range(1, players + 1))
    rng.shuffle(ranks)
    crashed = rng.random() < 0.1
    store.add_game(
        NewGame(
            id=f"{tid}-g{number}", status=status, set_id=f"{tid}-s{number // 4}", seed=number, players=players,
            variant=variant, rules="{}", time_settings={}, duration_s=0.5, replay="",
            bot_ids=[b.id for b in bots], points=[50 - 10 * r for r in ranks], puddings=[0] * players, ranks=ranks,
            autopilot=[crashed and r == players for r in ranks],
            faults=[{"crash": 1} if crashed and r == players else {} for r in ranks],
            mean_ms=[1.0] * players, max_ms=[2.0] * players,
            cpu_ms=[float(rng.randrange(1, 50)) if number % 3 else None for _ in bots],
            peak_mb=[rng.random() * 9 for _ in bots] if number % 5 else [],
        ),
        tid,
    )


def test_standings_read_lean_equal_the_full_rows(tmp_path: Path) -> None:
    """Entrants of the latest run only (an old version's games leave the table), complete games
    of the format only, usage means and peaks, fault counts: all as the full game rows gave."""
    rng = random.Random(5)
    with open_store(tmp_path) as store:
        bots = [store.bot(f"b{i}", "1", f"{i:064x}", f"/bots/b{i}") for i in range(6)]
        old = store.bot("b0", "0", "f" * 64, "/bots/b0")
        store.tournament("t1", 4, "standard", {})
        for number in range(120):
            table = rng.sample(bots, 4)
            if number % 17 == 0:
                table[0] = old  # a game of the old version of b0
            add(store, number, table, rng, status="void" if number % 29 == 0 else "complete")
        store.tournament("t2", 3, "standard", {})
        for number in range(12):
            add(store, number, rng.sample(bots, 3), rng, players=3, tid="t2")
        store.set_entrants("t1", bots, [])
        for tid, all_games, players in (("t1", False, None), ("t2", False, None), (None, True, 4)):
            got = standings(store, tid, all_games=all_games, players=players, bootstrap=30, seed=3)
            t = store.get_tournament(tid or "t1")
            games = store.games(None if all_games else tid, players=players or t.players, variant="standard")
            if not all_games:
                games = current_games(store, tid, games)
            expected = leaderboard(results_of(games), bootstrap=30, seed=3)
            assert got.games == len(games)
            assert [r["key"] for r in got.rows] == [row.bot for row in expected]
            for r, row in zip(got.rows, expected, strict=True):
                assert (r["elo"], r["elo_low"], r["elo_high"], r["games"], r["wins"], r["faults"]) == (
                    round(row.elo, 1), round(row.low, 1), round(row.high, 1), row.games, round(row.wins, 3), row.faults
                )
                cpu = [s.cpu_ms for g in games for s in g.seats if s.bot.key == r["key"] and s.cpu_ms is not None]
                peak = [s.peak_mb for g in games for s in g.seats if s.bot.key == r["key"] and s.peak_mb is not None]
                assert r["cpu_ms"] == (round(sum(cpu) / len(cpu), 1) if cpu else None)
                assert r["peak_mb"] == (round(max(peak), 1) if peak else None)
        lean = standings(store, "t1", bootstrap=0)
        assert "b0@ffffffff" not in {r["key"] for r in lean.rows}
        assert any(r["faults"] for r in lean.rows)


# --- the standings cache -------------------------------------------------------------------------


def _league(root: Path, games: int = 60):
    """A store of one tournament among six bots (with faults, usage and a void game)."""
    rng = random.Random(11)
    store = open_store(root)
    bots = [store.bot(f"b{i}", "1", f"{i:064x}", f"/bots/b{i}") for i in range(6)]
    store.tournament("t1", 4, "standard", {})
    store.set_entrants("t1", bots, [])
    for number in range(games):
        add(store, number, rng.sample(bots, 4), rng, status="void" if number == 7 else "complete")
    return store, bots, rng


def _counting(monkeypatch) -> list[int]:
    """Counts the fits standings() computes (each leaderboard is one fit and its bootstrap)."""
    import arena.tournament.standings as module

    fits: list[int] = []
    real = module.leaderboard

    def counted(*args, **kwargs):
        fits.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "leaderboard", counted)
    return fits


def _json(st) -> str:
    return json.dumps(st.to_dict(), indent=2)


def test_a_store_that_has_not_changed_is_not_refitted(tmp_path: Path, monkeypatch) -> None:
    """The second leaderboard of an unchanged store is read from the cache (no fit), and its
    JSON is byte for byte the computed one's; other options are computed apart."""
    fits = _counting(monkeypatch)
    store, _, _ = _league(tmp_path)
    with store:
        first = standings(store, "t1", h2h=True)
        assert len(fits) == 1
        again = standings(store, "t1", h2h=True)
        assert len(fits) == 1 and _json(again) == _json(first)
        standings(store, "t1")  # without the head-to-head: other options, another document
        standings(store, "t1", seed=4)
        assert len(fits) == 3
        standings(store, "t1", seed=4)
        assert len(fits) == 3
    # A fresh process (a new connection) reads it too; so does a read-only one.
    with open_store(tmp_path, create=False, read_only=True) as reader:
        assert _json(standings(reader, "t1", h2h=True)) == _json(first)
    assert len(fits) == 3


def test_cached_and_computed_standings_are_the_same_bytes(tmp_path: Path, monkeypatch) -> None:
    """Without a bootstrap (NaN intervals), anchored, with every game of the format: the
    document read back prints exactly what was computed, and a second store made the same
    way computes the same bytes (determinism)."""
    fits = _counting(monkeypatch)
    outs = []
    for folder in ("a", "b"):
        store, bots, _ = _league(tmp_path / folder)
        with store:
            for kwargs in ({"bootstrap": 0}, {"anchor": ("b2", 1000.0)}, {"all_games": True, "players": 4}):
                computed = standings(store, "t1" if "all_games" not in kwargs else None, **kwargs)
                cached = standings(store, "t1" if "all_games" not in kwargs else None, **kwargs)
                assert _json(cached) == _json(computed)
                outs.append(_json(computed))
    assert len(fits) == 6  # one computation per store and options
    assert outs[:3] == outs[3:]


def test_one_new_game_or_a_changed_game_invalidates_the_cache(tmp_path: Path, monkeypatch) -> None:
    """A game added, a game voided in place (its replay was lost), a set id mended, a new
    entrant list: each makes the next leaderboard a new computation."""
    fits = _counting(monkeypatch)
    store, bots, rng = _league(tmp_path)
    with store:
        before = standings(store, "t1")
        add(store, 1000, rng.sample(bots, 4), rng)
        after = standings(store, "t1")
        assert len(fits) == 2 and after.games == before.games + 1
        standings(store, "t1")
        assert len(fits) == 2
        store._conn.execute("UPDATE games SET status = 'void' WHERE id = 't1-g3'")  # as completed_ids does
        voided = standings(store, "t1")
        assert len(fits) == 3 and voided.games == after.games - 1
        store.link_games("t1", [], {"t1-g4": "another-set"})
        standings(store, "t1")
        assert len(fits) == 4
        store.set_entrants("t1", bots[:5], [])
        fewer = standings(store, "t1")
        assert len(fits) == 5 and "b5" not in {r["bot"] for r in fewer.rows}


def test_a_tampered_cached_document_is_ignored_and_recomputed(tmp_path: Path, monkeypatch) -> None:
    """Bytes that are not a document, a document of the wrong shape (an unknown field, a
    string where a number goes, ranks out of order), one too large to read: each is ignored,
    computed again, and written over."""
    import msgspec

    import arena.tournament.standings as module

    fits = _counting(monkeypatch)
    store, _, _ = _league(tmp_path)
    with store:
        good = _json(standings(store, "t1"))
        [(document,)] = store._conn.execute("SELECT document FROM standings_cache").fetchall()
        decoded = msgspec.msgpack.decode(document)
        row = decoded[1][0]
        bad_documents = [
            b"\x00not msgpack",
            msgspec.msgpack.encode([decoded[0], [{**row, "evil": 1}], None]),
            msgspec.msgpack.encode([decoded[0], [{**row, "elo": "1500"}], None]),
            msgspec.msgpack.encode([decoded[0], [{**row, "rank": 2}], None]),
        ]
        for bad in bad_documents:
            store._conn.execute("UPDATE standings_cache SET document = ?", (bad,))
            assert _json(standings(store, "t1")) == good
        assert len(fits) == 1 + len(bad_documents)
        monkeypatch.setattr(module, "CACHE_LIMIT", len(document) - 1)  # too large to read
        assert _json(standings(store, "t1")) == good
        assert len(fits) == 2 + len(bad_documents)


def test_a_read_only_store_computes_and_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    fits = _counting(monkeypatch)
    store, _, _ = _league(tmp_path)
    store.close()
    with open_store(tmp_path, create=False, read_only=True) as reader:
        first = standings(reader, "t1")
        assert _json(standings(reader, "t1")) == _json(first)
    assert len(fits) == 2
    with open_store(tmp_path) as store:
        assert store._conn.execute("SELECT count(*) FROM standings_cache").fetchone() == (0,)


def test_the_head_to_head_gives_each_pairs_likelihood_of_superiority(tmp_path: Path) -> None:
    """`arena leaderboard --h2h`: beside each pair's wins, draws and losses, the LOS of the row
    bot over the column bot (`h2h_los` in the JSON): P(a better) + P(b better) = 1, and a pair
    with more wins than losses is above ½."""
    from arena.tournament.ratings import los_from_counts

    store, _, _ = _league(tmp_path)
    with store:
        doc = standings(store, "t1", h2h=True).to_dict()
    assert doc["h2h"] and set(doc["h2h_los"]) == set(doc["h2h"])
    for a, row in doc["h2h"].items():
        for b, (w, d, lo) in row.items():
            assert doc["h2h_los"][a][b] == round(los_from_counts(w, d, lo), 4)
            assert doc["h2h_los"][a][b] + doc["h2h_los"][b][a] == pytest.approx(1.0, abs=2e-4)
            assert (doc["h2h_los"][a][b] > 0.5) == (w > lo) or w == lo
    assert "h2h_los" not in standings_without_h2h(tmp_path)


def standings_without_h2h(tmp_path: Path) -> dict:
    with open_store(tmp_path, create=False, read_only=True) as reader:
        return standings(reader, "t1").to_dict()
