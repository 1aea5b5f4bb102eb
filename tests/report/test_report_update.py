"""An earlier report is updated, not rebuilt: only new games' files are written and the
result equals a report built from scratch; a report whose inputs did not change is left as
it is; a killed update leaves the old report, which the next call completes; a tampered or
old data file makes the report anew from the store; the rating timeline's warm-started
fits are the cold fits of each prefix."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from report_helpers import make_tournament

from arena.report import site
from arena.report.figures import rating_timeline
from arena.report.site import FACTS, MANIFEST, write_report
from arena.store.database import NewGame, replay_relpath
from arena.store.opening import open_store
from arena.tournament.ratings import fit_elo
from arena.tournament.standings import current_games, results_of


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tournament(tmp_path_factory.mktemp("tournament"))


@pytest.fixture
def results(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "results"
    shutil.copytree(template, copy)
    return copy


def add_games(results: Path, count: int, start: int = 0) -> list[str]:
    """Record ``count`` more games of the tournament, as a later run would: each a copy of one
    of its games (its replay with the new id, its row), so that every replay is a real game."""
    added = []
    with open_store(results, create=False) as store:
        t = store.latest_tournament()
        games = store.games(t.id)
        for i in range(start, start + count):
            g = games[i % len(games)]
            gid = hashlib.sha256(b"copy %d" % i).hexdigest()[:16]
            raw = json.loads(gzip.decompress((results / g.replay).read_bytes()))
            raw["game_id"] = gid
            (results / replay_relpath(gid)).write_bytes(gzip.compress(json.dumps(raw).encode()))
            s = g.seats
            store.add_game(
                NewGame(
                    id=gid, status="complete", set_id=f"copy-{i}", seed=g.seed, players=g.players, variant=g.variant,
                    rules="1", time_settings={}, duration_s=g.duration_s, replay=replay_relpath(gid),
                    bot_ids=[x.bot.id for x in s], points=[x.points for x in s], puddings=[x.puddings for x in s],
                    ranks=[x.rank for x in s], autopilot=[x.autopilot for x in s], faults=[x.faults for x in s],
                    mean_ms=[x.mean_ms for x in s], max_ms=[x.max_ms for x in s],
                ),
                t.id,
            )
            added.append(gid)
    return added


def games_of(results: Path) -> list:
    with open_store(results, create=False, read_only=True) as store:
        return store.games()


def data_of(out: Path) -> dict:
    text = (out / "data.js").read_text(encoding="utf-8")
    data = json.loads(text[text.index("=") + 1 : -2])
    del data["generated"]  # the time of writing: the one figure that differs
    return data


def snapshot(out: Path) -> dict[str, tuple[int, int]]:
    """Every file of the report: its inode and modification time (a rewrite changes them)."""
    return {str(p.relative_to(out)): (p.stat().st_ino, p.stat().st_mtime_ns) for p in out.rglob("*") if p.is_file()}


def report(results: Path, out: Path) -> site.ReportSummary:
    with open_store(results, create=False, read_only=True) as store:
        return write_report(store, out=out)


def fresh(results: Path, tmp_path: Path) -> Path:
    """The same store's report built from scratch, in a folder of its own."""
    out = tmp_path / "fresh"
    shutil.rmtree(out, ignore_errors=True)
    report(results, out)
    return out


def test_an_update_writes_only_the_new_games_and_equals_a_fresh_build(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    first = report(results, out)
    assert first.games == 12 and first.written == first.files
    before = snapshot(out)
    added = add_games(results, 5)
    second = report(results, out)
    after = snapshot(out)
    assert second.games == 17 and second.problems == []
    changed = {name for name, stamp in after.items() if before.get(name) != stamp}
    # The five new games' files and the three data files; no old game's file, page or asset.
    assert changed == {f"games/{g}.js" for g in added} | {"data.js", FACTS, MANIFEST}
    assert second.written == len(changed)
    new = fresh(results, tmp_path)
    assert data_of(out) == data_of(new)
    assert sorted(p.name for p in (out / "games").iterdir()) == sorted(p.name for p in (new / "games").iterdir())
    for game in added:
        assert (out / "games" / f"{game}.js").read_bytes() == (new / "games" / f"{game}.js").read_bytes()
    assert (second.files, second.bytes) == (report(results, new).files, report(results, new).bytes)
    assert not [p for p in out.rglob(".*")]  # no temporary file left


def test_a_report_whose_inputs_did_not_change_is_left_as_it_is(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    first = report(results, out)
    before = snapshot(out)
    again = report(results, out)
    assert snapshot(out) == before and again.written == 0
    assert (again.games, again.files, again.bytes) == (first.games, first.files, first.bytes)
    # A page changed by hand, or a game's file deleted, is put back; the rest stays.
    (out / "index.html").write_text("changed")
    gone = next((out / "games").iterdir())
    gone.unlink()
    repaired = report(results, out)
    assert (out / "index.html").read_bytes() == (fresh(results, tmp_path) / "index.html").read_bytes()
    assert gone.is_file() and repaired.written == 2 + 3  # the page, the game, the data files
    assert data_of(out) == data_of(fresh(results, tmp_path))
    shutil.rmtree(out / "games")  # a whole folder of the report removed by hand
    report(results, out)
    assert sorted(p.name for p in (out / "games").iterdir()) == sorted(f"{g.id}.js" for g in games_of(results))


@pytest.mark.parametrize("killed_at", ["a game file", "data.js", MANIFEST])
def test_a_killed_update_leaves_the_old_report_and_the_next_completes(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, killed_at: str
) -> None:
    out = tmp_path / "report"
    report(results, out)
    old_data = (out / "data.js").read_bytes()
    old_manifest = (out / MANIFEST).read_bytes()
    add_games(results, 3)
    put = site._put

    def killing_put(path: Path, data: bytes) -> None:
        if (path.parent.name == "games") if killed_at == "a game file" else path.name == killed_at:
            tmp = path.parent / f".{path.name}.tmp-{12345}"
            tmp.write_bytes(data[: len(data) // 2])  # as a kill in the middle of the write leaves it
            raise KeyboardInterrupt
        put(path, data)

    monkeypatch.setattr(site, "_put", killing_put)
    with pytest.raises(KeyboardInterrupt):
        report(results, out)
    # The old report (data.js is the page's data; killed at report.json, it is the new one, whole).
    assert (out / MANIFEST).read_bytes() == old_manifest
    if killed_at != MANIFEST:
        assert (out / "data.js").read_bytes() == old_data
    monkeypatch.setattr(site, "_put", put)
    done = report(results, out)
    assert done.games == 15 and data_of(out) == data_of(fresh(results, tmp_path))
    assert not [p for p in out.rglob(".*")]  # the killed update's temporary file is gone
    assert report(results, out).written == 0


def _facts(out: Path) -> dict:
    return json.loads((out / FACTS).read_text())


@pytest.mark.parametrize(
    "tamper",
    [
        "not json",
        "a fault kind that is markup",
        "a fault of a seat not at the table",
        "a game id that is a path",
        "an unknown field",
    ],
)
def test_a_tampered_facts_file_makes_the_report_anew_from_the_store(results: Path, tmp_path: Path, tamper: str) -> None:
    out = tmp_path / "report"
    report(results, out)
    add_games(results, 2)  # so that the next call is an update, not "unchanged"
    facts = _facts(out)
    gid, fact = next((g, f) for g, f in facts["games"].items() if f[1])
    if tamper == "not json":
        (out / FACTS).write_text("{")
    else:
        if tamper == "a fault kind that is markup":
            fact[1][0][1] = "</script><script>alert(1)</script>"
        elif tamper == "a fault of a seat not at the table":
            fact[1][0][0] = 4  # a seat number the replay format allows, at a 3-seat table
        elif tamper == "a game id that is a path":
            facts["games"]["../../escape"] = facts["games"].pop(gid)
        else:
            facts["extra"] = 1
        (out / FACTS).write_text(json.dumps(facts))
    done = report(results, out)
    assert done.written == done.files  # every file written anew
    assert data_of(out) == data_of(fresh(results, tmp_path))
    assert "alert(1)" not in (out / "data.js").read_text() and not (tmp_path / "escape.js").exists()


def test_an_old_report_is_rebuilt_once_then_updated(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    report(results, out)
    # As the report of an arena before facts.json: no facts file, no inputs in report.json.
    (out / FACTS).unlink()
    manifest = json.loads((out / MANIFEST).read_text())
    for key in ("inputs", "files", "bytes", "data_bytes", "facts_bytes"):
        del manifest[key]
    (out / MANIFEST).write_text(json.dumps(manifest))
    rebuilt = report(results, out)
    assert rebuilt.written == rebuilt.files and (out / FACTS).is_file()
    assert report(results, out).written == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no building or old folder left


def test_a_report_of_another_results_folder_is_made_anew(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    report(results, out)
    other = tmp_path / "other"
    shutil.copytree(results, other)
    (other / replay_relpath(next(iter(_facts(out)["games"])))).unlink()  # the copies differ in one replay
    done = report(other, out)
    assert done.written == done.files and len(done.problems) == 1


def test_the_warm_started_timeline_is_the_cold_fit_of_each_prefix(results: Path) -> None:
    add_games(results, 200)  # 212 games: more than the 100 points, so the prefixes are spaced
    with open_store(results, create=False) as store:
        t = store.latest_tournament()
        games = current_games(store, t.id, store.games(t.id))
    timeline = rating_timeline(games)
    marks = timeline["games"]
    assert len(marks) == 100 and marks[-1] == len(games) == 212
    res = results_of(games)
    for i, m in enumerate(marks):
        cold = fit_elo(res[:m])
        for key, values in timeline["elo"].items():
            assert values[i] == pytest.approx(round(cold[key], 1), abs=0.1) if key in cold else values[i] is None
