"""Fairness: no bot can compute or confirm a deal, and none carries what it saw of a deal
into another game of the same duplicate set.

The hostile bots here are real bot folders run by a real ``arena run`` (``--sandbox strict``
where the machine has it, as in CI): one knows the arena's code and tries every small
tournament seed with the old unkeyed derivations and some guessed keys to re-deal its game;
one remembers everything it sees (in memory, in ``/tmp``, in ``$HOME``) and reports, at every
game's start, what it remembers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from proc_helpers import STRICT, needs_strict
from typer.testing import CliRunner

from arena.bots.manifest import find_bot

from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import Level, SandboxSettings
from arena.cli.app import app
from arena.engine import GameConfig, Variant, apply_turn, legal_plays, new_game, result
from arena.game.players import open_pool
from arena.game.referee import play_game
from arena.game.replay import Replay, read_replay
from arena.game.verify import verify_replay
from arena.store.opening import open_store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"

# -- the bots --------------------------------------------------------------------------

PROTOCOL_LOOP = '''
def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()


def main():
    rng = random.Random(0)
    for line in sys.stdin:
        msg = json.loads(line)
        kind, msg_id = msg["type"], msg.get("id")
        if kind == "hello":
            send({"type": "hello", "re": msg_id, "version": 1, "name": NAME, "bot_version": "1"})
        elif kind == "game_start":
            rng = random.Random(msg["seed"])
            on_game_start(msg)
            send({"type": "ready", "re": msg_id})
        elif kind == "act":
            on_act(msg)
            send({"type": "action", "re": msg_id, **rng.choice(msg["legal"])})
        elif kind == "game_over":
            send({"type": "ack", "re": msg_id})
        elif kind == "shutdown":
            break


if __name__ == "__main__":
    main()
'''

# Knows the arena's code (it imports the engine, the schedule's HMAC and the referee's bot
# seed), the names at its table and its seat; tries tournament seeds 0..SEEDS-1 with the
# old unkeyed derivation of deal seeds, SEEDS small raw deal seeds, and the keyed derivation
# under a few guessable keys. A candidate "matches" if it deals this seat's first hand (the
# kinds in order, or the very ids), or gives the seed this bot received in game_start.
PREDICTOR = '''
import hashlib
import json
import random
import sys

from arena.engine import GameConfig, new_game
from arena.game.referee import bot_seed
from arena.game.deals import keyed_digest
from arena.game.referee import bot_seed
from arena.game.deals import keyed_digest

NAME = "predictor"
SEEDS = 150
DEALS = 3
GUESSED_KEYS = (b"", bytes(32), b"\\xff" * 32, b"sushigo-arena" * 3)


def old_digest(*parts):
    data = json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.blake2b(data, digest_size=16).digest()


def old_deal_seed(seed, table, deal):
    return int.from_bytes(old_digest("deal", seed, sorted(table), deal)[:8], "big") >> 1


def candidate_seeds(names):
    table = sorted(n for n in names if n != "dummy")
    for seed in range(SEEDS):
        for deal in range(DEALS):
            yield old_deal_seed(seed, table, deal)
        yield seed
        for key in GUESSED_KEYS:
            yield int.from_bytes(keyed_digest(key, "deal", seed, table, 0)[:8], "big") >> 1


def candidates(config, names, seat):
    """(deal seed, this seat's first hand as (id, kind) pairs, the next hand it would get)."""
    out = []
    for cand in candidate_seeds(names):
        state = new_game(config, cand)
        source = (seat - config.direction(1)) % config.players  # who passes to this seat
        hand = [(c, state.kind(c)) for c in state.hands[seat]]
        out.append((cand, hand, [state.kind(c) for c in state.hands[source]]))
    return out


def judge(cands, seat, received_seed, hand):
    kinds = [k for _, k in hand]
    return {
        "candidates": len(cands),
        "kind_matches": sum(1 for _, h, _ in cands if [k for _, k in h] == kinds),
        "id_matches": sum(1 for _, h, _ in cands if h == hand),
        "seed_matches": sum(1 for cand, _, _ in cands if bot_seed(cand, seat) == received_seed),
    }


STATE = {}


def on_game_start(msg):
    config = GameConfig(msg["players"], msg["rules"]["variant"])
    STATE.update(game_id=msg["game_id"], seat=msg["seat"], seed=msg["seed"],
                 cands=candidates(config, msg["names"], msg["seat"]))


def on_act(msg):
    if msg["round"] == 1 and msg["turn"] == 1:
        hand = [(c["id"], c["card"]) for c in msg["hand"]]
        report = judge(STATE["cands"], STATE["seat"], STATE["seed"], hand)
        report["game_id"] = STATE["game_id"]
        print("PREDICT " + json.dumps(report), file=sys.stderr, flush=True)
'''

# Remembers every card it is shown (id and kind) and every game it played, in memory, in
# $HOME and in $TMPDIR (both /tmp under strict); at each game_start reports what it remembers.
REMEMBERER = '''
import json
import os
import sys
import random
from pathlib import Path

NAME = "rememberer"
FILES = sorted({Path(os.environ.get(v) or "/tmp") / f"memory-{v}.json" for v in ("HOME", "TMPDIR")})
MEMORY = {}  # game id -> {card id: kind}
CURRENT = {}
PROCESS = os.urandom(8).hex()  # (a pid says little: under strict every bot is pid 2 of its namespace)


def load():
    for path in FILES:
        try:
            MEMORY.update(json.loads(path.read_text()))
        except (OSError, ValueError):
            pass


def save():
    for path in FILES:
        try:
            path.write_text(json.dumps(MEMORY))
        except OSError as exc:
            print(f"cannot write {path}: {exc}", file=sys.stderr, flush=True)


def on_game_start(msg):
    load()
    remembered = {gid: cards for gid, cards in MEMORY.items() if gid != msg["game_id"]}
    print("REMEMBER " + json.dumps({"game_id": msg["game_id"], "process": PROCESS, "games": sorted(remembered),
                                    "cards": {gid: cards for gid, cards in remembered.items()}}),
          file=sys.stderr, flush=True)
    CURRENT.clear()
    CURRENT["id"] = msg["game_id"]
    MEMORY[msg["game_id"]] = {}
    save()


def on_act(msg):
    seen = MEMORY[CURRENT["id"]]
    for card in msg["hand"]:
        seen[str(card["id"])] = card["card"]
    save()
'''


def write_bot(folder: Path, name: str, source: str) -> Path:
    bot = folder / name
    bot.mkdir(parents=True)
    (bot / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\nrun = ["{{python}}", "main.py"]\n')
    (bot / "main.py").write_text(
        "import json\nimport random\nimport sys\n" + source + PROTOCOL_LOOP, encoding="utf-8"
    )
    return bot


def load_bot_module(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"fairness_{path.parent.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_cli(*args: str) -> dict:
    result = CliRunner().invoke(app, ["run", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def replays(results: Path) -> dict[str, tuple[str, Replay]]:
    """game id -> (its duplicate set, its replay), from the store."""
    with open_store(results, create=False) as store:
        return {g.id: (g.set_id, read_replay(results / g.replay)) for g in store.games()}


def tagged(text: str, tag: str) -> list[dict]:
    return [json.loads(line[len(tag) + 1 :]) for line in text.splitlines() if line.startswith(tag + " ")]


def stderr_of(replay: Replay, bot: str) -> str:
    (seat,) = [s.seat for s in replay.seats if s.bot == bot]
    return replay.stderr[seat]


# -- 4. no bot can compute or confirm the deal -------------------------------------------


def test_the_predictor_does_re_deal_a_game_dealt_the_old_unkeyed_way(tmp_path: Path) -> None:
    """The hostile bot's search is not vacuous: against the derivation the arena used before
    deal keys (deal seed = unkeyed hash of seed 3, the table and deal 0; ids from the seed),
    it finds the deal, the very ids, the bot seed, and the next hand it will be passed."""
    bot = load_bot_module(write_bot(tmp_path, "predictor", PREDICTOR) / "main.py")
    config, names, seat = GameConfig(3), ["a", "b", "predictor"], 1
    state = new_game(config, bot.old_deal_seed(3, names, 0))
    hand = [(c, state.kind(c)) for c in state.hands[seat]]
    from arena.game.referee import bot_seed

    cands = bot.candidates(config, names, seat)
    report = bot.judge(cands, seat, bot_seed(state.seed, seat), hand)
    assert report["kind_matches"] >= 1 and report["id_matches"] >= 1 and report["seed_matches"] >= 1
    (found,) = [c for c in cands if c[1] == hand]
    assert found[2] == [state.kind(c) for c in state.hands[0]]  # every other hand is known too


@needs_strict
def test_a_bot_that_knows_the_code_names_and_small_seeds_learns_nothing_of_the_deal(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    write_bot(bots, "predictor", PREDICTOR)
    for name in ("greedy", "random"):
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    results = tmp_path / "res"
    for seed in ("0", "3"):  # seeds a bot would try first; 3 is the one the control re-deals
        doc = run_cli("--bots", str(bots), "--results", str(results), "--players", "3", "--seed", seed,
                      "--deals", "1", "--sandbox", "strict")
        assert doc["run"]["played"] == 3
    games = replays(results)
    reports = [r for _, replay in games.values() for r in tagged(stderr_of(replay, "predictor"), "PREDICT")]
    assert len(reports) == len(games) == 6
    for report in reports:
        assert report["candidates"] >= 1000
        # An exact ordered match of 8 kinds by chance has odds below 1e-8 per candidate.
        assert (report["kind_matches"], report["id_matches"], report["seed_matches"]) == (0, 0, 0), report
    # And the deal seeds differ from every one the bot tried.
    bot = load_bot_module(bots / "predictor" / "main.py")
    tried = set(bot.candidate_seeds(["greedy", "predictor", "random"]))
    assert not {replay.seed for _, replay in games.values()} & tried


# -- 5. nothing carried across a duplicate set -----------------------------------------


def _remembered(games: dict[str, tuple[str, Replay]], bot: str) -> list[tuple[str, str, dict]]:
    """(game id, set id, what the bot said it remembered at that game's start)."""
    out = []
    for gid, (sid, replay) in games.items():
        (report,) = tagged(stderr_of(replay, bot), "REMEMBER")
        assert report["game_id"] == gid
        out.append((gid, sid, report))
    return out


@needs_strict
@pytest.mark.parametrize(("jobs", "seatings"), [("1", "rotations"), ("2", "rotations"), ("1", "all")])
def test_a_bot_that_remembers_everything_never_starts_a_game_remembering_its_set(
    tmp_path: Path, jobs: str, seatings: str
) -> None:
    # ("all": 6 games a set, more than the processes a bot keeps: some are restarted in a set.)
    bots = tmp_path / "bots"
    write_bot(bots, "rememberer", REMEMBERER)
    for name in ("greedy", "random", "minimal"):
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    results = tmp_path / "res"
    deals = "2" if seatings == "rotations" else "1"
    doc = run_cli("--bots", str(bots), "--results", str(results), "--players", "3", "--deals", deals,
                  "--seatings", seatings, "--jobs", jobs, "--sandbox", "strict")
    assert doc["run"]["played"] == 24 and doc["run"]["void"] == 0
    games = replays(results)
    set_of = {gid: sid for gid, (sid, _) in games.items()}
    mine = {gid: g for gid, g in games.items() if any(s.bot == "rememberer" for s in g[1].seats)}
    assert len(mine) == 18  # 3 tables x 2 deals x 3 rotations, or 3 tables x 6 seatings
    remembered_any = False
    for gid, sid, report in _remembered(mine, "rememberer"):
        remembered_any = remembered_any or bool(report["games"])
        assert sid not in {set_of[g] for g in report["games"]}, f"game {gid} began remembering its own set"
    # Its memory works: processes are reused across sets, and remember those.
    assert remembered_any


@needs_strict
def test_twin_games_deal_the_same_kinds_under_unrelated_ids(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    for name in ("greedy", "random", "minimal"):
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    results = tmp_path / "res"
    run_cli("--bots", str(bots), "--results", str(results), "--players", "3", "--deals", "2", "--sandbox", "strict")
    by_set: dict[str, list[Replay]] = defaultdict(list)
    for sid, replay in replays(results).values():
        by_set[sid].append(replay)
    assert len(by_set) == 2 and all(len(v) == 3 for v in by_set.values())
    for twins in by_set.values():
        assert len({r.seed for r in twins}) == 1  # one deal
        assert len({r.ids for r in twins}) == 3 and None not in {r.ids for r in twins}
        first = [[[r.cards[c] for c in hand] for hand in r.turns[0].hands] for r in twins]
        assert first[0] == first[1] == first[2]  # the same hands of kinds, seat for seat
        id_hands = [r.turns[0].hands for r in twins]
        for a in range(3):
            for b in range(a + 1, 3):
                shared = sum(x == y for ha, hb in zip(id_hands[a], id_hands[b], strict=True) for x, y in zip(ha, hb, strict=True))
                assert shared <= 3, f"{shared} of 24 dealt cards kept their ids"  # ~0.2 expected by chance
                assert twins[a].cards != twins[b].cards
        for r in twins:
            verify_replay(r, name=r.game_id)


@pytest.mark.parametrize("level", [Level.STRICT, Level.LIMITS])
def test_a_process_that_has_seen_a_deal_is_restarted_before_it_plays_it_again(tmp_path: Path, level: Level) -> None:
    """The referee's own rule, whoever calls it: the same players given the same deal twice
    play the second game in fresh processes, with fresh writable storage (its $HOME and
    $TMPDIR: a tmpfs /tmp under strict, a temporary folder of its own at limits); a new deal
    reuses the process."""
    if level is Level.STRICT and not STRICT.ok:
        pytest.skip(f"strict sandbox unavailable: {STRICT.missing}")
    sandbox = SandboxSettings(level)
    spec = prepare_bot(find_bot(write_bot(tmp_path, "rememberer", REMEMBERER)), tmp_path / "build", sandbox)
    other = prepare_bot(find_bot(EXAMPLES / "minimal"), tmp_path / "build", sandbox)

    async def main() -> tuple[list[Any], list[int]]:
        async with open_pool() as pool:
            players = [pool.player(spec), pool.player(other)]
            records, starts = [], []
            for seed, ids in ((41, 1), (42, 2), (41, 3), (41, 4)):
                records.append(await play_game(players, GameConfig(2), seed, ids=ids))
                starts.append(players[0].starts)
            return records, starts

    records, starts = trio.run(main)
    assert starts == [1, 1, 2, 3]  # 42 is a new deal; 41 comes back twice
    reports = [tagged(r.replay.stderr[0], "REMEMBER")[0] for r in records]
    assert [len(r["games"]) for r in reports] == [0, 1, 0, 0]
    assert len({r["process"] for r in reports}) == 3



def test_trusted_reuse_is_an_opt_in_that_keeps_one_process_through_a_deal_played_again(tmp_path: Path) -> None:
    """``fresh_per_deal=False`` (a run's ``--trusted-reuse``) is what lifts the rule above,
    and only when asked: the same process plays the deal again, remembering it; a crash
    still restarts it (see tests/executors)."""
    sandbox = SandboxSettings(Level.LIMITS)
    spec = prepare_bot(find_bot(write_bot(tmp_path, "rememberer", REMEMBERER)), tmp_path / "build", sandbox)
    other = prepare_bot(find_bot(EXAMPLES / "minimal"), tmp_path / "build", sandbox)

    async def main() -> tuple[list[Any], list[int]]:
        async with open_pool() as pool:
            players = [pool.player(spec), pool.player(other)]
            records, starts = [], []
            for seed, ids in ((41, 1), (41, 2), (41, 3)):
                records.append(
                    await play_game(players, GameConfig(2), seed, ids=ids, game_id=f"g{ids}", fresh_per_deal=False)
                )
                starts.append(players[0].starts)
            return records, starts

    records, starts = trio.run(main)
    assert starts == [1, 1, 1]
    reports = [tagged(r.replay.stderr[0], "REMEMBER")[0] for r in records]
    assert [len(r["games"]) for r in reports] == [0, 1, 2]  # what trusting a bot gives up
    assert len({r["process"] for r in reports}) == 1

# -- reproducibility for the operator -----------------------------------------------------


def test_same_store_or_imported_key_same_games_and_another_key_other_deals(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    for name in ("greedy", "random"):
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    args = ["--bots", str(bots), "--players", "2", "--deals", "3", "--seed", "5", "--sandbox", "none"]
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    run_cli(*args, "--results", str(a))
    runner = CliRunner()
    exported = runner.invoke(app, ["store", "key", "export", str(a)])
    assert exported.exit_code == 0, exported.output
    key = exported.stdout.strip()
    assert len(key) == 64 and int(key, 16) >= 0
    imported = runner.invoke(app, ["store", "key", "import", key, str(b)])
    assert imported.exit_code == 0, imported.output
    again = run_cli(*args, "--results", str(a))  # the same folder: every game is already there
    assert again["run"]["played"] == 0 and again["run"]["already"] == 6
    run_cli(*args, "--results", str(b))
    run_cli(*args, "--results", str(c))

    def games(results: Path) -> dict[str, tuple]:
        return {
            gid: (r.seed, r.ids, r.result.scores if r.result else None) for gid, (_, r) in replays(results).items()
        }

    assert games(a) == games(b) and len(games(a)) == 6
    assert not set(games(c)) & set(games(a))
    assert not {v[0] for v in games(c).values()} & {v[0] for v in games(a).values()}
    # A key goes only into a store with no games; a bad one is named; no store, no key.
    refused = runner.invoke(app, ["store", "key", "import", key, str(c)])
    assert refused.exit_code == 1 and "a key can be imported only into a results folder with no games" in str(refused.exception)
    bad = runner.invoke(app, ["store", "key", "import", "xyz", str(tmp_path / "d")])
    assert bad.exit_code == 1 and "64 hex digits" in str(bad.exception) and not (tmp_path / "d").exists()
    missing = runner.invoke(app, ["store", "key", "export", str(tmp_path / "nowhere")])
    assert missing.exit_code == 1 and "no results database here" in str(missing.exception)
    for results in (a, b, c):
        verify = runner.invoke(app, ["verify", str(results / "replays"), "--json"])
        assert verify.exit_code == 0 and json.loads(verify.stdout)["failed"] == 0, verify.output


def test_arena_play_keys_its_deal_with_the_stores_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    minimal = str(EXAMPLES / "minimal")

    def play() -> Replay:
        path = tmp_path / "game.json.gz"
        out = CliRunner().invoke(app, ["play", minimal, minimal, "--seed", "3", "--sandbox", "none", "--replay", str(path)])
        assert out.exit_code == 0, out.output
        return read_replay(path)

    # No store in results/: a fresh key each time (the seed alone does not tell the deal).
    first, second = play(), play()
    assert first.seed not in (3, second.seed)
    open_store(tmp_path / "results").close()
    third, fourth = play(), play()
    assert (third.seed, third.ids, third.result.scores) == (fourth.seed, fourth.ids, fourth.result.scores)
    assert third.seed not in (3, first.seed, second.seed)


# -- the engine's relabelling -------------------------------------------------------------

CONFIGS = [GameConfig(p, v) for p in range(2, 6) for v in (Variant.STANDARD, Variant.ALTERNATE)] + [
    GameConfig(2, Variant.DUMMY)
]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(CONFIGS), st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1), st.randoms(use_true_random=False))
def test_relabelled_ids_keep_the_deal_and_every_rule(config: GameConfig, seed: int, ids: int, rnd: Any) -> None:
    """Same seed, other ids: the same kinds in pile order and in every hand, and the same
    choices (by position in the R16-ordered legal list) give the same game, every event and
    score the same once ids are mapped: no rule looks at an id's value."""
    plain, relabelled = new_game(config, seed), new_game(config, seed, ids=ids)
    assert [plain.kind(c) for c in plain.pile] == [relabelled.kind(c) for c in relabelled.pile]
    assert sorted(relabelled.kind_of) == sorted(plain.kind_of)
    mapping: dict[int, int] = {}
    while not plain.over:
        for h1, h2 in zip(plain.hands, relabelled.hands, strict=True):
            assert [plain.kind(c) for c in h1] == [relabelled.kind(c) for c in h2]
            for x, y in zip(h1, h2, strict=True):
                assert mapping.setdefault(x, y) == y
        plays1, plays2 = [], []
        for seat in range(config.players):
            l1, l2 = legal_plays(plain, seat), legal_plays(relabelled, seat)
            assert [tuple(mapping[c] for c in p) for p in l1] == l2
            i = rnd.randrange(len(l1)) if l1 else None
            plays1.append(l1[i] if l1 else None)
            plays2.append(l2[i] if l2 else None)
        apply_turn(plain, plays1)
        apply_turn(relabelled, plays2)
    assert relabelled.over and result(plain) == result(relabelled)
    # Unrelated labellings: few ids keep their card.
    other = new_game(config, seed, ids=(ids + 1) % 2**63)
    same = sum(1 for a, b in zip(new_game(config, seed, ids=ids).pile, other.pile, strict=True) if a == b)
    assert same <= 12  # ~1 expected


def test_no_ids_is_the_engine_as_before() -> None:
    state = new_game(GameConfig(4), 7)
    again = new_game(GameConfig(4), 7, ids=None)
    assert state.pile == again.pile and state.kind_of == again.kind_of
    with pytest.raises(ValueError, match="ids must be a non-negative int"):
        new_game(GameConfig(4), 7, ids=-1)


def test_deal_keys_are_random_and_kept(tmp_path: Path) -> None:
    with open_store(tmp_path / "a") as a, open_store(tmp_path / "b") as b:
        ka, kb = a.deal_key(), b.deal_key()
        assert len(ka) == 32 and ka != kb and a.deal_key() == ka
    with open_store(tmp_path / "a") as a:
        assert a.deal_key() == ka
    assert hashlib.sha256(ka).digest() != hashlib.sha256(kb).digest()
    assert sys.modules["arena.store.opening"].read_deal_key(tmp_path / "a") == ka
