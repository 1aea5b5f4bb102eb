"""Which games a tournament plays: tables of bots, duplicate deals, seatings, and their order.

Pure: no I/O, no clock, no global random. Everything is derived from the arguments, so the same
call always returns the same games in the same order. The games are made one at a time
(:func:`iter_schedule`): the first game of a 200-bot round robin comes at once, and the
schedule holds no list of its games, nor of its tables once there are more than
:data:`EXACT_ORDER_TABLES` of them (see :func:`make_schedule`, "Order").

A *table* is a set of ``players`` bots (kept sorted by name). A *duplicate set* is one seeded
deal played at a table under several seatings — every rotation of the seats (``"rotations"``,
``players`` games) or every permutation (``"all"``, ``players!`` games) — so that card luck and
seat effects cancel within the set. A table is played as ``deals`` duplicate sets.

The deal seed and the set id of a table's ``d``-th deal are keyed hashes (HMAC-SHA256) of the
tournament seed, the table's bot names and ``d`` only, under a secret ``key`` (the results
store's deal key, :meth:`arena.store.database.Store.deal_key`). Adding a bot therefore leaves every
existing table's games unchanged, which lets a results store reuse them: a later run plays only
the new bot's games. The key is what keeps the deals secret: a bot that knows this code, the
names and the seed still cannot compute a deal without it (the seed is small and guessable).
"""

from __future__ import annotations

import array
import bisect
import hashlib
import itertools
import math
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from arena.errors import ArenaError
from arena.game.deals import deal_seed, keyed_digest, set_id

__all__ = [
    "SEATINGS",
    "GamesCap",
    "ScheduleError",
    "ScheduledGame",
    "check_key",
    "games_cap",
    "iter_schedule",
    "make_schedule",
    "schedule_games",
]

#: The fewest bytes of a deal key (the store makes 32 random ones).
MIN_KEY_BYTES = 16

SEATINGS = ("rotations", "all")

#: Up to this many tables (per deal), a round robin plays them in the order of their deal
#: seeds, which are all computed and sorted first (about 17 µs and 200 bytes a table: about a
#: second and 13 MB at most); above it, in a keyed pseudo-random order made one table at a
#: time (see :func:`_full`).
EXACT_ORDER_TABLES = 1 << 16
MIN_PLAYERS, MAX_PLAYERS = 2, 5


class ScheduleError(ArenaError, ValueError):
    """The tournament's settings cannot make a schedule; the message names the setting."""


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game to play.

    ``set_id`` names the duplicate set (one deal under several seatings): unique within a
    schedule, and the same in every schedule with the same key, tournament seed, table and deal.
    ``seed`` is the deal's 63-bit seed, shared by every game of the set. ``seats`` gives the bot
    per seat; within a set the seatings come in a fixed order, the first one first.
    """

    set_id: str
    table: tuple[str, ...]
    deal: int
    seed: int
    seats: tuple[str, ...]


def check_key(key: object) -> bytes:
    """``key`` if it is a usable deal key (bytes, at least :data:`MIN_KEY_BYTES` long)."""
    if not isinstance(key, bytes) or len(key) < MIN_KEY_BYTES:
        raise ScheduleError(f"the deal key must be at least {MIN_KEY_BYTES} bytes, got {type(key).__name__}")
    return key


def _seatings(table: tuple[str, ...], key: bytes, seed: int, seatings: str) -> list[tuple[str, ...]]:
    # The cyclic order of the first seating comes from the deal seed rather than the names, so
    # that no bot always sits just after another one (passing direction matters) across tables.
    base = sorted(table, key=lambda bot: keyed_digest(key, "seat", seed, bot))
    if seatings == "all":
        return list(itertools.permutations(base))
    return [tuple(base[i:] + base[:i]) for i in range(len(base))]


def _set_games(
    table: tuple[str, ...], deal: int, key: bytes, seed: int, seatings: str
) -> Iterator[ScheduledGame]:
    ds = deal_seed(key, seed, table, deal)
    sid = set_id(key, seed, table, deal)
    for seats in _seatings(table, key, ds, seatings):
        yield ScheduledGame(set_id=sid, table=table, deal=deal, seed=ds, seats=seats)


def _check(
    bots: Sequence[str],
    players: int,
    deals: int,
    seatings: str,
    games: int | None,
    gauntlet: str | None,
) -> list[str]:
    if isinstance(bots, str):
        raise ScheduleError("bots must be a sequence of names, not one string")
    names = list(bots)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ScheduleError(f"bot names must be non-empty strings, got {name!r}")
    dupes = sorted(name for name, count in Counter(names).items() if count > 1)
    if dupes:
        raise ScheduleError(f"duplicate bot names: {', '.join(dupes)}")
    if (
        isinstance(players, bool)
        or not isinstance(players, int)
        or not MIN_PLAYERS <= players <= MAX_PLAYERS
    ):
        raise ScheduleError(f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, got {players!r}")
    if players > len(names):
        raise ScheduleError(
            f"players={players} needs at least {players} bots, but there are {len(names)}"
        )
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ScheduleError(f"deals must be at least 1, got {deals!r}")
    if seatings not in SEATINGS:
        raise ScheduleError(f"seatings must be one of {', '.join(SEATINGS)}, got {seatings!r}")
    if games is not None and (isinstance(games, bool) or not isinstance(games, int) or games < 1):
        raise ScheduleError(f"games must be a positive number, got {games!r}")
    if gauntlet is not None and gauntlet not in names:
        raise ScheduleError(
            f"gauntlet bot {gauntlet!r} is not among the bots: {', '.join(sorted(names))}"
        )
    return sorted(names)


def games_per_set(players: int, seatings: str) -> int:
    """How many games one duplicate set holds."""
    return math.factorial(players) if seatings == "all" else players


def iter_schedule(
    bots: Sequence[str],
    *,
    players: int,
    deals: int = 1,
    seatings: str = "rotations",
    games: int | None = None,
    seed: int = 0,
    gauntlet: str | None = None,
    key: bytes,
) -> Iterator[ScheduledGame]:
    """The games of :func:`make_schedule`, one at a time (arguments are checked at once).

    No game, set or table list is held: memory is ``O(bots²)`` for a capped design (plus
    its count of each table's deals used, which stops growing: see :class:`_DealsUsed`), and ``O(bots)`` for a round robin of more than
    :data:`EXACT_ORDER_TABLES` tables (below it, the tables of one deal are sorted first).
    """
    names = _check(bots, players, deals, seatings, games, gauntlet)
    check_key(key)
    cap = games_cap(len(names), players=players, deals=deals, seatings=seatings, games=games, gauntlet=gauntlet)
    if cap is not None and not cap.full:
        return _capped(names, players, deals, seatings, cap.sets, key, seed, gauntlet)
    return _full(names, players, deals, seatings, key, seed, gauntlet)


def schedule_games(
    n_bots: int,
    *,
    players: int,
    deals: int = 1,
    seatings: str = "rotations",
    games: int | None = None,
    gauntlet: str | None = None,
) -> int:
    """How many games :func:`iter_schedule` yields for ``n_bots`` bots, without making them."""
    cap = games_cap(n_bots, players=players, deals=deals, seatings=seatings, games=games, gauntlet=gauntlet)
    if cap is not None:
        return cap.games
    tables = math.comb(n_bots, players) if gauntlet is None else math.comb(n_bots - 1, players - 1)
    return tables * deals * games_per_set(players, seatings)


@dataclass(frozen=True, slots=True)
class GamesCap:
    """What ``games=N`` comes to: ``games`` games in ``sets`` whole duplicate sets (``full``:
    the whole design, which holds no more than N). ``note`` says why ``games`` is not N,
    in a few words ("" when it is N, or the whole design)."""

    asked: int
    games: int
    sets: int
    full: bool
    note: str


def games_cap(
    n_bots: int,
    *,
    players: int,
    deals: int = 1,
    seatings: str = "rotations",
    games: int | None,
    gauntlet: str | None = None,
) -> GamesCap | None:
    """How a cap of ``games`` is met (None: no cap). A capped design plays whole duplicate
    sets (a set is ``players`` games, or ``players!`` with every seating), so N is rounded
    down to whole sets; and it never leaves a bot out, so it holds at least the sets that
    seat every bot once (``ceil(bots / players)``; with a gauntlet, ``ceil(field /
    (players - 1))``), which may round N up."""
    if games is None:
        return None
    per_set = games_per_set(players, seatings)
    tables = math.comb(n_bots, players) if gauntlet is None else math.comb(n_bots - 1, players - 1)
    total_sets = tables * deals
    if total_sets * per_set <= games:
        return GamesCap(games, total_sets * per_set, total_sets, True, "")
    if gauntlet is None:
        cover, who = -(-n_bots // players), f"every one of the {n_bots} bots plays"
    else:
        cover, who = -(-(n_bots - 1) // (players - 1)), f"every one of the {n_bots - 1} bots of the field meets {gauntlet}"
    wanted = games // per_set
    seating = "every seating" if seatings == "all" else "every rotation"
    unit = f"a duplicate set is {per_set} games ({players} players, {seating} of the seats)"
    if wanted < cover:
        if cover >= total_sets:
            return GamesCap(games, total_sets * per_set, total_sets, True, f"{unit}, and {who} only in the whole design")
        note = f"{unit}, and {cover} sets are the fewest in which {who}" if cover > 1 else f"{unit}: at least one is played"
        return GamesCap(games, cover * per_set, cover, False, note)
    note = f"{unit}: only whole sets are played" if wanted * per_set != games else ""
    return GamesCap(games, wanted * per_set, wanted, False, note)


def _full(
    names: list[str], players: int, deals: int, seatings: str, key: bytes, seed: int, gauntlet: str | None
) -> Iterator[ScheduledGame]:
    if gauntlet is None:
        field, fixed = names, ()
    else:
        field, fixed = [n for n in names if n != gauntlet], (gauntlet,)
    size = players - len(fixed)  # the bots a table takes from the field
    tables = math.comb(len(field), size)
    for deal in range(deals):
        if tables <= EXACT_ORDER_TABLES:
            # Round d plays every table's d-th deal, tables in an order shuffled by their deal
            # seeds, so a run cut short has played a fair sample; the order of two tables never
            # depends on the other bots, so a ladder's old tables keep theirs.
            made = (tuple(sorted((*fixed, *rest))) for rest in itertools.combinations(field, size))
            order: Iterable[tuple[str, ...]] = sorted(made, key=lambda t: (deal_seed(key, seed, t, deal), t))
        else:
            # Too many tables to sort (that order needs every deal seed first): the same tables in
            # a keyed pseudo-random order that depends on every bot, made one at a time.
            order = _shuffled_tables(field, fixed, size, tables, key, seed, names, players, gauntlet, deal)
        for table in order:
            yield from _set_games(table, deal, key, seed, seatings)


def _shuffled_tables(
    field: list[str],
    fixed: tuple[str, ...],
    size: int,
    tables: int,
    key: bytes,
    seed: int,
    names: list[str],
    players: int,
    gauntlet: str | None,
    deal: int,
) -> Iterator[tuple[str, ...]]:
    """Every ``size``-subset of ``field`` (plus ``fixed``), each once, in the order of a keyed
    permutation of their ranks: a four-round Feistel network over the smallest even power of
    two that holds ``tables``, walked on past ranks outside (cycle walking), each rank then
    unranked in the combinatorial number system. Memory: the field and a table of binomials."""
    round_keys = [
        keyed_digest(key, "order", seed, names, players, gauntlet, deal, r) for r in range(_FEISTEL_ROUNDS)
    ]
    half = max(1, ((tables - 1).bit_length() + 1) // 2)
    mask = (1 << half) - 1
    # binomials[j][c] = C(c, j + 1), increasing in c: the largest c with C(c, j + 1) <= rank by bisection.
    binomials = [[math.comb(c, j + 1) for c in range(len(field))] for j in range(size)]

    def permute(x: int) -> int:
        left, right = x >> half, x & mask
        for rk in round_keys:
            f = int.from_bytes(hashlib.blake2b(right.to_bytes(8, "big"), key=rk, digest_size=8).digest(), "big")
            left, right = right, left ^ (f & mask)
        return (left << half) | right

    for rank in range(tables):
        x = permute(rank)
        while x >= tables:  # cycle walking: a permutation of 0..tables-1 made of one of 0..4^half-1
            x = permute(x)
        members = []
        for j in range(size - 1, -1, -1):
            c = bisect.bisect_right(binomials[j], x) - 1
            members.append(field[c])
            x -= binomials[j][c]
        yield tuple(sorted((*fixed, *members)))


_FEISTEL_ROUNDS = 4


def _capped(
    names: list[str],
    players: int,
    deals: int,
    seatings: str,
    wanted: int,
    key: bytes,
    seed: int,
    gauntlet: str | None,
) -> Iterator[ScheduledGame]:
    for table, deal in _balanced_sets(names, players, deals, wanted, key, seed, gauntlet):
        yield from _set_games(table, deal, key, seed, seatings)


def _balanced_sets(
    names: list[str], players: int, deals: int, wanted: int, key: bytes, seed: int, gauntlet: str | None
) -> Iterator[tuple[tuple[str, ...], int]]:
    """Choose ``wanted`` (table, deal) duplicate sets so that pairs meet about equally often.

    A greedy design, built one set at a time: the table's first bot is one of those that have
    played the fewest sets (the gauntlet bot, if any, always); each further bot is the one that
    has met the bots already chosen the fewest times in total, then the one with the fewest
    sets. Remaining ties are broken by a random order seeded from ``seed`` (a private generator).
    A table may be chosen at most ``deals`` times; its n-th choice plays its deal n-1, so the
    first sets are the same deals an uncapped tournament would play. Every prefix of the
    result is itself about balanced, so the order is also the playing order.

    Made one set at a time: the state is the counts (``O(bots²)``) and each table's number of
    deals used (:class:`_DealsUsed`: bounded by the number of tables, not of sets), never the sets.
    """
    rng = random.Random(
        int.from_bytes(keyed_digest(key, "capped", seed, names, players, gauntlet)[:8], "big")
    )
    index = {n: i for i, n in enumerate(names)}
    n = len(names)
    played = [0] * n
    met = [[0] * n for _ in range(n)]
    uses = _DealsUsed(n, players, deals)  # each table's deals used so far
    for _ in range(wanted):
        tie = [rng.random() for _ in range(n)]
        if gauntlet is not None:
            members = [index[gauntlet]]
        else:
            members = [min(range(n), key=lambda b: (played[b], tie[b]))]
        while len(members) < players:
            last = len(members) == players - 1
            best: tuple[tuple[int, int, float], int] | None = None
            for b in range(n):
                if b in members:
                    continue
                if last and uses.get(sorted((*members, b))) >= deals:
                    continue  # that table has played all its deals
                key = (sum(met[b][m] for m in members), played[b], tie[b])
                if best is None or key < best[0]:
                    best = (key, b)
            if best is None:
                break
            members.append(best[1])
        if len(members) < players:
            members = _least_met_open_table(
                n, players, deals, met, played, uses, tie, gauntlet, index
            )
        table = tuple(sorted(members))
        deal = uses.take(table)
        for a in table:
            played[a] += 1
            for b in table:
                if a != b:
                    met[a][b] += 1
        yield tuple(names[i] for i in table), deal


class _DealsUsed:
    """How many deals each table (sorted bot indices) has played so far in a capped design.

    A dict by the table's rank while few tables are used (about 70 bytes each), turned into
    one counter per possible table (a byte each, or 4 with more than 255 deals) once that is
    smaller: memory ``O(min(sets chosen, tables))``, so that it stops growing however many
    games a long capped run plays. The ranks are those of the combinatorial number system
    (a table's rank: the sum of ``C(member, position + 1)``)."""

    __slots__ = ("_binomials", "_counts", "_dense_bytes", "_item", "_sparse")

    #: What one entry of the dict costs (its key, an int, and the dict's slot), in bytes.
    SPARSE_ENTRY_BYTES = 70

    def __init__(self, n: int, players: int, deals: int) -> None:
        self._binomials = [[math.comb(c, j + 1) for c in range(n)] for j in range(players)]
        self._item = "B" if deals <= 0xFF else "I"
        self._dense_bytes = math.comb(n, players) * (1 if self._item == "B" else 4)
        self._sparse: dict[int, int] | None = {}
        self._counts: array.array[int] | None = None

    def _rank(self, members: Sequence[int]) -> int:
        b = self._binomials
        return sum(b[j][m] for j, m in enumerate(members))

    def get(self, members: Sequence[int]) -> int:
        """The deals the table of these (sorted) members has played."""
        rank = self._rank(members)
        if self._counts is not None:
            return self._counts[rank]
        assert self._sparse is not None
        return self._sparse.get(rank, 0)

    def take(self, members: Sequence[int]) -> int:
        """The table's next deal (the deals it has played), counted as played."""
        rank = self._rank(members)
        if self._counts is not None:
            deal = self._counts[rank]
            self._counts[rank] = deal + 1
            return deal
        sparse = self._sparse
        assert sparse is not None
        deal = sparse.get(rank, 0)
        sparse[rank] = deal + 1
        if len(sparse) * self.SPARSE_ENTRY_BYTES >= self._dense_bytes:
            counts = array.array(self._item, bytes(self._dense_bytes))
            for r, c in sparse.items():
                counts[r] = c
            self._counts, self._sparse = counts, None
        return deal

    def size(self) -> int:
        """Entries held: tables in the dict, or every possible table once dense."""
        return len(self._counts) if self._counts is not None else len(self._sparse or ())


def _least_met_open_table(
    n: int,
    players: int,
    deals: int,
    met: list[list[int]],
    played: list[int],
    uses: _DealsUsed,
    tie: list[float],
    gauntlet: str | None,
    index: dict[str, int],
) -> list[int]:
    """The fallback when the greedy build closes only full tables: the best open table overall.

    Reached only when a large share of all sets is wanted (then most tables are open anyway).
    """
    g = None if gauntlet is None else index[gauntlet]
    best: tuple[tuple[int, int, float], tuple[int, ...]] | None = None
    for table in itertools.combinations(range(n), players):
        if (g is not None and g not in table) or uses.get(table) >= deals:
            continue
        key = (
            sum(met[a][b] for a, b in itertools.combinations(table, 2)),
            sum(played[a] for a in table),
            sum(tie[a] for a in table),
        )
        if best is None or key < best[0]:
            best = (key, table)
    assert best is not None, "a capped schedule wants fewer sets than exist"
    return list(best[1])


def make_schedule(
    bots: Sequence[str],
    *,
    players: int,
    deals: int = 1,
    seatings: str = "rotations",
    games: int | None = None,
    seed: int = 0,
    gauntlet: str | None = None,
    key: bytes,
) -> list[ScheduledGame]:
    """Every game of a tournament among ``bots``, in the order to play them.

    - Tables: every ``players``-subset of the bots (with ``gauntlet=BOT``, only those holding
      that bot). Each table is played as ``deals`` duplicate sets; a set is one deal played under
      every rotation of the seats (``seatings="rotations"``: ``players`` games) or every
      permutation (``seatings="all"``: ``players!`` games). The seats' cyclic order of a set's
      first seating is drawn from its deal seed.
    - ``games=N`` caps the total. If the full design (tables x deals x seatings) holds more than
      N games, ``N // games-per-set`` whole duplicate sets are chosen instead by a greedy balanced
      design (see :func:`_balanced_sets`), but never fewer than seat every bot (see
      :func:`games_cap`, which says what N comes to and why): every bot plays, every pair of bots meets about equally often and every
      bot plays about equally often, deterministically from ``seed``. Unlike the full design, a
      capped one depends on every bot: adding a bot changes which sets are chosen (any set the
      two designs share is still the same game, so a results store reuses it).
    - Order: a set's games are consecutive. Uncapped, round d plays every table's d-th deal,
      tables shuffled by deal seed (so that adding a bot keeps the old tables' order), or, with
      more than :data:`EXACT_ORDER_TABLES` tables, in a keyed pseudo-random order that depends
      on every bot (that order is made one table at a time; the seed order needs every table
      first); capped, sets come in the order the design chose them. Either way a run cut short
      has played a fair sample, and a set's games (ids, seeds, seats) are the same in any order.

    ``key`` is the secret every derivation is keyed with (see the module's docstring): the
    same key and arguments give the same schedule; without the key nobody can tell its deals.

    Raises :class:`ScheduleError` (a ``ValueError``) for a key shorter than 16 bytes, duplicate or empty names, ``players``
    outside 2..5 or above the number of bots, ``deals < 1``, an unknown ``seatings``, or a
    gauntlet bot that is not among the bots.
    """
    return list(
        iter_schedule(
            bots,
            players=players,
            deals=deals,
            seatings=seatings,
            games=games,
            seed=seed,
            gauntlet=gauntlet,
            key=key,
        )
    )
