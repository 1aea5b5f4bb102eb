"""The leaderboard's lean reading of the store gives what reading every full game row gave."""

from __future__ import annotations

import random
from pathlib import Path

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
