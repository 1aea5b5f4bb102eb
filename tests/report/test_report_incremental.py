"""A report updated with the rows a store gained reads only those rows and their replays,
and its data.js is byte for byte the data.js of a report built from scratch of the same
store (the time of writing aside), whatever the sequence of additions: games in batches,
a void game later played again, a bot added to the tournament. A report whose inputs did
not change is found so without reading facts.json or listing games/. The rating timeline's
marks only ever gain new ones when games are added (RULES-free: figures of the report)."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
import shutil
from pathlib import Path

import pytest
from report_helpers import make_tournament

from arena.report import site
from arena.report.figures import _aligned, _warm_from, timeline_marks
from arena.report.site import FACTS, write_report
from arena.store.database import NewGame, replay_relpath
from arena.store.opening import open_store


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tournament(tmp_path_factory.mktemp("tournament"))


@pytest.fixture
def results(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "results"
    shutil.copytree(template, copy)
    return copy


class Adder:
    """Records games in the store as later runs would: copies of the tournament's games (the
    replay with the new id, the row), in new duplicate sets or in a set already there."""

    def __init__(self, results: Path, rng: random.Random) -> None:
        self.results, self.rng, self.n = results, rng, 0
        with open_store(results, create=False, read_only=True) as store:
            t = store.latest_tournament()
            self.tid = t.id
            self.games = store.games(t.id)

    def _new_id(self) -> str:
        self.n += 1
        return hashlib.sha256(b"incremental %d" % self.n).hexdigest()[:16]

    def record(self, store, gid: str, *, status: str = "complete", bot_ids: list[int] | None = None) -> None:
        g = self.rng.choice(self.games)
        raw = json.loads(gzip.decompress((self.results / g.replay).read_bytes()))
        raw["game_id"] = gid
        (self.results / replay_relpath(gid)).write_bytes(gzip.compress(json.dumps(raw).encode()))
        s = g.seats
        set_id = self.rng.choice([g.set_id, f"set-{self.n % 5}", f"new-{self.n}"])
        store.add_game(
            NewGame(
                id=gid, status=status, set_id=set_id, seed=g.seed, players=g.players, variant=g.variant,
                rules="1", time_settings={}, duration_s=g.duration_s, replay=replay_relpath(gid),
                bot_ids=bot_ids or [x.bot.id for x in s], points=[x.points for x in s],
                puddings=[x.puddings for x in s], ranks=[x.rank for x in s], autopilot=[x.autopilot for x in s],
                faults=[x.faults for x in s], mean_ms=[x.mean_ms for x in s], max_ms=[x.max_ms for x in s],
                void_reason="the referee failed" if status == "void" else "",
            ),
            self.tid,
        )

    def add(self, count: int) -> None:
        with open_store(self.results, create=False) as store:
            for _ in range(count):
                self.record(store, self._new_id())

    def add_void(self) -> str:
        gid = self._new_id()
        with open_store(self.results, create=False) as store:
            self.record(store, gid, status="void")
        return gid

    def play_again(self, gid: str) -> None:
        with open_store(self.results, create=False) as store:
            self.record(store, gid)

    def add_bot(self) -> None:
        """A new bot joins the tournament (its entrants grow) and plays a game in a seat."""
        with open_store(self.results, create=False) as store:
            bots = store.bots()
            entrants = [bots[i] for i in sorted(store.entrant_ids(self.tid))]
            new = store.bot(f"newcomer{self.n}", "1", hashlib.sha256(b"bot %d" % self.n).hexdigest(), "/nowhere")
            store.set_entrants(self.tid, [*entrants, new], [])
            g = self.rng.choice(self.games)
            ids = [x.bot.id for x in g.seats]
            ids[self.rng.randrange(len(ids))] = new.id
            self.record(store, self._new_id(), bot_ids=ids)


def report(results: Path, out: Path) -> site.ReportSummary:
    with open_store(results, create=False, read_only=True) as store:
        return write_report(store, out=out)


def data_bytes(out: Path) -> bytes:
    """data.js without the time it was written (the one figure that differs)."""
    return re.sub(rb'"generated":"[^"]*"', b'"generated":""', (out / "data.js").read_bytes())


def fresh(results: Path, tmp_path: Path) -> Path:
    out = tmp_path / "fresh"
    shutil.rmtree(out, ignore_errors=True)
    report(results, out)
    return out


@pytest.fixture
def full_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the builds that read every row of the tournament (not an update of new rows)."""
    calls: list[int] = []
    real = site._write_files

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(site, "_write_files", counting)
    return calls


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_update_of_new_rows_is_byte_for_byte_a_fresh_build(
    results: Path, tmp_path: Path, seed: int, full_reads: list[int]
) -> None:
    rng = random.Random(seed)
    adder = Adder(results, rng)
    out = tmp_path / "report"
    report(results, out)
    assert full_reads == [1]  # the first build reads every row
    for _ in range(4):
        before = len(full_reads)
        adder.add(rng.randint(1, 40))
        done = report(results, out)
        assert len(full_reads) == before  # only the new rows were read
        new = fresh(results, tmp_path)
        assert data_bytes(out) == data_bytes(new)
        assert (out / FACTS).read_bytes()[72:] == (new / FACTS).read_bytes()[72:]  # the same facts, signed alike
        assert done.games == report(results, new).games
        assert sorted(p.name for p in (out / "games").iterdir()) == sorted(p.name for p in (new / "games").iterdir())
    assert not [p for p in out.rglob(".*")]


def test_a_void_game_played_again_and_a_bot_added_still_give_a_fresh_builds_data(
    results: Path, tmp_path: Path, full_reads: list[int]
) -> None:
    rng = random.Random(7)
    adder = Adder(results, rng)
    out = tmp_path / "report"
    report(results, out)
    void = adder.add_void()
    adder.add(3)
    report(results, out)
    assert data_bytes(out) == data_bytes(fresh(results, tmp_path))
    assert json.loads((out / "data.js").read_text()[len("window.ARENA_REPORT="):-2])["games"][12]["status"] == "void"
    reads = len(full_reads)
    adder.play_again(void)  # its row is replaced: the rows the report saw changed
    report(results, out)
    assert len(full_reads) == reads + 1  # every row read again, in place
    assert data_bytes(out) == data_bytes(fresh(results, tmp_path))
    reads = len(full_reads)
    adder.add_bot()  # a new bot version among the entrants, with a game: only the new rows are read
    adder.add(2)
    report(results, out)
    assert len(full_reads) == reads
    new = fresh(results, tmp_path)
    assert data_bytes(out) == data_bytes(new)
    assert "newcomer" in (out / "data.js").read_text()


def test_an_unchanged_report_is_found_so_without_reading_its_facts_or_its_games_folder(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "report"
    report(results, out)
    Adder(results, random.Random(3)).add(2)
    first = report(results, out)  # an update (it sets games/'s time as any build does)

    def refused(*args, **kwargs):
        raise AssertionError("read although nothing changed")

    monkeypatch.setattr(site, "_previous", refused)
    monkeypatch.setattr(site, "_game_files", refused)
    again = report(results, out)
    assert again.written == 0 and (again.games, again.files, again.bytes) == (first.games, first.files, first.bytes)
    monkeypatch.undo()
    (next((out / "games").iterdir())).unlink()  # the folder's time tells: the file is put back
    repaired = report(results, out)
    assert repaired.written == 1 + 3
    assert data_bytes(out) == data_bytes(fresh(results, tmp_path))


def test_facts_signed_with_another_stores_key_make_the_report_anew(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    report(results, out)
    Adder(results, random.Random(5)).add(2)
    facts = (out / FACTS).read_bytes()
    (out / FACTS).write_bytes(facts[:8] + b"0" * 64 + facts[72:])  # the same facts, not signed with this key
    done = report(results, out)
    assert done.written == done.files
    assert data_bytes(out) == data_bytes(fresh(results, tmp_path))


def test_the_timeline_marks_only_gain_new_ones_as_games_are_added() -> None:
    rng = random.Random(0)
    for n in [*range(1, 700), *rng.sample(range(700, 200_000), 300)]:
        marks = timeline_marks(n)
        assert len(marks) == min(n, 100) and marks[-1] == n and marks == sorted(set(marks))
        step = _aligned(n)
        for m in marks:  # every fit starts from a fit the same timeline has (or cold)
            if m % step == 0:
                assert _warm_from(m) == 0 or _warm_from(m) in marks
        later = n + rng.randint(1, 5000)
        kept = {m for m in marks if m % step == 0}
        assert {m for m in timeline_marks(later) if m <= n} <= kept
