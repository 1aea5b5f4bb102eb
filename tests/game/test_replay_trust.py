"""Replays are trusted only once they hold up: `arena verify` re-derives every recorded
outcome from the plays (and checks seats against the store), a run recovers a game from
its replay only then, reading any file is bounded, and ids become paths only as plain
names. Real games of real bot processes, real tampered files, real FIFOs and links."""

from __future__ import annotations

import copy
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from proc_helpers import STRICT, needs_strict
from typer.testing import CliRunner

from arena.bots import BotSpec
from arena.cli.app import app
from arena.engine import GameConfig, new_game
from arena.game.players import TimeSettings, open_pool
from arena.game.referee import fallback_play, play_game
from arena.game.replay import (
    MAX_REPLAY_BYTES,
    Replay,
    ReplayError,
    iter_replays,
    plain_name,
    read_replay,
    write_replay,
)
from arena.game.verify import verify_replay
from arena.report.site import ReportError, write_replay_page
from arena.store.database import DB_NAME, replay_relpath
from arena.store.errors import StoreError
from arena.store.opening import open_store

ROOT = Path(__file__).resolve().parents[2]
TESTBOT = Path(__file__).parents[1] / "data" / "bots" / "testbot.py"
EXAMPLES = ROOT / "example_bots"
FAST = TimeSettings(hello_ms=5_000, turn_ms=400, bank_ms=200)
runner = CliRunner()


# -- real games ------------------------------------------------------------------------------


def _spec(*args: str, name: str) -> BotSpec:
    return BotSpec(name=name, argv=(sys.executable, str(TESTBOT), "--name", name, *args), cwd=TESTBOT.parent)


def _play(specs: list[BotSpec], config: GameConfig, seed: int) -> Replay:
    async def main() -> Replay:
        async with open_pool() as pool:
            players = [pool.player(s, version="1", content_hash=f"hash-{s.name}") for s in specs]
            record = await play_game(players, config, seed, time_settings=FAST)
        assert record.status == "complete", record.void_reason
        return record.replay

    return trio.run(main)


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Replay files of real games: a clean 4-player game, one with an illegal reply, one
    where a bot crashes (autopilot after), a dummy game with a fault, one where a bot
    never answers hello (autopilot from the start)."""
    folder = tmp_path_factory.mktemp("games")
    plays = {
        "clean": ([_spec(name=f"b{i}") for i in range(4)], GameConfig(4), 7),
        "illegal": ([_spec(name="good"), _spec("--mode", "illegal", "--at", "1.3", name="bad")], GameConfig(2), 3),
        "crash": ([_spec(name="good"), _spec("--mode", "exit", "--at", "2.1", name="bad"), _spec(name="other")],
                  GameConfig(3), 5),
        "dummy": ([_spec(name="good"), _spec("--mode", "illegal", "--at", "1.1", name="bad")],
                  GameConfig(2, "dummy"), 9),
        "silent": ([_spec(name="good"), _spec("--mode", "hello_silent", name="bad")], GameConfig(2), 4),
    }
    out = {}
    for key, (specs, config, seed) in plays.items():
        path = folder / f"{key}.json.gz"
        write_replay(path, _play(specs, config, seed))
        out[key] = path
    return out


def _doc(path: Path) -> dict[str, Any]:
    return json.loads(gzip.decompress(path.read_bytes()))


def _write(path: Path, doc: Any) -> Path:
    path.write_bytes(gzip.compress(json.dumps(doc).encode(), compresslevel=1))
    return path


def _tamper(src: Path, dst: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    doc = _doc(src)
    change(doc)
    return _write(dst, doc)


def _verify_json(target: Path) -> dict[str, Any]:
    result = runner.invoke(app, ["verify", str(target), "--json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _verify_fails(path: Path, *words: str) -> str:
    """`arena verify FILE` fails with one message naming the file and holding ``words``."""
    doc = _verify_json(path)
    assert doc["failed"] == 1, doc
    error = doc["failures"][0]["error"]
    assert str(path) in error, error
    for word in words:
        assert word in error, error
    assert "Traceback" not in error
    return error


# -- 7: verify re-derives every outcome ------------------------------------------------------


def test_real_games_with_every_kind_of_fault_verify(games: dict[str, Path]) -> None:
    doc = _verify_json(games["clean"].parent)
    assert doc["checked"] == len(games) and doc["failed"] == 0, doc
    assert sorted(f["status"] for f in doc["files"]) == ["ok"] * len(games)
    crash, silent = read_replay(games["crash"]), read_replay(games["silent"])
    assert crash.result is not None and crash.result.autopilot == [False, True, False]
    assert silent.faults[0].round == 0 and silent.result is not None and silent.result.autopilot == [False, True]


def test_a_void_game_verifies_as_far_as_it_went(monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.game.referee as referee

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated referee bug")

    monkeypatch.setattr(referee, "apply_turn", broken)
    async def main() -> Replay:
        async with open_pool() as pool:
            record = await play_game([pool.player(_spec(name="a")), pool.player(_spec(name="b"))], GameConfig(2), 1,
                                     time_settings=FAST)
        return record.replay

    replay = trio.run(main)
    assert replay.status == "void"
    verify_replay(replay)


def _swap_ranks(doc: dict[str, Any]) -> None:
    ranks = doc["result"]["ranks"]
    first, last = ranks.index(min(ranks)), ranks.index(max(ranks))
    ranks[first], ranks[last] = ranks[last], ranks[first]


def _winner_on_autopilot(doc: dict[str, Any]) -> None:
    res = doc["result"]
    winner = res["ranks"].index(1)
    res["autopilot"][winner] = True
    # The arena's ranks made consistent with that flag, so that only the flag is wrong.
    keys = [(not a, s, p) for a, s, p in zip(res["autopilot"], res["scores"], res["puddings"], strict=True)]
    res["ranks"] = [1 + sum(1 for k in keys if k > key) for key in keys]


def _invent_fault(doc: dict[str, Any]) -> None:
    doc["faults"].append({"seat": 0, "round": 2, "turn": 3, "kind": "timeout", "message": "no reply before the deadline"})


def _void(doc: dict[str, Any]) -> None:
    doc["status"], doc["void_reason"] = "void", "RuntimeError: the disk was full"


def _void_completely(doc: dict[str, Any]) -> None:
    """Void with nothing a game's end writes: only the plays show it was complete."""
    _void(doc)
    doc["result"], doc["events"], doc["rounds"] = None, [], []


def _ok_relabelled(status: str, with_fault: bool) -> Callable[[dict[str, Any]], None]:
    """An ok action whose play is not the seeded fallback, relabelled as a fault (and,
    ``with_fault``, with the fault record that would go with it)."""

    def change(doc: dict[str, Any]) -> None:
        state = new_game(GameConfig(doc["config"]["players"], doc["config"]["variant"]), doc["seed"])
        from arena.engine import apply_turn

        for t in doc["turns"]:
            plays: list[Any] = [None] * len(t["hands"])
            for a in t["actions"]:
                plays[a["seat"]] = tuple(a["cards"])
            target = next(
                (a for a in t["actions"] if a.get("status", "ok") == "ok"
                 and tuple(a["cards"]) != fallback_play(state, a["seat"], doc["seed"])),
                None,
            )
            if target is not None:
                target["status"] = status
                if with_fault:
                    doc["faults"].append(
                        {"seat": target["seat"], "round": t["round"], "turn": t["turn"], "kind": status, "message": "x"}
                    )
                return
            apply_turn(state, plays)
        raise AssertionError("no ok action differs from its fallback")

    return change


def _hash_changed(doc: dict[str, Any]) -> None:
    doc["seats"][0]["hash"] = "f" * 16


TAMPERS: dict[str, tuple[str, Callable[[dict[str, Any]], None], tuple[str, ...]]] = {
    "swapped ranks": ("clean", _swap_ranks, ("result.ranks",)),
    "changed pudding points": ("clean", lambda d: d["result"]["pudding_points"].__setitem__(0, 6), ("result.pudding_points",)),
    "changed score": ("clean", lambda d: d["result"]["scores"].__setitem__(1, d["result"]["scores"][1] + 1), ("result.scores",)),
    "winner flagged autopilot": ("clean", _winner_on_autopilot, ("result.autopilot",)),
    "autopilot unflagged after a crash": ("crash", lambda d: d["result"]["autopilot"].__setitem__(1, False), ("autopilot",)),
    "an invented fault": ("clean", _invent_fault, ("fault 0 (seat 0's timeout at 2.3): no play implies it",)),
    "a fault removed": ("illegal", lambda d: d["faults"].clear(), ("the faults lack seat 1's illegal fault at 1.3",)),
    "a fault of another kind": ("illegal", lambda d: d["faults"][0].__setitem__("kind", "timeout"), ("illegal",)),
    "an ok action relabelled as a timeout": ("clean", _ok_relabelled("timeout", False), ("status timeout, but the play applied", "is not the seeded fallback")),
    "an ok action relabelled with its fault": ("clean", _ok_relabelled("timeout", True), ("seeded fallback",)),
    "a fault relabelled ok": ("illegal", lambda d: [a.pop("status", None) for t in d["turns"] for a in t["actions"]],
                              ("fault 0", "no play implies it")),
    "a complete game relabelled void": ("clean", _void, ("void",)),
    "a complete game relabelled void, result removed": ("clean", _void_completely, ("finish the game",)),
    "autopilot from the start without its fault": ("silent", lambda d: d["faults"].clear(), ("no game_start fault",)),
    "a dummy game's fault removed": ("dummy", lambda d: d["faults"].clear(), ("the faults lack",)),
    "a debug value over the referee's cap": ("clean", lambda d: d["turns"][0]["actions"][0].__setitem__("debug", "x" * 5000),
                                             ("debug value larger",)),
    "a changed bot hash": ("clean", _hash_changed, ("game_id", "one of them was changed")),
    "a changed bot name": ("illegal", lambda d: d["seats"][1].__setitem__("bot", "good"), ("game_id",)),
    "changed time settings": ("clean", lambda d: d["time"].__setitem__("turn_ms", 5000), ("game_id",)),
    "timing as text": ("clean", lambda d: d["timing"].__setitem__("mean_ms", "abcd"), ("timing.mean_ms",)),
    "seats out of order": ("clean", lambda d: d["seats"].reverse(), ("seats",)),
    "config disagreeing with players": ("clean", lambda d: d.__setitem__("players", 5), ("players 5",)),
}


@pytest.mark.parametrize("case", list(TAMPERS))
def test_verify_fails_an_outcome_the_plays_do_not_imply(games: dict[str, Path], tmp_path: Path, case: str) -> None:
    source, change, words = TAMPERS[case]
    path = _tamper(games[source], tmp_path / "tampered.json.gz", change)
    _verify_fails(path, *words)


def test_millions_of_invented_faults_are_one_error_line(games: dict[str, Path], tmp_path: Path) -> None:
    fault = {"seat": 0, "round": 1, "turn": 1, "kind": "timeout", "message": "no reply"}
    doc = _doc(games["clean"])
    many = dict(doc, faults=[fault] * 10_000)  # under the size cap: refused by what a game can hold
    _verify_fails(_write(tmp_path / "many.json.gz", many), "faults", "length")
    head = json.dumps(dict(doc, faults=[]), separators=(",", ":")).encode()
    body = b",".join([json.dumps(fault).encode()] * 2_000_000)  # ~140 MB of JSON
    millions = head.replace(b'"faults":[]', b'"faults":[' + body + b"]")
    (tmp_path / "millions.json.gz").write_bytes(gzip.compress(millions, compresslevel=1))
    _verify_fails(tmp_path / "millions.json.gz", "decompresses to more than")


# -- 7: seats against the store, and a run's recovery -----------------------------------------


def _make_bots(folder: Path) -> Path:
    for name in ("random", "greedy", "minimal"):
        shutil.copytree(EXAMPLES / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=ROOT, capture_output=True, text=True, timeout=180,
        env={**os.environ, "COLUMNS": "400"},
    )


def _drop_rows(results: Path, ids: list[str]) -> None:
    with sqlite3.connect(results / DB_NAME) as conn:
        for gid in ids:
            conn.execute("DELETE FROM tournament_games WHERE game_id = ?", (gid,))
            conn.execute("DELETE FROM game_seats WHERE game_id = ?", (gid,))
            conn.execute("DELETE FROM games WHERE id = ?", (gid,))


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real results folder: 3 example bots, 2 players, one deal (6 games), strict sandbox."""
    if not STRICT.ok:
        pytest.skip(f"strict sandbox unavailable: {STRICT.missing}")
    base = tmp_path_factory.mktemp("tournament")
    bots = _make_bots(base / "bots")
    done = _arena("run", "--bots", str(bots), "--results", str(base / "res"), "--players", "2", "--seed", "2",
                  "--json", "--no-report")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["run"]["played"] == 6
    return base


def _copy_results(tournament: Path, tmp_path: Path) -> Path:
    res = tmp_path / "res"
    shutil.copytree(tournament / "res", res)
    return res


@needs_strict
def test_verify_checks_seats_against_the_store(tournament: Path, tmp_path: Path) -> None:
    res = _copy_results(tournament, tmp_path)
    clean = _verify_json(res / "replays")
    assert clean["failed"] == 0 and len(clean["files"]) == 6, clean
    with open_store(res, create=False) as store:
        store_games = store.games()
    first, second = store_games[:2]
    # A replay whose bot hash was changed: the game id is the store's, the seat is not.
    _tamper(res / first.replay, res / first.replay, _hash_changed)
    # A store whose row for a game lost a point.
    with sqlite3.connect(res / DB_NAME) as conn:
        conn.execute("UPDATE game_seats SET points = points - 1 WHERE game_id = ? AND seat = 1", (second.id,))
    doc = _verify_json(res)
    bad = {f["file"]: f for f in doc["files"] if f["status"] != "ok"}
    assert doc["checked"] == 6 and doc["failed"] == 2, doc
    assert "seat 0: hash is 'ffffffffffffffff'" in bad[str(res / first.replay)]["error"]
    assert "seat 1: the store has points" in bad[str(res / second.replay)]["error"]
    assert sum(f["status"] == "ok" for f in doc["files"]) == 4
    # A game's replay under another game's name, in the store's replay folder.
    third, fourth = store_games[2:4]
    shutil.copy(res / third.replay, res / fourth.replay)
    misplaced = _verify_json(res / fourth.replay)
    assert f"holds game {third.id}, whose replay the store has at {third.replay}" in misplaced["failures"][0]["error"]


@needs_strict
def test_a_resumed_run_records_a_tampered_replay_only_by_playing_the_game_again(tournament: Path, tmp_path: Path) -> None:
    """A kill left three replays without rows. One is intact: recorded from its file. One
    has its ranks swapped, one a seat's bot hash changed: each is reported and the game is
    played again (the game was never recorded and the bots are at hand; voiding it would
    only have the next run play it), so the store ends as if nothing had happened."""
    res = _copy_results(tournament, tmp_path)
    with open_store(res, create=False) as store:
        games = store.games()
    before = {g.id: [(s.bot.name, s.rank, s.points) for s in g.seats] for g in games}
    intact, swapped, rehashed = games[1], games[3], games[4]
    _drop_rows(res, [intact.id, swapped.id, rehashed.id])
    _tamper(res / swapped.replay, res / swapped.replay, _swap_ranks)
    _tamper(res / rehashed.replay, res / rehashed.replay, _hash_changed)
    again = _arena("run", "--bots", str(tournament / "bots"), "--results", str(res), "--players", "2", "--seed", "2",
                   "--json", "--no-report")
    assert again.returncode == 0, again.stderr
    run = json.loads(again.stdout)["run"]
    assert (run["recovered"], run["played"]) == (1, 2), run
    warnings = [line for line in again.stderr.splitlines() if "not recovered" in line]
    assert len(warnings) == 2, again.stderr
    assert any(swapped.id in w and "result.ranks" in w for w in warnings), warnings
    assert any(rehashed.id in w and "hash" in w for w in warnings), warnings
    with open_store(res, create=False) as store:
        after = {g.id: [(s.bot.name, s.rank, s.points) for s in g.seats] for g in store.games()}
    assert after == before  # the swapped ranks never reached the store: the game was played again
    assert _verify_json(res)["failed"] == 0


# -- 8: reading is bounded -----------------------------------------------------------------


def _gzip_bomb(path: Path, size: int) -> None:
    """A gzip file of ``size`` zero bytes (a few MB on disk)."""
    comp = zlib.compressobj(1, zlib.DEFLATED, 31)
    block = b"\0" * (64 << 20)
    with path.open("wb") as f:
        for _ in range(size // len(block)):
            f.write(comp.compress(block))
        f.write(comp.flush())


def _arena_timed(*args: str, timeout: float = 60) -> tuple[int, str, str, float]:
    """Run ``arena ARGS`` in a process of its own: exit status, stdout, stderr, seconds."""
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "arena", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "400"})
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0


def test_a_replay_that_decompresses_to_gigabytes_is_one_error_in_bounded_memory(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.json.gz"
    _gzip_bomb(bomb, 2 << 30)
    assert bomb.stat().st_size < 16 << 20
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from arena.game.replay import ReplayError, read_replay\n"
        "try:\n    read_replay(Path(sys.argv[1]))\nexcept ReplayError as exc:\n    print(exc)\n"
        # The peak resident memory of this process (ru_maxrss would count the parent's, across exec).
        "print(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')))\n"
    )
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script, str(bomb)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    seconds = time.monotonic() - t0
    message, peak_kib = proc.stdout.splitlines()
    assert str(bomb) in message and "decompresses to more than" in message, proc.stdout + proc.stderr
    assert int(peak_kib) < 6 * MAX_REPLAY_BYTES // 1024, f"peak {int(peak_kib) // 1024} MiB"
    assert seconds < 20
    code, _, err, _ = _arena_timed("verify", str(bomb))
    assert code == 1 and "decompresses to more than" in err and "Traceback" not in err


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


BAD_FIELDS: dict[str, tuple[Callable[[dict[str, Any]], None], tuple[str, ...]]] = {
    "negative seed": (lambda d: d.__setitem__("seed", -1), ("$.seed",)),
    "seed of 2**63": (lambda d: d.__setitem__("seed", 2**63), ("$.seed",)),
    "card id of 10**9": (lambda d: d["turns"][0]["actions"][0]["cards"].__setitem__(0, 10**9), ("$.turns[0].actions[0].cards[0]",)),
    "card id in a hand": (lambda d: d["turns"][2]["hands"][1].__setitem__(0, 108), ("$.turns[2].hands[1][0]",)),
    "seat 7": (lambda d: d["turns"][0]["actions"][1].__setitem__("seat", 7), ("$.turns[0].actions[1].seat",)),
    "negative bank": (lambda d: d["turns"][0]["actions"][0].__setitem__("bank_ms", -5), ("bank_ms",)),
    "round 9": (lambda d: d["turns"][0].__setitem__("round", 9), ("$.turns[0].round",)),
    "unknown fault kind": (lambda d: d["faults"].append({"seat": 0, "round": 1, "turn": 1, "kind": "x", "message": ""}),
                           ("$.faults[0].kind",)),
    "rank 0": (lambda d: d["result"]["ranks"].__setitem__(0, 0), ("$.result.ranks[0]",)),
    "timing holding a list of lists": (lambda d: d["timing"].__setitem__("mean_ms", [[1]] * 4), ("$.timing",)),
    "a time setting of 10**15": (lambda d: d["time"].__setitem__("turn_ms", 10**15), ("$.time",)),
    "six seats of scores": (lambda d: d["result"]["scores"].extend([0, 0]), ("$.result.scores",)),
}


@pytest.mark.parametrize("case", list(BAD_FIELDS))
def test_a_number_out_of_range_is_refused_naming_the_field(games: dict[str, Path], tmp_path: Path, case: str) -> None:
    change, words = BAD_FIELDS[case]
    path = _tamper(games["clean"], tmp_path / "bad.json.gz", change)
    error = _verify_fails(path, "malformed replay", *words)
    assert len(error) < 500


@pytest.mark.parametrize("where", ["debug", "time", "events"])
def test_json_nested_200000_deep_is_one_error(games: dict[str, Path], tmp_path: Path, where: str) -> None:
    doc = _doc(games["clean"])
    marker = "__deep__"
    if where == "debug":
        doc["turns"][0]["actions"][0]["debug"] = marker
    elif where == "time":
        doc["time"]["hello_ms"] = marker
    else:
        doc["events"][0] = marker
    text = json.dumps(doc).replace(json.dumps(marker), _deep(200_000))
    path = tmp_path / "deep.json.gz"
    path.write_bytes(gzip.compress(text.encode(), compresslevel=1))
    t0 = time.monotonic()
    _verify_fails(path, "nested too deeply")
    assert time.monotonic() - t0 < 10


def test_a_fifo_a_device_link_and_a_folder_named_like_replays_never_hang_verify(games: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "replays"
    (folder / "ab").mkdir(parents=True)
    shutil.copy(games["clean"], folder / "ab" / "good.json.gz")
    os.mkfifo(folder / "ab" / "fifo.json.gz")  # nobody ever writes to it: a plain open would block
    os.symlink("/dev/zero", folder / "zero.json.gz")  # an endless read
    os.symlink(games["illegal"], folder / "link.json.gz")
    os.symlink(folder, folder / "loop")  # a link to a folder: not followed
    code, out, err, seconds = _arena_timed("verify", str(folder), timeout=60)
    assert code == 1 and seconds < 30
    assert f"✓ {folder / 'ab' / 'good.json.gz'}" in out
    assert f"{folder / 'ab' / 'fifo.json.gz'}: not a regular file (a FIFO)" in err
    assert f"{folder / 'zero.json.gz'}: is a symbolic link, not followed" in err
    assert f"{folder / 'link.json.gz'}: is a symbolic link, not followed" in err
    assert "4 files checked: 3 files are not readable replays" in err
    assert "Traceback" not in err
    assert iter_replays(folder) == sorted(
        [folder / "ab" / "fifo.json.gz", folder / "ab" / "good.json.gz", folder / "link.json.gz", folder / "zero.json.gz"]
    )
    # One file given by name: the same, for every command that reads a replay.
    for args in (["verify"], ["replay"], ["replay", "--html", str(tmp_path / "out.html")]):
        code, _, err, seconds = _arena_timed(*args, str(folder / "ab" / "fifo.json.gz"), timeout=30)
        assert code == 1 and seconds < 20 and "not a regular file (a FIFO)" in err and "Traceback" not in err, err


def test_a_truncated_or_padded_gzip_is_one_error(games: dict[str, Path], tmp_path: Path) -> None:
    data = games["clean"].read_bytes()
    (tmp_path / "cut.json.gz").write_bytes(data[: len(data) // 2])
    _verify_fails(tmp_path / "cut.json.gz", "not a readable gzip file")
    (tmp_path / "padded.json.gz").write_bytes(data + b"garbage after the end")
    _verify_fails(tmp_path / "padded.json.gz", "not a readable gzip file")
    (tmp_path / "two.json.gz").write_bytes(data + gzip.compress(b" "))  # two members: one JSON text
    assert _verify_json(tmp_path / "two.json.gz")["failed"] == 0


# -- 9: the arena writes only where the user said -----------------------------------------------


@pytest.mark.parametrize("bad_id", ["../../x", "/tmp/absolute-replay-id", "..", ".hidden", "a/b", "x" * 300, ""])
def test_a_game_id_that_is_not_a_plain_name_becomes_no_path(games: dict[str, Path], tmp_path: Path, bad_id: str) -> None:
    work = tmp_path / "deep" / "er"
    out = work / "out"
    out.mkdir(parents=True)
    path = _tamper(games["clean"], work / "g.json.gz", lambda d: d.__setitem__("game_id", bad_id))
    code, _, err, _ = _arena_timed("replay", str(path), "--html", str(out))
    assert code == 1 and str(path) in err and "game_id" in err and "Traceback" not in err, err
    assert list(out.iterdir()) == []
    assert not list(tmp_path.rglob("*.html")) and not Path("/tmp/absolute-replay-id.html").exists()
    _verify_fails(path, "game_id", "not a plain name" if len(bad_id) <= 256 else "length")


def test_every_place_an_id_becomes_a_path_refuses_one_that_is_not_plain(games: dict[str, Path], tmp_path: Path) -> None:
    replay = read_replay(games["clean"])
    evil = copy.copy(replay)
    evil.game_id = "../../escaped"
    out = tmp_path / "a" / "b"
    out.mkdir(parents=True)
    with pytest.raises(ReportError, match="game_id '../../escaped' is not a plain name"):
        write_replay_page(evil, out)
    assert not list(tmp_path.rglob("*escaped*"))
    with pytest.raises(StoreError, match="not a plain name"):
        replay_relpath("../../escaped")
    with pytest.raises(ReplayError, match="store.db: games.id"):
        plain_name("a/../b", where="store.db", field="games.id")
    assert write_replay_page(replay, out) == out / f"{replay.game_id}.html"


@needs_strict
def test_a_store_row_whose_id_is_a_path_builds_no_file_of_the_report_outside_it(tournament: Path, tmp_path: Path) -> None:
    res = _copy_results(tournament, tmp_path)
    with open_store(res, create=False) as store:
        game = store.games()[0]
    evil = "../../../evil"
    with sqlite3.connect(res / DB_NAME) as conn:  # foreign keys off: the rows follow by hand
        for table, column in (("games", "id"), ("game_seats", "game_id"), ("tournament_games", "game_id")):
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (evil, game.id))
    result = runner.invoke(app, ["report", str(res), "--json"])
    assert result.exit_code == 0, result.output
    problems = json.loads(result.stdout)["problems"]
    assert len(problems) == 1 and "games.id" in problems[0] and "not a plain name" in problems[0], problems
    assert not [p for p in tmp_path.rglob("*evil*")], "a file was written from the store's id"
