"""The results store: games recorded once, void games replaced, foreign files refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.store.database import DB_NAME, NewGame, replay_relpath
from arena.store.errors import StoreError
from arena.store.opening import open_store
from arena.store.schema import SCHEMA_VERSION


def _game(gid: str, bot_ids: list[int], *, status: str = "complete", points: list[int] | None = None) -> NewGame:
    n = len(bot_ids)
    pts = points or list(range(10, 10 + n))
    ranks = [sorted(pts, reverse=True).index(p) + 1 for p in pts]
    return NewGame(
        id=gid,
        status=status,
        set_id="set-" + gid[:2],
        seed=7,
        players=n,
        variant="standard",
        rules="sushigo-rules/1.0",
        time_settings={"turn_ms": 1000},
        duration_s=0.25,
        replay=replay_relpath(gid),
        bot_ids=bot_ids,
        points=pts,
        puddings=[0] * n,
        ranks=ranks,
        autopilot=[False] * n,
        faults=[{"timeout": 1} if i == 0 else {} for i in range(n)],
        mean_ms=[1.5] * n,
        max_ms=[3.0] * n,
        void_reason="OSError: boom" if status == "void" else "",
    )


def test_a_game_is_recorded_once_and_found_by_bot_and_tournament(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        a = store.bot("alpha", "1", "a" * 16, "bots/alpha")
        b = store.bot("beta", "", "b" * 16, "bots/beta")
        assert store.bot("alpha", "1", "a" * 16, "bots/alpha") == a  # same name + hash: same row
        store.tournament("t1", 2, "standard", {"seed": 0})
        assert store.add_game(_game("g1", [a.id, b.id]), "t1") is True
        assert store.add_game(_game("g1", [a.id, b.id], points=[1, 2]), "t1") is False  # never twice
        assert store.count_games("t1") == 1
        [g] = store.games("t1")
        assert [s.bot.name for s in g.seats] == ["alpha", "beta"]
        assert [s.points for s in g.seats] == [10, 11]  # the first record stands
        assert g.seats[0].faults == {"timeout": 1}
        assert store.games(bot="beta") == [g]
        assert store.games(bot="beta@" + "b" * 8) == [g]
        assert store.games(bot="gamma") == []


def test_a_new_content_hash_is_a_new_bot_version(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        v1 = store.bot("alpha", "1", "1" * 16, "p")
        v2 = store.bot("alpha", "1", "2" * 16, "p")
        assert v1.id != v2.id
        assert v1.key != v2.key


def test_a_void_game_is_kept_for_the_record_then_replaced_by_the_replayed_game(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        a = store.bot("alpha", "1", "a" * 16, "p")
        b = store.bot("beta", "1", "b" * 16, "p")
        store.tournament("t", 2, "standard", {})
        store.add_game(_game("g1", [a.id, b.id], status="void"), "t")
        assert store.completed_ids(["g1"]) == set()
        assert [g.status for g in store.games("t", status=None)] == ["void"]
        assert store.add_game(_game("g1", [a.id, b.id]), "t") is True
        (tmp_path / replay_relpath("g1")).parent.mkdir(parents=True)
        (tmp_path / replay_relpath("g1")).write_bytes(b"\x1f\x8b replay")
        assert store.completed_ids(["g1", "nope"]) == {"g1"}
        assert [g.status for g in store.games("t", status=None)] == ["complete"]


def test_linking_reuses_a_game_in_another_tournament(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        a = store.bot("alpha", "1", "a" * 16, "p")
        b = store.bot("beta", "1", "b" * 16, "p")
        store.tournament("t1", 2, "standard", {})
        store.tournament("t2", 2, "standard", {})
        store.add_game(_game("g1", [a.id, b.id]), "t1")
        store.link_games("t2", ["g1"])
        assert store.count_games("t2") == 1
        assert store.count_games() == 1


def test_reopening_keeps_everything(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        a = store.bot("alpha", "1", "a" * 16, "p")
        store.tournament("t1", 2, "standard", {"seed": 3})
        store.add_game(_game("g1", [a.id, a.id]), "t1")
        store.set_entrants("t1", [a], [("broken", "bots/broken", "build failed")])
    with open_store(tmp_path, create=False) as store:
        assert store.count_games("t1") == 1
        assert store.get_tournament("t1").config == {"seed": 3}
        assert store.skipped("t1") == [{"bot": "broken", "path": "bots/broken", "reason": "build failed"}]


def test_a_file_that_is_not_a_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    db = tmp_path / DB_NAME
    db.write_text("my thesis, do not delete\n")
    with pytest.raises(StoreError, match=r"arena\.db: not an SQLite database"):
        open_store(tmp_path)
    assert db.read_text() == "my thesis, do not delete\n"


def test_another_applications_database_is_refused(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("CREATE TABLE customers (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not an arena results database"):
        open_store(tmp_path)


def test_a_database_from_a_newer_arena_is_refused(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        store._conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match="newer arena"):
        open_store(tmp_path)


def test_no_database_without_create_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no results database here"):
        open_store(tmp_path / "nothing", create=False)
    assert not (tmp_path / "nothing").exists()


def test_a_game_with_ragged_seats_is_refused(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        a = store.bot("alpha", "1", "a" * 16, "p")
        g = _game("g1", [a.id, a.id])
        bad = NewGame(**{**{f: getattr(g, f) for f in g.__dataclass_fields__}, "points": [1]})
        with pytest.raises(ValueError, match="points has 1 entries for 2 seats"):
            store.add_game(bad)
        assert store.count_games() == 0


def test_a_game_whose_replay_file_is_lost_is_played_again(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        a = store.bot("alpha", "1", "a" * 16, "p")
        store.tournament("t", 2, "standard", {})
        for gid in ("g1", "g2"):
            store.add_game(_game(gid, [a.id, a.id]), "t")
            (tmp_path / replay_relpath(gid)).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / replay_relpath("g1")).write_bytes(b"\x1f\x8b replay")
        (tmp_path / replay_relpath("g2")).write_bytes(b"")  # a power cut before the data reached the disk
        assert store.completed_ids(["g1", "g2"]) == {"g1"}
        assert {g.id: g.status for g in store.games("t", status=None)} == {"g1": "complete", "g2": "void"}
        assert store.add_game(_game("g2", [a.id, a.id]), "t") is True


def test_a_schema_1_database_is_migrated_and_keeps_its_games(tmp_path: Path) -> None:
    """Schema 2 adds each seat's CPU time and peak memory; games recorded before have none."""
    from arena.store.schema import MIGRATIONS

    conn = sqlite3.connect(tmp_path / DB_NAME, isolation_level=None)
    conn.executescript(MIGRATIONS[0])
    conn.execute("INSERT INTO meta VALUES ('application', 'sushigo-arena'), ('schema_version', '1')")
    conn.execute("INSERT INTO bots VALUES (1, 'alpha', '1', 'aaaa', 'p', 'then')")
    conn.execute(
        "INSERT INTO games VALUES ('old', 'complete', 's', 1, 2, 'standard', 'r', '{}', 0.1, 'then', 'x', '')"
    )
    for seat in (0, 1):
        conn.execute(f"INSERT INTO game_seats VALUES ('old', {seat}, 1, 10, 0, 1, 0, '{{}}', 1.0, 2.0)")
    conn.close()
    with open_store(tmp_path) as store:
        assert store._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        [old] = store.games()
        assert [(s.points, s.cpu_ms, s.peak_mb) for s in old.seats] == [(10, None, None)] * 2
        new = NewGame(**{**{f: getattr(_game("new", [1, 1]), f) for f in NewGame.__dataclass_fields__},
                         "cpu_ms": [12.5, None], "peak_mb": [30.0, None]})
        store.add_game(new)
        [_, g] = store.games()
        assert [(s.cpu_ms, s.peak_mb) for s in g.seats] == [(12.5, 30.0), (None, None)]


def test_a_schema_2_database_gets_the_standings_cache_and_its_change_count(tmp_path: Path) -> None:
    """Schema 3 adds the standings cache and the triggers that count games changed in place:
    a store of schema 2 is migrated (its games kept), and from then on voiding, mending or
    replacing a game moves the key its leaderboards are kept under."""
    from arena.store.schema import MIGRATIONS, _statements

    conn = sqlite3.connect(tmp_path / DB_NAME, isolation_level=None)
    for script in MIGRATIONS[:2]:
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute("INSERT INTO meta VALUES ('application', 'sushigo-arena'), ('schema_version', '2')")
    conn.execute("INSERT INTO bots VALUES (1, 'alpha', '1', 'aaaa', 'p', 'then')")
    conn.execute("INSERT INTO tournaments VALUES ('t', 'then', 'then', 2, 'standard', '{}')")
    conn.execute("INSERT INTO games VALUES ('old', 'complete', 's', 1, 2, 'standard', 'r', '{}', 0.1, 'then', 'x', '')")
    conn.execute("INSERT INTO tournament_games VALUES ('t', 'old')")
    for seat in (0, 1):
        conn.execute(f"INSERT INTO game_seats VALUES ('old', {seat}, 1, 10, 0, 1, 0, '{{}}', 1.0, 2.0, NULL, NULL)")
    conn.close()
    with open_store(tmp_path) as store:
        assert store._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        assert [g.id for g in store.games("t")] == ["old"]
        key = store.standings_key("t")
        assert key == (1, 1, 0) and store.standings_key(None) == (1, 1, 0)
        assert store.cache_standings("t", "opts", key, b"doc") is True
        assert store.cached_standings("t", "opts", key, 100) == b"doc"
        assert store.cached_standings("t", "opts", key, 2) is None  # larger than the limit asked
        assert store.cached_standings("t", "other", key, 100) is None
        store.link_games("t", [], {"old": "mended"})
        assert store.standings_key("t") == (1, 1, 1)
        assert store.cached_standings("t", "opts", store.standings_key("t"), 100) is None
        store.add_game(_game("new", [1, 1]), "t")
        assert store.standings_key("t")[:2] == (2, 2)
        store._conn.execute("UPDATE games SET status = 'void' WHERE id = 'new'")
        store.add_game(_game("new", [1, 1]), "t")  # a void game played again: deleted, then added
        games, last, changes = store.standings_key("t")
        assert (games, changes > 2) == (2, True)
    with open_store(tmp_path, read_only=True) as reader:
        assert reader.cache_standings("t", "opts", (2, last, changes), b"doc") is False  # never writes
