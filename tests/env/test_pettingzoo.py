"""The PettingZoo environments: PettingZoo's own API and seed tests, masks against the
engine's legal plays, observations that never depend on hidden cards, rewards."""

from __future__ import annotations

import random

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

import arena.env
from arena.engine import DECK_COUNTS, KIND_INDEX, KINDS, determinize, events, legal_plays, observe, result
from arena.env.encoding import NO_DECISION, OFFSETS, SeatMemory, action_of, encode

FORMATS = [(2, "standard"), (3, "alternate"), (4, "standard"), (5, "alternate"), (2, "dummy")]


@pytest.mark.parametrize(("players", "variant"), FORMATS)
def test_pettingzoo_api_tests_pass(players: int, variant: str) -> None:
    parallel_api_test(arena.env.parallel_env(players=players, variant=variant), num_cycles=200)
    api_test(arena.env.env(players=players, variant=variant), num_cycles=200)


@pytest.mark.parametrize(("players", "variant"), [(4, "standard"), (2, "dummy")])
def test_pettingzoo_seed_tests_pass(players: int, variant: str) -> None:
    seed_test(lambda: arena.env.env(players=players, variant=variant), num_cycles=100)
    parallel_seed_test(lambda: arena.env.parallel_env(players=players, variant=variant), num_cycles=100)


def _random_games(players: int, variant: str, games: int, seed: int):
    """Every step of ``games`` games with random masked actions: (env, observations, infos)."""
    rng = np.random.default_rng(seed)
    par = arena.env.parallel_env(players=players, variant=variant)
    for g in range(games):
        obs, infos = par.reset(seed=seed + g)
        while True:
            yield par, obs, infos
            if not par.agents:
                break
            actions = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in par.agents}
            obs, _, _, _, infos = par.step(actions)


@pytest.mark.parametrize(("players", "variant"), FORMATS)
def test_masks_are_the_engines_legal_plays(players: int, variant: str) -> None:
    """Thousands of random steps in every variant: the mask holds exactly the kinds of
    the legal plays, and each action stands for a legal play with those kinds."""
    checked = 0
    for par, obs, infos in _random_games(players, variant, games=25, seed=11):
        state = par.table.state
        for seat, agent in enumerate(par.possible_agents):
            legal = legal_plays(state, seat)
            mask = obs[agent]["action_mask"]
            dummy = observe(state, seat).dummy
            expected = {action_of(tuple(KIND_INDEX[state.kind(c)] for c in p), dummy) for p in legal} or {NO_DECISION}
            assert set(np.flatnonzero(mask).tolist()) == expected
            assert np.array_equal(infos[agent]["action_mask"], mask)
            for action, play in infos[agent]["plays"].items():
                assert play in legal
                assert action_of(tuple(KIND_INDEX[state.kind(c)] for c in play), dummy) == action
            checked += 1
    assert checked > 1000


def _unseen_for(state, view) -> dict[str, int]:
    """What determinize may deal anew: every card but those in the view and those played
    in earlier rounds (public events; it keeps their kinds out of the hands)."""
    gone = {}
    for e in events(state):
        if e.get("round", 99) >= view.round:
            continue
        if e["type"] == "reveal":
            gone.update((c["id"], c["card"]) for p in e["plays"] for c in p["cards"])
        elif e["type"] == "last_card":
            gone.update((c["id"], c["card"]) for c in e["cards"])
    shown = [c.card for c in view.hand] + [c.card for t in view.tableaus for c in t]
    return {k: DECK_COUNTS[i] - shown.count(k) - list(gone.values()).count(k) for i, k in enumerate(KINDS)}


@pytest.mark.parametrize(("players", "variant"), FORMATS)
def test_observation_never_depends_on_hidden_cards(players: int, variant: str) -> None:
    """At every step, a second state equal in what one seat may see (its view kept, every
    card it has not seen dealt anew by the engine's determinize) gives that seat the
    same observation vector, while the other hands do differ."""
    rng = random.Random(5)
    compared = differed = 0
    for par, _obs, _infos in _random_games(players, variant, games=4, seed=3):
        state = par.table.state
        if state.over:
            continue
        for seat in range(players):
            view = observe(state, seat)
            memory: SeatMemory = par.table.memories[seat]
            other = determinize(view, rng, unseen=_unseen_for(state, view))
            assert np.array_equal(encode(observe(other, seat), memory), encode(view, memory))
            hidden = [sorted(state.kind(c) for c in h) for s, h in enumerate(state.hands) if s != seat]
            resampled = [sorted(other.kind(c) for c in h) for s, h in enumerate(other.hands) if s != seat]
            differed += hidden != resampled
            compared += 1
    assert compared > 50 and differed > compared // 4


def test_same_seed_and_actions_give_the_same_episode() -> None:
    def episode(seed: int) -> list:
        par = arena.env.parallel_env(players=3, variant="alternate", per_round=True)
        obs, _ = par.reset(seed=seed)
        out = []
        while par.agents:
            actions = {a: int(np.flatnonzero(obs[a]["action_mask"])[-1]) for a in par.agents}
            obs, rewards, _, _, _ = par.step(actions)
            out.append(([o["observation"].tobytes() for o in obs.values()], dict(rewards)))
        return out

    assert episode(9) == episode(9)
    assert episode(9) != episode(10)


@pytest.mark.parametrize("reward", ["margin", "points"])
def test_per_round_rewards_sum_to_the_final_reward(reward: str) -> None:
    totals = []
    for per_round in (False, True):
        par = arena.env.parallel_env(players=4, reward=reward, per_round=per_round)
        obs, _ = par.reset(seed=2)
        total = dict.fromkeys(par.possible_agents, 0.0)
        paid_before_end = False
        while par.agents:
            obs, rewards, _, _, _ = par.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in par.agents})
            for a, r in rewards.items():
                total[a] += r
                paid_before_end |= bool(r) and bool(par.agents)
        assert paid_before_end == per_round
        totals.append(total)
    assert totals[0] == totals[1]


def test_rank_reward_is_one_for_first_and_zero_for_last() -> None:
    par = arena.env.parallel_env(players=3, reward="rank")
    obs, _ = par.reset(seed=4)
    while par.agents:
        obs, rewards, _, _, _ = par.step({a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in par.agents})
    ranks = result(par.table.state).ranks
    assert [rewards[f"player_{s}"] for s in range(3)] == [(3 - r) / 2 for r in ranks]


def test_an_illegal_action_is_a_fallback_or_an_error_naming_the_seat() -> None:
    par = arena.env.parallel_env(players=2, illegal_penalty=1.0)
    obs, _ = par.reset(seed=1)
    bad = int(np.flatnonzero(obs["player_0"]["action_mask"] == 0)[0])
    good = int(np.flatnonzero(obs["player_1"]["action_mask"])[0])
    _, rewards, _, _, infos = par.step({"player_0": bad, "player_1": good})
    assert infos["player_0"]["illegal"] and not infos["player_1"]["illegal"]
    assert rewards["player_0"] == -1.0
    strict = arena.env.parallel_env(players=2, illegal="raise")
    obs, _ = strict.reset(seed=1)
    with pytest.raises(ValueError, match=r"player_0: action \d+ .* is not legal in round 1 turn 1"):
        strict.step({"player_0": bad, "player_1": good})


def test_observation_fields_read_the_view() -> None:
    """A few fields by hand: the own hand's kinds, round and turn, the unseen counts."""
    par = arena.env.parallel_env(players=4)
    obs, infos = par.reset(seed=8)
    view = infos["player_0"]["raw"]
    vec = obs["player_0"]["observation"]
    hand = vec[OFFSETS["hand"] : OFFSETS["hand"] + 12]
    for k, name in enumerate(KINDS):
        assert hand[k] == sum(c.card == name for c in view.hand)
    assert vec[OFFSETS["round"]] == 1 and vec[OFFSETS["turn"]] == 1
    assert vec[OFFSETS["unseen"] : OFFSETS["unseen"] + 12].sum() == 108 - 8
